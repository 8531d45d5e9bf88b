"""Serve a saved predictor over HTTP (FastAPI + uvicorn): ``POST /predict``, ``/health/live``, ``/health/ready``
(``/health``), ``/metrics``, ``/metadata``, a web page at ``/`` and the OpenAPI page at ``/docs``.

What ktrain's FAQ Flask app lacks, and this adds:
* the int8 ONNX backend when the folder has one: no TensorFlow and no pickle in the process (``--backend auto``
  falls back to ktrain's predictor, with a warning, when the int8 file is damaged);
* micro-batching (``batcher``): requests that arrive together share one model call on one worker thread, off
  the event loop; the queue is bounded (429 with Retry-After past ``max_queue`` texts), each request has a
  deadline (503 with Retry-After past ``timeout_ms``), and a failing model call is split so that only the
  request at fault gets an error;
* hot swap (``reloader``): a new save in the folder is loaded beside the old one and swapped in between two
  batches; a request is answered by the model it was checked against; a save that fails to load is retried
  after a back-off or when the folder changes again, while the old model keeps serving;
* operations: liveness apart from readiness (not ready while draining), Prometheus metrics, an optional API key
  and CORS allow-list, ``X-Request-ID``, ``x-queue-time-ms`` and ``x-inference-time-ms`` headers, HEAD wherever
  GET works, and on SIGTERM a drain of the requests in flight (``drain_s``);
* bounds on each connection (``service.protocol``): header size and count (431), time to send the headers and the
  body (408), and a refused body drained so that the client reads its 413;
* every error is JSON with one line (``{"error": "..."}``): 4xx for what a client sent, never a plain-text page.
"""


import asyncio
import logging
from importlib import resources
from typing import Any

from ktrain_recipes import compat  # noqa: F401
from ktrain_recipes_tools.service.answering import Answering
from ktrain_recipes_tools.service import heap
from ktrain_recipes_tools.service.batcher import MicroBatcher
from ktrain_recipes_tools.service.reloader import Reloader
from ktrain_recipes_tools.service.model import LoadedModel, serving_model
from ktrain_recipes_tools.service.settings import ServiceSettings
from ktrain_recipes_tools.service.metrics import ServiceMetrics
from ktrain_recipes_tools.service.classify_api import add_classify_routes
from ktrain_recipes_tools.service.operations import add_operations
from ktrain_recipes_tools.service.schemas import json_error


def create_app(settings: ServiceSettings, model: LoadedModel | None = None, request_ids: bool = True):
    """Build the FastAPI app for ``settings.predictor`` (``model``: an already loaded one; ``request_ids=False``
    behind a proxy that sets X-Request-ID itself)."""
    from fastapi import FastAPI

    from ktrain_recipes_tools.service.guard import Guard
    from ktrain_recipes.versions import __version__

    model = model or serving_model(settings)
    metrics = ServiceMetrics()
    metrics.serve(model.identity)
    batcher = MicroBatcher(model, settings.max_call, settings.max_wait_ms, settings.max_queue,
                           on_call=metrics.model_call, max_tokens=settings.max_call_tokens or None)
    reloader = Reloader(settings, batcher, on_reload=metrics.reload)
    app = FastAPI(title="ktrain-recipes predictor", version=__version__,
                  lifespan=_lifespan(settings, batcher, reloader), docs_url=None, redoc_url=None,
                  description="Classify texts with a saved ktrain-recipes predictor.")
    _add_docs(app)
    app.state.batcher, app.state.reloader, app.state.settings = batcher, reloader, settings
    app.state.api_key = settings.api_key()  # read once: the guard asks for it, and health hides identity behind it
    app.state.metrics, app.state.draining, app.state.predicting = metrics, False, 0  # predicting: in the route
    _add_error_handling(app)
    _add_routes(app, settings, batcher, reloader, metrics)
    if settings.origins():
        from starlette.middleware.cors import CORSMiddleware

        app.add_middleware(CORSMiddleware, allow_origins=settings.origins(), allow_methods=["GET", "POST"],
                           allow_headers=["authorization", "content-type", "x-request-id"],
                           expose_headers=["x-request-id", "x-queue-time-ms", "x-inference-time-ms"])
    app.add_middleware(Guard, max_body_bytes=settings.max_body_bytes, api_key=app.state.api_key, metrics=metrics,
                       max_concurrent=settings.max_concurrent, request_ids=request_ids)
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
        heap.settle()  # the model and the web stack, out of the collector's walks
        yield
        for task in tasks:
            task.cancel()
        batcher.worker.shutdown(wait=False)

    return lifespan


def _add_error_handling(app) -> None:
    """Every error is JSON with one line: 4xx for what a client sent (invalid bodies, HTTP errors), and a 500
    that names the failure without a traceback for anything else."""
    from fastapi import Request
    from fastapi.exceptions import RequestValidationError
    from starlette.exceptions import HTTPException

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError):
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
        shape = ('{"input": ["..."]} or {"input": [["...", "..."]]}' if request.url.path.endswith("/classify")
                 else '{"texts": ["..."]} or {"pairs": [["...", "..."]]}')
        vllm = request.url.path.endswith("/classify")  # vLLM's routes answer in vLLM's error shape
        if first.get("type") == "json_invalid":
            message, status = f"the body is not valid JSON: send {shape}", 400
        else:
            message = str(first.get("msg", "invalid request")).splitlines()[0]
            message, status = f"{where or 'body'}: {message} (send {shape})", 422
        if vllm:  # vLLM answers every refused request 400 (its tests assert it; the openai client: BadRequestError)
            from ktrain_recipes_tools.service.classify_api import vllm_error, vllm_refusal

            field = where.split(".")[0] if where else None
            return vllm_refusal(exc.body, field) or vllm_error(400, message, field)
        return json_error(status, message)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException):
        return json_error(exc.status_code, str(exc.detail), path=request.url.path)

    @app.exception_handler(Exception)
    async def failure(request: Request, exc: Exception):
        logging.getLogger("ktrain_recipes_tools.service.app").warning(
            "%s %s failed: %s: %s", request.method, request.url.path, type(exc).__name__, str(exc)[:200])
        return json_error(500, f"the server failed ({type(exc).__name__}); the request may be retried",
                          path=request.url.path)


def _add_routes(app, settings: ServiceSettings, batcher: MicroBatcher, reloader: Reloader,
                metrics: ServiceMetrics) -> None:
    from fastapi import Response
    from fastapi.responses import HTMLResponse

    from ktrain_recipes_tools.service.schemas import ERRORS, PredictResponse, predict_request
    from ktrain_recipes.inference.calibration import withheld
    from ktrain_recipes.inference.prediction import label_sets
    from ktrain_recipes_tools.inference.truncation import read_fields
    from ktrain_recipes.versions import package_versions

    PredictRequest = predict_request(settings.max_batch)
    steps = Answering(app.state, settings, batcher, metrics)

    @app.post("/predict", response_model=PredictResponse, responses=ERRORS)
    async def predict(body: PredictRequest, response: Response) -> Any:
        """Classify texts (or text pairs): the label and each label's probability, per text, with the tokens the
        model read and whether the text was cut to fit."""
        if body.min_confidence is not None and getattr(batcher.model.classifier, "multilabel", False):
            return json_error(422, "min_confidence is for a predictor of one label per text; this one gives "
                              "several labels per text, each over its threshold chosen on validation: leave it out")
        result = await steps.classify_items(body.texts, body.pairs, body.truncate, response)
        if not isinstance(result, tuple):
            return result
        probs, used, counts = result
        names = used.classifier.classes
        sets = label_sets(used.classifier, probs)  # several labels per text: those over their thresholds
        held = withheld(probs, None if sets is not None else body.min_confidence)
        if body.min_confidence is not None:
            metrics.withheld.inc(int(held.sum()))
        predictions = [{"label": None if held[i] else names[int(row.argmax())],
                        "probabilities": {n: round(float(p), 6) for n, p in zip(names, row)},
                        **fields, **({"labels": sets[i]} if sets else {}),
                        **({"withheld": bool(held[i])} if body.min_confidence is not None else {})}
                       for i, (row, fields) in enumerate(zip(probs, read_fields(counts)))]
        return {"predictions": predictions, "model": used.identity}

    add_classify_routes(app, steps.classify_items, batcher, settings.max_batch)

    add_operations(app, batcher, reloader, metrics, private=app.state.api_key is not None)

    @app.get("/metadata")
    async def metadata() -> dict:
        """Labels, maxlen, backend, package versions, the predictor's validation scores and the limits."""
        current = batcher.model
        return {"labels": current.identity["labels"], "maxlen": current.identity["maxlen"],
                "backend": current.identity["backend"], "pairs": current.pairs, "model": current.identity,
                "multilabel": bool(getattr(current.classifier, "multilabel", False)),
                "thresholds": (getattr(current.classifier, "thresholds", None) or {}).get("per_label"),
                "temperature": getattr(current.classifier, "temperature", None),
                "scores": current.metrics, "versions": package_versions(),
                "limits": {"max_batch": settings.max_batch, "max_call": settings.max_call,
                           "max_call_tokens": settings.max_call_tokens,
                           "max_chars": settings.max_chars,
                           "max_body_bytes": settings.max_body_bytes, "max_wait_ms": settings.max_wait_ms,
                           "max_queue": settings.max_queue, "max_concurrent": settings.max_concurrent,
                           "timeout_ms": settings.timeout_ms}}

    page = resources.files("ktrain_recipes_tools.service").joinpath("page.html").read_text(encoding="utf-8")

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def index() -> str:
        return page


def _add_docs(app) -> None:
    """The OpenAPI page at /docs, with Swagger UI 5's files served from the installed fastapi-offline package
    (FastAPI's default loads them from a CDN, unpinned: a blank page offline)."""
    from importlib.resources import files

    from fastapi.openapi.docs import get_swagger_ui_html
    from starlette.staticfiles import StaticFiles

    app.mount("/docs-assets", StaticFiles(directory=str(files("fastapi_offline") / "static")), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    async def docs():
        return get_swagger_ui_html(openapi_url=app.openapi_url, title=f"{app.title}: API",
                                   swagger_js_url="/docs-assets/swagger-ui-bundle.js",
                                   swagger_css_url="/docs-assets/swagger-ui.css", swagger_favicon_url="data:,")
