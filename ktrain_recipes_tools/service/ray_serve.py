"""``serve --engine ray``: the same FastAPI app as a Ray Serve deployment, one model per replica.

Each replica builds the app of ``service.create_app`` in its own process (``serve.ingress`` with a builder, so the
model is loaded where it runs, never pickled): the same routes, page, errors, limits and metrics, and the same
micro-batching. We keep our batcher rather than ``@serve.batch`` because it gives what ``@serve.batch`` does not:
texts checked before they join a batch, a failing batch split so that only the request at fault fails, a request
answered by the model it was checked against across a hot swap, a queue bounded in texts and a deadline per
request. Ray adds what one process cannot: replicas, on this machine or across a cluster (``--ray-address``),
behind Ray's HTTP proxy.

Overload is answered by each replica's own guard (JSON 429/503 with Retry-After): Ray's per-replica limit is set
above the guard's, and Ray's own router queue is bounded as a last resort. ``/metrics`` answers for the replica
that served the request.
"""

from __future__ import annotations

import signal
import threading
import time

from ktrain_recipes.errors import RecipesError, note
from ktrain_recipes_tools.service.settings import ServiceSettings, url_host

APP_NAME = "ktrain_recipes"
RAY_GRACE_S = 2.0  # before the deployment shuts down on SIGTERM (see serve_with_ray)


def build_deployment(settings: ServiceSettings):
    """The Ray Serve application: ``settings.replicas`` replicas of the service's FastAPI app."""
    from ray import serve

    def build_app():  # runs in each replica: the model is loaded there
        from ktrain_recipes_tools.service.app import create_app

        return create_app(settings, request_ids=False)  # Ray's proxy echoes or makes X-Request-ID

    ingress = serve.ingress(build_app)()
    deployment = serve.deployment(
        ingress, name="predictor", num_replicas=settings.replicas,
        # the replica's guard answers overload (JSON 429 with Retry-After) before Ray's limit is reached
        max_ongoing_requests=2 * settings.max_concurrent, max_queued_requests=settings.max_concurrent,
        graceful_shutdown_timeout_s=max(settings.drain_s, 1.0), graceful_shutdown_wait_loop_s=0.5,
        health_check_period_s=2.0, ray_actor_options={"num_cpus": settings.threads})
    return deployment.bind()


def serve_with_ray(settings: ServiceSettings, host: str, port: int) -> None:
    """Start (or join, with ``settings.ray_address``) Ray, deploy the replicas, serve until SIGTERM or Ctrl-C, then
    shut the deployment down, letting requests in flight finish within ``settings.drain_s``."""
    import ray
    from ray import serve

    from ktrain_recipes_tools.inference.ray_scoring import check_address
    from ktrain_recipes_tools.service import server
    from ktrain_recipes.predictor.saved import read_predictor

    check_address(settings.ray_address)
    server.bind(host, port).close()  # a port in use or out of range, a foreign host: one line, before Ray starts
    server.warn_if_open(settings, host)
    start = time.perf_counter()
    # refuse a bad folder here, once, by the folder reader's rule (the replicas load the model; the driver only
    # checks what they will load, and that the backend asked for is there)
    saved = read_predictor(settings.predictor)
    backend = ("int8" if "int8" in saved.backends else "ktrain") if settings.backend == "auto" else settings.backend
    if backend not in saved.backends:
        raise RecipesError(f"'{settings.predictor}' has no {backend} copy (it has: {', '.join(saved.backends)}): "
                           f"run `ktrain-recipes export --predictor {settings.predictor}` first, or choose "
                           "--backend ktrain")
    if not settings.ray_address:
        import os

        cpus = os.cpu_count() or 2
        if settings.replicas * settings.threads > cpus:
            raise RecipesError(f"--replicas {settings.replicas} x --threads {settings.threads} needs "
                               f"{settings.replicas * settings.threads} CPUs and this machine has {cpus}: lower "
                               "them, or join a cluster with --ray-address")
    ray.init(address=settings.ray_address, include_dashboard=False, log_to_driver=False, configure_logging=False,
             logging_level="ERROR")
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    try:
        serve.start(http_options={"host": host, "port": port}, logging_config={"log_level": "WARNING",
                                                                               "enable_access_log": False})
        serve.run(build_deployment(settings), name=APP_NAME, route_prefix="/", blocking=False)
        note(f"serving '{settings.predictor}' ({backend}, labels "
             f"{', '.join(saved.label_names)}) with Ray Serve, {settings.replicas} "
             f"replica{'s' * (settings.replicas > 1)}, ready in {time.perf_counter() - start:.1f} s, on "
             f"http://{url_host(host)}:{port}/  (API: /docs)")
        while not stop.wait(0.5):
            pass
        note("stopping: letting the requests in flight finish")
        # Ray's proxy drops the connections it holds when the deployment shuts down: the requests already sent get
        # a moment to be answered first (a batch takes milliseconds; requests that still arrive are answered too)
        time.sleep(min(settings.drain_s, RAY_GRACE_S) if settings.drain_s else RAY_GRACE_S)
    finally:
        try:
            serve.shutdown()
        finally:
            ray.shutdown()
