"""Run the service: a listening socket (or a one-line error), a warning when it answers beyond this machine with no
API key, and uvicorn with the connection bounds (``protocol``) and a drain on SIGTERM or Ctrl-C. ``app`` builds what
runs; ``ray_serve`` runs the same app on Ray Serve and uses ``bind`` and ``warn_if_open`` too."""

import asyncio
import logging
import math
import time

from ktrain_recipes.errors import RecipesError, note
from ktrain_recipes.service.app import create_app
from ktrain_recipes.service.model import load_model
from ktrain_recipes.service.settings import DEFAULT_HOST, DEFAULT_PORT, ServiceSettings, url_host

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


def bind(host: str, port: int):
    """A listening socket on ``host``:``port``, or a one-line error (a port out of range or in use, a host that
    does not resolve or is not this machine's)."""
    import socket

    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise RecipesError(f"--port must be from 0 to 65535, got {port}")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise RecipesError(f"--host {host!r} does not resolve ({exc.strerror}): give an address of this machine, "
                           "e.g. 127.0.0.1") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise RecipesError(f"cannot listen on {host}:{port} ({exc.strerror}): choose another --port, or an address "
                           "of this machine for --host") from None
    return sock


def warn_if_open(settings: ServiceSettings, host: str) -> None:
    """Warn when the service will answer beyond this machine with no API key (either engine)."""
    if host not in LOCAL_HOSTS and not settings.api_key():
        note(f"warning: listening on {host} without an API key: anyone who can reach the port can use it "
             "(--api-key-file, or a proxy that authenticates)")


# after --drain-s, the model calls under way finish (milliseconds each) before uvicorn cancels what is left
DRAIN_MARGIN_S = 2.0


def serve(settings: ServiceSettings, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> None:
    """Load the predictor and serve it with uvicorn until SIGTERM or Ctrl-C, then drain: stop accepting, turn
    not-ready, answer what is in flight (up to ``settings.drain_s``) and exit."""
    import uvicorn

    from ktrain_recipes.service.protocol import ConnectionLimits, limited_protocol

    sock = bind(host, port)
    warn_if_open(settings, host)
    start = time.perf_counter()
    model = load_model(settings.predictor, settings.backend, settings.threads, settings.max_call)
    app = create_app(settings, model)
    port = sock.getsockname()[1]
    note(f"serving '{settings.predictor}' ({model.identity['backend']}, labels {', '.join(model.classifier.classes)}"
         f", loaded in {time.perf_counter() - start:.1f} s) on http://{url_host(host)}:{port}/  (API: /docs)")
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s")

    class DrainingServer(uvicorn.Server):
        """The first SIGTERM or Ctrl-C starts a drain: the socket stays open, so that readiness probes read 503
        while the requests in flight are answered; once none is left, or at --drain-s, uvicorn's own shutdown
        runs. A second signal stops at once.

        /predict requests that still arrive meanwhile (a balancer takes a moment to notice) are answered too."""
        exit_signal = None  # (signal, frame) of the first signal
        drain_until = None  # event-loop time; inf for --drain-s 0 (no limit)

        def handle_exit(self, sig, frame):
            if self.exit_signal is not None:  # a second signal: stop now, without waiting for anyone
                asyncio.get_event_loop().call_soon_threadsafe(self.stop_now)
                return None
            self.exit_signal = (sig, frame)
            app.state.draining = True  # /health/ready answers 503 from now on

        def stop_now(self) -> None:
            """The second signal: what waits for the model, or is in its call, is answered JSON 503 at once; a
            moment later (for those answers to be written) every request still open is cancelled, which the guard
            answers JSON 503 too (``service.guard``); then uvicorn's shutdown runs as usual, lifespan included, so
            that nothing is left to be cancelled into a traceback when the process ends."""
            loop = asyncio.get_running_loop()
            app.state.batcher.shed(calling=True)
            self.config.timeout_graceful_shutdown = DRAIN_MARGIN_S

            def cancel_the_rest():
                for task in list(self.server_state.tasks):
                    task.cancel()
                if not self.should_exit:
                    super(DrainingServer, self).handle_exit(*self.exit_signal)
                loop.call_later(0.2, close_connections)

            def close_connections():  # once those answers are out: no connection keeps the shutdown waiting
                for connection in list(self.server_state.connections):
                    transport = getattr(connection, "transport", None)
                    if transport is not None:
                        transport.close()

            loop.call_later(0.2, cancel_the_rest)

        async def on_tick(self, counter: int) -> bool:
            if self.exit_signal is not None and not self.should_exit:
                loop = asyncio.get_running_loop()
                if self.drain_until is None:
                    self.drain_until = loop.time() + settings.drain_s if settings.drain_s else math.inf
                    if settings.drain_s:
                        # at the deadline, what still waits for a model call gets JSON 503 (uvicorn's own
                        # deadline, a little later, would cancel it into a plain-text 500)
                        loop.call_later(settings.drain_s, app.state.batcher.shed)
                if not app.state.predicting or loop.time() >= self.drain_until:
                    left = self.drain_until - loop.time()
                    # what is left (bodies still arriving, answers being written) gets the rest of the drain
                    self.config.timeout_graceful_shutdown = (None if math.isinf(left)
                                                             else max(left, 0) + DRAIN_MARGIN_S)
                    super().handle_exit(*self.exit_signal)
            return await super().on_tick(counter)

    limits = ConnectionLimits(settings.max_header_bytes, settings.max_headers, settings.header_timeout_s,
                              settings.body_timeout_s)
    protocol = limited_protocol(limits, app.state.metrics.refused)  # refusals before any route are counted too
    config = uvicorn.Config(app, log_level="warning", access_log=False, log_config=None, http=protocol)
    DrainingServer(config).run(sockets=[sock])
