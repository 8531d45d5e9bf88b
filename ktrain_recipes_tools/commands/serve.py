"""``ktrain-recipes serve``: serve a saved predictor over HTTP."""

from ktrain_recipes_tools.commands.flags import add_flags, settings_from_args
from ktrain_recipes_tools.service.settings import DEFAULT_HOST, DEFAULT_PORT, ServiceSettings

HELP = "serve a saved predictor over HTTP: /predict, /health, /metrics, a web page (one process, or Ray Serve)"


def add_arguments(p) -> None:
    add_flags(p, ServiceSettings)
    p.add_argument("--host", default=DEFAULT_HOST, help="address to listen on (another than this machine's own "
                                                       "without an API key: a warning is printed)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help="port to listen on")


def uses_tensorflow(args) -> bool:
    return args.backend == "ktrain"


def run(args) -> None:
    settings = settings_from_args(args, ServiceSettings)
    if settings.engine == "ray":
        from ktrain_recipes_tools.service.ray_serve import serve_with_ray

        serve_with_ray(settings, host=args.host, port=args.port)
    else:
        from ktrain_recipes_tools.service.server import serve

        serve(settings, host=args.host, port=args.port)
