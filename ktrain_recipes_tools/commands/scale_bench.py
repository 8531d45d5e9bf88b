"""``ktrain-recipes scale-bench``: a large corpus with the int8 model, in memory vs streaming vs Ray."""

HELP = "a large corpus with the int8 model: in memory vs streaming vs Ray (local)"


def add_arguments(p) -> None:
    p.add_argument("--predictor", required=True, help="a predictor folder with its int8 ONNX model (see export)")
    p.add_argument("--data", help="emotion's folder (the corpus repeats its texts; default: $EMOTION_DATA)")
    p.add_argument("--texts", type=int, default=1_000_000, help="texts in the streamed corpus")
    p.add_argument("--in-memory", type=int, default=100_000, help="texts scored in memory (the first ones)")
    p.add_argument("--ray-texts", type=int, default=100_000, help="texts scored by Ray in local mode (0: skip)")
    p.add_argument("--work", default="runs/scale",
                   help="a new or empty folder (or one scale-bench made) for the corpus and the outputs")
    p.add_argument("--out", default="docs", help="where scale_bench.json goes")


def uses_tensorflow(args) -> bool:
    return False


def run(args) -> None:
    from ktrain_recipes.config import check_limit

    check_limit(args.texts, "--texts")
    check_limit(args.in_memory, "--in-memory")
    if args.ray_texts != 0:  # 0 skips Ray
        check_limit(args.ray_texts, "--ray-texts")
        import importlib.util

        if importlib.util.find_spec("ray") is None:  # said before the work, with the extra (battery v7, X5)
            raise ModuleNotFoundError("No module named 'ray'", name="ray")
    from ktrain_recipes_tools.studies.scale_bench import run_scale_bench

    run_scale_bench(args.predictor, args.data, args.texts, args.in_memory, args.ray_texts, args.work, args.out)
