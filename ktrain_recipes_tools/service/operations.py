"""What operators ask of a model server: liveness, readiness (503 while draining) and Prometheus metrics."""

from typing import Any

from ktrain_recipes_tools.service.batcher import MicroBatcher
from ktrain_recipes_tools.service.metrics import ServiceMetrics
from ktrain_recipes_tools.service.reloader import Reloader
from ktrain_recipes_tools.service.schemas import json_error


def add_operations(app, batcher: MicroBatcher, reloader: Reloader, metrics: ServiceMetrics,
                   private: bool = False) -> None:
    """Liveness, readiness (503 while draining) and Prometheus metrics (HEAD: see ``service.guard``).

    ``private`` (a service with an API key): the health routes, which answer without the key, say whether the
    service is ready and nothing of what it serves (its folder, labels, save and digest are /metadata's, behind the
    key)."""
    from fastapi import Response

    busy = {"Retry-After": "1"}

    def serving() -> dict:
        return {} if private else {"model": batcher.model.identity}

    @app.get("/health/live")
    async def live() -> dict:
        """Liveness: the process answers."""
        return {"status": "live"}

    @app.get("/health/ready")
    async def ready() -> Any:
        """Readiness: a model is loaded and the service is not draining (503 otherwise)."""
        if app.state.draining:
            return json_error(503, "draining: the service is shutting down", busy)
        return {"status": "ready", **serving()}

    @app.get("/health")
    async def health() -> Any:
        """Readiness, and which save is serving (kept for clients of earlier versions)."""
        if app.state.draining:
            return json_error(503, "draining: the service is shutting down", busy)
        return {"status": "ok", **serving(), "swaps": reloader.swaps}

    @app.get("/metrics", include_in_schema=False)
    async def prometheus() -> Response:
        from prometheus_client import CONTENT_TYPE_LATEST

        metrics.queue_depth.set(batcher.waiting)
        metrics.serve(batcher.model.identity)
        return Response(metrics.exposition(), media_type=CONTENT_TYPE_LATEST)
