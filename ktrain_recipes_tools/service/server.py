"""Run the service: a listening socket (or a one-line error), a warning when it answers beyond this machine with no
API key, and uvicorn with the connection bounds (``protocol``) and a drain on SIGTERM or Ctrl-C. ``app`` builds what
runs; ``ray_serve`` runs the same app on Ray Serve and uses ``bind`` and ``warn_if_open`` too."""

import logging
import time

from ktrain_recipes.errors import RecipesError, note
from ktrain_recipes_tools.service.app import create_app
from ktrain_recipes_tools.service.model import serving_model
from ktrain_recipes_tools.service.settings import DEFAULT_HOST, DEFAULT_PORT, ServiceSettings, url_host

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


def serve(settings: ServiceSettings, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> None:
    """Load the predictor and serve it with uvicorn until SIGTERM or Ctrl-C, then drain: stop accepting, turn
    not-ready, answer what is in flight (up to ``settings.drain_s``) and exit."""
    import uvicorn

    from ktrain_recipes_tools.service.drain import DrainingServer
    from ktrain_recipes_tools.service.protocol import ConnectionLimits, limited_protocol

    sock = bind(host, port)
    warn_if_open(settings, host)
    start = time.perf_counter()
    model = serving_model(settings)
    app = create_app(settings, model)
    port = sock.getsockname()[1]
    note(f"serving '{settings.predictor}' ({model.identity['backend']}, labels {', '.join(model.classifier.classes)}"
         f", loaded in {time.perf_counter() - start:.1f} s) on http://{url_host(host)}:{port}/  (API: /docs)")
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s")

    limits = ConnectionLimits(settings.max_header_bytes, settings.max_headers, settings.header_timeout_s,
                              settings.body_timeout_s)
    protocol = limited_protocol(limits, app.state.metrics.refused)  # refusals before any route are counted too
    config = uvicorn.Config(app, log_level="warning", access_log=False, log_config=None, http=protocol,
                            timeout_keep_alive=settings.keep_alive_s)
    DrainingServer(config, app, settings.drain_s).run(sockets=[sock])
