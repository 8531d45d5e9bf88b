"""``ktrain-recipes serve-bench``: requests/s, latency and memory of the service against ktrain's FAQ app."""

HELP = "requests/s, latency and memory: ktrain's FAQ Flask app vs our service (ktrain, int8, Ray Serve, overload)"


def add_arguments(p) -> None:
    from ktrain_recipes_tools.studies.serve_bench import SERVERS, TEXT_SETS

    p.add_argument("--predictor", required=True, help="a predictor folder with its int8 ONNX model (see export)")
    p.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32, 64], help="concurrent clients, per level")
    p.add_argument("--seconds", type=float, default=20.0, help="how long each level runs")
    p.add_argument("--out", default="docs", help="where serve_bench.json and serve_bench.md go")
    p.add_argument("--assets", default="assets", help="where the chart serve_bench.png goes")
    p.add_argument("--servers", nargs="+", choices=list(SERVERS), default=list(SERVERS),
                   help="which servers to bench (default: all)")
    p.add_argument("--texts", choices=list(TEXT_SETS), default="short",
                   help="; ".join(f"{k}: {v}" for k, v in TEXT_SETS.items()))


def uses_tensorflow(args) -> bool:
    return False


def run(args) -> None:
    import math

    from ktrain_recipes.errors import RecipesError
    from ktrain_recipes.config import check_whole

    if not (math.isfinite(args.seconds) and args.seconds > 0):
        raise RecipesError(f"--seconds must be a number of seconds above 0, got {args.seconds}")
    for level in args.concurrency:
        check_whole(level, "--concurrency")
    from ktrain_recipes_tools.studies.serve_bench import run_serve_bench

    run_serve_bench(args.predictor, args.out, args.assets, args.concurrency, args.seconds, tuple(args.servers),
                    args.texts)
