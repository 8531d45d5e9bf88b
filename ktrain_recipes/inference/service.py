"""Serve a saved predictor over HTTP (FastAPI + uvicorn): ``POST /predict``, ``GET /health``, ``GET /metadata``,
a web page at ``/`` and the OpenAPI page at ``/docs``.

What ktrain's FAQ Flask app lacks, and this adds:
* the int8 ONNX backend when the folder has one: no TensorFlow and no pickle in the process;
* micro-batching: requests that arrive together are joined into one model call (at most ``max_batch`` texts,
  waiting at most ``max_wait_ms`` for company), run on one worker thread, off the event loop. One thread
  also means the Rust tokenizer is never used from two threads at once ("Already borrowed");
* hot swap: when a new predictor is saved into the folder, it is loaded beside the old one and swapped in
  between two batches; a folder that fails its manifest check is logged and the old model keeps serving;
* bad input gets a 4xx with a one-line JSON error (``{"error": "..."}``), never a 5xx.
"""


import asyncio
import logging
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

from ktrain_recipes import compat  # noqa: F401
from ktrain_recipes.errors import RecipesError, note
from ktrain_recipes.inference.prediction import _is_blank, as_classifier
from ktrain_recipes.inference.saving import ONNX_INT8, manifest_digest, read_manifest, read_metrics

log = logging.getLogger("ktrain_recipes.inference.service")
BACKENDS = ("auto", "int8", "ktrain")
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


@dataclass
class ServiceSettings:
    """How the service runs (the ``serve`` command's flags)."""

    predictor: str = field(metadata={"help": "a predictor folder written by train"})
    backend: str = field(default="auto", metadata={"help": "int8: the exported int8 ONNX model (no TensorFlow, no "
                                                   "pickle); ktrain: ktrain's predictor; auto: int8 when the "
                                                   "folder has it"})
    max_batch: int = field(default=64, metadata={"help": "most texts in one request, and in one model call"})
    max_wait_ms: float = field(default=0.0, metadata={"help": "how long a batch waits for more requests when the "
                                                      "model is idle (while it is busy, requests gather anyway)"})
    threads: int = field(default=max(1, (os.cpu_count() or 2) - 1),
                         metadata={"help": "the int8 model's threads (default: all cores but one, which the HTTP "
                                           "side keeps)"})
    max_chars: int = field(default=5000, metadata={"help": "longest text accepted, in characters"})
    max_body_bytes: int = field(default=1_000_000, metadata={"help": "largest request body accepted"})
    reload_interval: float = field(default=1.0, metadata={"help": "seconds between checks for a new save in the "
                                                          "folder (0: never reload)"})

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise RecipesError(f"--backend must be one of {', '.join(BACKENDS)}, got {self.backend!r}")
        for name in ("max_batch", "max_chars", "max_body_bytes", "threads"):
            if getattr(self, name) < 1:
                raise RecipesError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(self, name)}")
        if self.max_wait_ms < 0 or self.reload_interval < 0:
            raise RecipesError("--max-wait-ms and --reload-interval must be 0 or more")


@dataclass
class LoadedModel:
    """One loaded predictor: the classifier, what names it, and its manifest digest (to notice a new save)."""

    classifier: Any
    identity: dict
    pairs: bool | None
    digest: str
    metrics: dict


def load_model(folder: str | Path, backend: str = "auto", threads: int | None = None) -> LoadedModel:
    """Load a saved predictor for serving: the int8 ONNX copy (``int8``), ktrain's (``ktrain``), or with
    ``auto`` the int8 copy when the folder lists one."""
    folder = Path(folder)
    if backend == "auto":
        backend = "int8" if ONNX_INT8 in read_manifest(folder)["files"] else "ktrain"
    if backend == "int8":
        from ktrain_recipes.inference.onnx_inference import load_int8_predictor

        model = load_int8_predictor(folder, threads=threads)
        identity, pairs = model.identity, model.pairs
    else:
        from ktrain_recipes.inference.loading import load_checked_predictor, load_consistent
        from ktrain_recipes.inference.onnx_inference import identity as make_identity

        def load(folder: Path, manifest: dict):
            return load_checked_predictor(folder), make_identity(folder, manifest, "ktrain"), manifest.get("pairs")

        predictor, identity, pairs = load_consistent(folder, load)
        model = as_classifier(predictor)
    return LoadedModel(model, identity, pairs, identity["manifest_sha256"], _read_scores(folder))


def _read_scores(folder: Path) -> dict:
    try:
        metrics = read_metrics(folder)
    except RecipesError:
        return {}
    return {k: metrics.get(k) for k in ("accuracy", "macro_f1", "n", "split", "exact_match") if k in metrics}


class MicroBatcher:
    """Joins the texts of requests that arrive together into one model call, on one worker thread."""

    def __init__(self, model: LoadedModel, max_batch: int, max_wait_ms: float):
        self.model, self.max_batch, self.max_wait = model, max_batch, max_wait_ms / 1000
        self.queue: asyncio.Queue | None = None
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="model")
        self.calls = 0

    async def predict(self, texts: list) -> tuple[Any, LoadedModel]:
        """Probabilities for ``texts`` (texts x labels) and the model that gave them."""
        future = asyncio.get_running_loop().create_future()
        await self.queue.put((texts, future))
        return await future

    async def run(self) -> None:
        self.queue = asyncio.Queue()
        loop = asyncio.get_running_loop()
        while True:
            # requests that arrived while the model was busy are all here: take them (up to max_batch); when
            # the model was idle, wait at most max_wait for company
            batch = [await self.queue.get()]
            size = len(batch[0][0])
            deadline = loop.time() + self.max_wait
            while size < self.max_batch:
                try:
                    item = self.queue.get_nowait()
                except asyncio.QueueEmpty:
                    if len(batch) > 1 or loop.time() >= deadline:
                        break
                    await asyncio.sleep(self.max_wait / 4)
                    continue
                batch.append(item)
                size += len(item[0])
            model = self.model  # a hot swap changes self.model between batches, never within one
            texts = [t for texts, _ in batch for t in texts]
            try:
                probs = await loop.run_in_executor(self.worker, model.classifier.predict_proba, texts)
            except Exception as exc:  # noqa: BLE001  (the waiting requests get the error, the loop goes on)
                for _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            self.calls += 1
            start = 0
            for texts, future in batch:
                if not future.done():
                    future.set_result((probs[start:start + len(texts)], model))
                start += len(texts)


class Reloader:
    """Watches the folder's manifest; loads a new save beside the serving one and swaps it in."""

    def __init__(self, settings: ServiceSettings, batcher: MicroBatcher):
        self.settings, self.batcher = settings, batcher
        self.failed_digest: str | None = None
        self.swaps = 0

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(self.settings.reload_interval)
            digest = manifest_digest(self.settings.predictor)
            if digest is None or digest in (self.batcher.model.digest, self.failed_digest):
                continue  # no change, mid-swap, or a save that already failed to load
            try:
                model = await loop.run_in_executor(None, load_model, self.settings.predictor, self.settings.backend,
                                                   self.settings.threads)
            except Exception as exc:  # noqa: BLE001  (a bad save must never stop the service)
                self.failed_digest = digest
                log.warning("not reloading '%s' (the old model keeps serving): %s", self.settings.predictor, exc)
                continue
            self.batcher.model = model
            self.swaps += 1
            log.warning("reloaded '%s': now serving save %s", self.settings.predictor, model.identity["save_id"])


def _error(status: int, message: str):
    from fastapi.responses import JSONResponse

    return JSONResponse({"error": message}, status_code=status)


def create_app(settings: ServiceSettings, model: LoadedModel | None = None):
    """Build the FastAPI app for ``settings.predictor`` (``model``: an already loaded one)."""
    from contextlib import asynccontextmanager

    from fastapi import FastAPI, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import HTMLResponse
    from pydantic import BaseModel, ConfigDict, Field
    from starlette.exceptions import HTTPException

    from ktrain_recipes.versions import __version__
    from ktrain_recipes.versions import package_versions

    model = model or load_model(settings.predictor, settings.backend, settings.threads)
    batcher = MicroBatcher(model, settings.max_batch, settings.max_wait_ms)
    reloader = Reloader(settings, batcher)

    @asynccontextmanager
    async def lifespan(app):
        tasks = [asyncio.create_task(batcher.run())]
        if settings.reload_interval:
            tasks.append(asyncio.create_task(reloader.run()))
        while batcher.queue is None:
            await asyncio.sleep(0)
        yield
        for task in tasks:
            task.cancel()
        batcher.worker.shutdown(wait=False)

    app = FastAPI(title="ktrain-recipes predictor", version=__version__, lifespan=lifespan,
                  description="Classify texts with a saved ktrain-recipes predictor.")
    app.state.batcher, app.state.reloader, app.state.settings = batcher, reloader, settings

    class PredictRequest(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True)
        texts: list[str] | None = Field(None, description="texts to classify (single-text predictors)",
                                        max_length=settings.max_batch)
        pairs: list[Annotated[list[str], Field(min_length=2, max_length=2)]] | None = Field(
            None, description="[first, second] text pairs (sentence-pair predictors)", max_length=settings.max_batch)

    class Prediction(BaseModel):
        label: str
        probabilities: dict[str, float]

    class PredictResponse(BaseModel):
        predictions: list[Prediction]
        model: dict

    class ErrorResponse(BaseModel):
        error: str

    errors = {400: {"model": ErrorResponse}, 413: {"model": ErrorResponse}, 422: {"model": ErrorResponse}}

    @app.middleware("http")
    async def limit_body(request: Request, call_next):
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > settings.max_body_bytes):
            return _error(413, f"the request body is over {settings.max_body_bytes} bytes: send fewer or shorter "
                               "texts per request")
        return await call_next(request)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError):
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
        if first.get("type") == "json_invalid":
            return _error(400, "the body is not valid JSON: send {\"texts\": [\"...\"]}")
        message = str(first.get("msg", "invalid request")).splitlines()[0]
        return _error(422, f"{where or 'body'}: {message} (send {{\"texts\": [\"...\"]}} or "
                           f"{{\"pairs\": [[\"...\", \"...\"]]}})")

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException):
        return _error(exc.status_code, str(exc.detail))

    @app.post("/predict", response_model=PredictResponse, responses=errors)
    async def predict(body: PredictRequest) -> Any:
        """Classify texts (or text pairs): the label and each label's probability, per text."""
        current = batcher.model
        if (body.texts is None) == (body.pairs is None):
            return _error(422, "send exactly one of \"texts\" (a list of strings) or \"pairs\" (a list of "
                               "[first, second])")
        items = body.texts if body.texts is not None else [tuple(p) for p in body.pairs]
        kind = "texts" if body.texts is not None else "pairs"
        if not items:
            return _error(422, f"\"{kind}\" is empty: send at least one")
        if current.pairs is True and kind == "texts":
            return _error(422, "this predictor classifies sentence pairs: send \"pairs\": [[first, second], ...]")
        if current.pairs is False and kind == "pairs":
            return _error(422, "this predictor classifies single texts: send \"texts\": [\"...\", ...]")
        for i, item in enumerate(items):
            for part in item if kind == "pairs" else (item,):
                if len(part) > settings.max_chars:
                    return _error(422, f"{kind}[{i}] is {len(part)} characters, over the limit of "
                                       f"{settings.max_chars}: shorten it")
                if _is_blank(part):
                    return _error(422, f"{kind}[{i}] is empty or only whitespace: there is nothing to classify")
        probs, used = await batcher.predict(items)
        names = used.classifier.classes
        predictions = [{"label": names[int(row.argmax())],
                        "probabilities": {n: round(float(p), 6) for n, p in zip(names, row)}} for row in probs]
        return {"predictions": predictions, "model": used.identity}

    @app.get("/health")
    async def health() -> dict:
        """Liveness, and which save is serving."""
        return {"status": "ok", "model": batcher.model.identity, "swaps": reloader.swaps}

    @app.get("/metadata")
    async def metadata() -> dict:
        """Labels, maxlen, backend, package versions, the predictor's validation scores and the limits."""
        current = batcher.model
        return {"labels": current.identity["labels"], "maxlen": current.identity["maxlen"],
                "backend": current.identity["backend"], "pairs": current.pairs, "model": current.identity,
                "scores": current.metrics, "versions": package_versions(),
                "limits": {"max_batch": settings.max_batch, "max_chars": settings.max_chars,
                           "max_body_bytes": settings.max_body_bytes, "max_wait_ms": settings.max_wait_ms}}

    page = resources.files("ktrain_recipes.inference").joinpath("page.html").read_text(encoding="utf-8")

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def index() -> str:
        return page

    return app


def serve(settings: ServiceSettings, host: str = "127.0.0.1", port: int = 8000) -> None:
    """Load the predictor and serve it with uvicorn until interrupted."""
    import uvicorn

    if host not in LOCAL_HOSTS:
        note(f"warning: listening on {host}: this service has no authentication; anyone who can reach the port "
              "can use it (put it behind a proxy that authenticates)")
    start = time.perf_counter()
    model = load_model(settings.predictor, settings.backend, settings.threads)
    note(f"serving '{settings.predictor}' ({model.identity['backend']}, labels {', '.join(model.classifier.classes)}"
          f", loaded in {time.perf_counter() - start:.1f} s) on http://{host}:{port}/  (API: /docs)")
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s")
    uvicorn.run(create_app(settings, model), host=host, port=port, log_level="warning", access_log=False)
