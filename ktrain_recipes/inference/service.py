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
import time
from importlib import resources
from typing import Any

from ktrain_recipes import compat  # noqa: F401
from ktrain_recipes.errors import note
from ktrain_recipes.inference.batcher import MicroBatcher
from ktrain_recipes.inference.reloader import Reloader
from ktrain_recipes.inference.service_model import LoadedModel, load_model
from ktrain_recipes.inference.service_settings import ServiceSettings
from ktrain_recipes.inference.text_rules import is_blank

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


def _error(status: int, message: str):
    from fastapi.responses import JSONResponse

    return JSONResponse({"error": message}, status_code=status)


def create_app(settings: ServiceSettings, model: LoadedModel | None = None):
    """Build the FastAPI app for ``settings.predictor`` (``model``: an already loaded one)."""
    from fastapi import FastAPI

    from ktrain_recipes.versions import __version__

    model = model or load_model(settings.predictor, settings.backend, settings.threads)
    batcher = MicroBatcher(model, settings.max_batch, settings.max_wait_ms)
    reloader = Reloader(settings, batcher)
    app = FastAPI(title="ktrain-recipes predictor", version=__version__,
                  lifespan=_lifespan(settings, batcher, reloader),
                  description="Classify texts with a saved ktrain-recipes predictor.")
    app.state.batcher, app.state.reloader, app.state.settings = batcher, reloader, settings
    _add_error_handling(app, settings)
    _add_routes(app, settings, batcher, reloader)
    return app


def _lifespan(settings: ServiceSettings, batcher: MicroBatcher, reloader: Reloader):
    """Start the batcher (and the reloader) with the app; stop them with it."""
    from contextlib import asynccontextmanager

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

    return lifespan


def _add_error_handling(app, settings: ServiceSettings) -> None:
    """Every error a client causes is a JSON 4xx with one line: the body limit, invalid bodies, HTTP errors."""
    from fastapi import Request
    from fastapi.exceptions import RequestValidationError
    from starlette.exceptions import HTTPException

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


def check_request(texts: list | None, pairs: list | None, current: LoadedModel, max_chars: int):
    """The items of a /predict body, or the one-line error (a string) that refuses it."""
    if (texts is None) == (pairs is None):
        return "send exactly one of \"texts\" (a list of strings) or \"pairs\" (a list of [first, second])"
    items = texts if texts is not None else [tuple(p) for p in pairs]
    kind = "texts" if texts is not None else "pairs"
    if not items:
        return f"\"{kind}\" is empty: send at least one"
    if current.pairs is True and kind == "texts":
        return "this predictor classifies sentence pairs: send \"pairs\": [[first, second], ...]"
    if current.pairs is False and kind == "pairs":
        return "this predictor classifies single texts: send \"texts\": [\"...\", ...]"
    for i, item in enumerate(items):
        for part in item if kind == "pairs" else (item,):
            if len(part) > max_chars:
                return f"{kind}[{i}] is {len(part)} characters, over the limit of {max_chars}: shorten it"
            if is_blank(part):
                return f"{kind}[{i}] is empty or only whitespace: there is nothing to classify"
    return items


def _add_routes(app, settings: ServiceSettings, batcher: MicroBatcher, reloader: Reloader) -> None:
    from fastapi.responses import HTMLResponse

    from ktrain_recipes.inference.service_schemas import ERRORS, PredictResponse, predict_request
    from ktrain_recipes.versions import package_versions

    PredictRequest = predict_request(settings.max_batch)

    @app.post("/predict", response_model=PredictResponse, responses=ERRORS)
    async def predict(body: PredictRequest) -> Any:
        """Classify texts (or text pairs): the label and each label's probability, per text."""
        items = check_request(body.texts, body.pairs, batcher.model, settings.max_chars)
        if isinstance(items, str):
            return _error(422, items)
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
