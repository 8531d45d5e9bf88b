"""``python -m ktrain_recipes`` / ``ktrain-recipes``: each command parses flags and calls one library function."""

from __future__ import annotations

import argparse
import json
import sys

from ktrain_recipes import compat  # noqa: F401
from ktrain_recipes.config import GROUPS, RecipeConfig, config_fields, parse_limit
from ktrain_recipes.errors import RecipesError
from ktrain_recipes.studies.ethics import TASKS as ETHICS_TASKS
from ktrain_recipes.inference.service import ServiceSettings


def _flag_type(parse):
    """Wrap a RecipeConfig parser so argparse prints its message as a usage error."""
    def convert(value: str):
        try:
            return parse(value)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = getattr(parse, "__name__", "value")
    return convert


def add_config_flags(parser: argparse.ArgumentParser, groups: tuple[str, ...], exclude: tuple[str, ...] = (),
                     **defaults) -> None:
    """Add one flag per field of RecipeConfig's settings ``groups`` (``--batch-size`` for ``batch_size``), less
    ``exclude``, with its help and default; the command's config is then built from these flags alone."""
    names = []
    for f in config_fields(groups):
        if f.name in exclude:
            continue
        names.append(f.name)
        flag, default = "--" + f.name.replace("_", "-"), defaults.get(f.name, f.default)
        if f.type in ("bool", bool):
            if default:
                parser.add_argument("--no-" + flag[2:], dest=f.name, action="store_false", help=f.metadata["help"])
            else:
                parser.add_argument(flag, dest=f.name, action="store_true", help=f.metadata["help"])
            continue
        kind = _flag_type(f.metadata["parse"]) if f.metadata.get("parse") else None
        parser.add_argument(flag, dest=f.name, type=kind, default=default, help=f.metadata["help"],
                            required=f.name == "out" and "out" not in defaults)
    parser.set_defaults(config_flags=tuple(names))


def config_from_args(args: argparse.Namespace, **fixed) -> RecipeConfig:
    """Build a RecipeConfig from the command's own settings flags (``add_config_flags``) and ``fixed`` values
    (a command's flag that means something else, like ethics' ``--data``); other fields keep their defaults."""
    return RecipeConfig(**{name: getattr(args, name) for name in args.config_flags}, **fixed)


def add_loading_flags(parser: argparse.ArgumentParser, int8: bool = True) -> None:
    """The flags that say how a saved predictor is loaded (the int8 path, versions, the pickle)."""
    if int8:
        parser.add_argument("--int8", dest="int8", action="store_true",
                            help="use the exported int8 ONNX model (see export): no TensorFlow, no pickle")
        parser.add_argument("--fast", dest="int8", action="store_true", help=argparse.SUPPRESS)  # its old name
    parser.add_argument("--strict", action="store_true", help="refuse a predictor saved under other package versions")
    parser.add_argument("--unpickle-preproc", action="store_true",
                        help="load ktrain's tf_model.preproc pickle (runs code from the folder: only for folders you "
                             "trust) instead of rebuilding the preprocessor from the folder's JSON and tokenizer files")


def add_dataclass_flags(parser: argparse.ArgumentParser, settings_class) -> None:
    """One flag per field of a settings dataclass, typed by its default, with the field's help."""
    import dataclasses

    for f in dataclasses.fields(settings_class):
        flag = "--" + f.name.replace("_", "-")
        if f.default is dataclasses.MISSING:
            parser.add_argument(flag, dest=f.name, required=True, help=f.metadata["help"])
        else:
            parser.add_argument(flag, dest=f.name, type=type(f.default), default=f.default, help=f.metadata["help"])


def settings_from_args(args: argparse.Namespace, settings_class):
    """Build a settings dataclass from the parsed flags named after its fields (and only those)."""
    import dataclasses

    return settings_class(**{f.name: getattr(args, f.name) for f in dataclasses.fields(settings_class)})


class _ShowDefaults(argparse.ArgumentDefaultsHelpFormatter):
    """Show a flag's default after its help, unless the help already says it or there is none to show."""

    def _get_help_string(self, action):
        if action.default in (None, False, True, argparse.SUPPRESS) or "default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser for all commands."""
    from ktrain_recipes.versions import __version__

    fmt = _ShowDefaults
    parser = argparse.ArgumentParser(prog="ktrain-recipes", description=__doc__, formatter_class=fmt)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("train", help="fine-tune a model and save a predictor", formatter_class=fmt)
    add_config_flags(p, GROUPS)

    p = sub.add_parser("evaluate", help="score a saved predictor", formatter_class=fmt)
    p.add_argument("--predictor", required=True, help="a predictor folder written by train")
    add_config_flags(p, ("data",))
    p.add_argument("--split", default="validation", choices=["validation", "test", "all"],
                   help="the split to score; all: every row of the data (a single file is not split)")
    p.add_argument("--limit", type=_flag_type(parse_limit), help="score a stratified sample of N texts")
    p.add_argument("--json", help="also write the metrics to this JSON file")
    add_loading_flags(p)

    p = sub.add_parser("predict", help="classify texts with a saved predictor", formatter_class=fmt)
    p.add_argument("--predictor", required=True, help="a predictor folder written by train")
    p.add_argument("texts", nargs="*", metavar="TEXT", help="texts to classify")
    p.add_argument("--input", help="a file to classify, read in chunks: .txt (one text per line), or .csv, .jsonl or "
                                   ".parquet with a text column")
    p.add_argument("--chunk-size", type=int, default=10_000, help="texts read, classified and written at a time")
    p.add_argument("--engine", default="local", choices=["local", "ray"],
                   help="local: this process; ray: Ray Data, the int8 model in an actor pool (see README)")
    p.add_argument("--ray-address", help="a Ray cluster's address (default: a local Ray on this machine's CPUs)")
    p.add_argument("--encoding", default="utf-8", help="the --input file's text encoding")
    p.add_argument("--pair-column", help="classify sentence pairs: the .csv column holding each text's second part")
    p.add_argument("--proba", action="store_true", help="also give each label's probability")
    p.add_argument("--format", default="text", choices=["text", "json", "csv"],
                   help="text: label TAB text per line (tabs/newlines escaped); json: a list of records; "
                        "csv: the input's columns plus label and one probability column per label; an --output "
                        "ending in .parquet or .jsonl is written in that format")
    p.add_argument("--output", help="write to this file instead of the screen")
    add_loading_flags(p)

    p = sub.add_parser("export", help="add ONNX fp32 and int8 copies of a saved predictor's model to its folder",
                       formatter_class=fmt)
    p.add_argument("--predictor", required=True, help="a predictor folder written by train")
    p.add_argument("--no-quantize", action="store_true", help="write only the fp32 ONNX model")

    sub.add_parser("models", help="list the model registry")

    p = sub.add_parser("compare", help="saved runs side by side (from their metrics.json), with a chart",
                       formatter_class=fmt)
    p.add_argument("--runs", default="runs", help="folder holding one predictor folder per run")
    p.add_argument("--chart", help="save the latency vs accuracy chart here (PNG)")
    p.add_argument("--table", help="write the table to this .csv or .json file")

    p = sub.add_parser("ethics", help="train and score a model on one task of the ETHICS benchmark",
                       formatter_class=fmt)
    p.add_argument("--task", required=True, choices=list(ETHICS_TASKS), help="the ETHICS task")
    p.add_argument("--split", default="test", choices=["test", "test_hard"], help="the test file to score")
    p.add_argument("--json", help="also write accuracy, exact_match and n to this JSON file")
    add_config_flags(p, ("model", "sample", "training", "output"), exclude=("bucketing", "distribute", "devices",
                                                                          "resume", "out", "smoke"))
    p.add_argument("--val-fraction", type=float, default=0.1,
                   help="the share of training groups held out for validation (whole groups)")
    p.add_argument("--data", help="a folder laid out like the ETHICS archive (justice/justice_train.csv, ...) or "
                                  "like the hub's parquet copy (justice/train-*.parquet, ...); default: the hub's "
                                  "EleutherAI/hendrycks_ethics")
    p.add_argument("--out", help="predictor folder (default: runs/ethics-TASK)")

    p = sub.add_parser("distill", help="train a smaller student from a saved predictor (the teacher)",
                       formatter_class=fmt)
    p.add_argument("--teacher", required=True, help="a predictor folder written by train")
    p.add_argument("--layers", type=int, default=3, help="encoder layers of the student (every other teacher layer)")
    p.add_argument("--student", help="pretrained checkpoint to cut (default: the one the teacher was fine-tuned from)")
    p.add_argument("--temperature", type=float, default=2.0, help="softens the teacher's probabilities")
    p.add_argument("--alpha", type=float, default=0.5,
                   help="weight of the true labels in the loss (1: labels alone, no teacher)")
    # no --maxlen: the student reads texts with the teacher's tokenizer and maxlen
    add_config_flags(p, ("data", "sample", "training", "output"),
                     exclude=("maxlen", "class_weight", "lr_find", "bucketing", "distribute", "devices", "smoke"))

    p = sub.add_parser("serve", help="serve a saved predictor over HTTP: /predict, /health, /metadata, a web page",
                       formatter_class=fmt)
    add_dataclass_flags(p, ServiceSettings)
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (other than 127.0.0.1: no "
                                                       "authentication, a warning is printed)")
    p.add_argument("--port", type=int, default=8000, help="port to listen on")

    p = sub.add_parser("serve-bench", help="requests/s, latency and memory: ktrain's FAQ Flask app vs our service "
                       "(ktrain and int8 backends)", formatter_class=fmt)
    p.add_argument("--predictor", required=True, help="a predictor folder with its int8 ONNX model (see export)")
    p.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32, 64], help="concurrent clients, per level")
    p.add_argument("--seconds", type=float, default=20.0, help="how long each level runs")
    p.add_argument("--out", default="docs", help="where serve_bench.json and serve_bench.md go")
    p.add_argument("--assets", default="assets", help="where the chart serve_bench.png goes")

    p = sub.add_parser("scale-bench", help="a large corpus with the int8 model: in memory vs streaming vs Ray "
                       "(local)", formatter_class=fmt)
    p.add_argument("--predictor", required=True, help="a predictor folder with its int8 ONNX model (see export)")
    p.add_argument("--data", help="emotion's folder (the corpus repeats its texts; default: $EMOTION_DATA)")
    p.add_argument("--texts", type=int, default=1_000_000, help="texts in the streamed corpus")
    p.add_argument("--in-memory", type=int, default=100_000, help="texts scored in memory (the first ones)")
    p.add_argument("--ray-texts", type=int, default=100_000, help="texts scored by Ray in local mode (0: skip)")
    p.add_argument("--work", default="runs/scale", help="where the corpus and the outputs go")
    p.add_argument("--out", default="docs", help="where scale_bench.json goes")

    p = sub.add_parser("bench", help="tutorial recipe vs default recipe, ktrain predictor vs int8 ONNX",
                       formatter_class=fmt)
    add_config_flags(p, ("model", "data", "sample"), limit=400)
    p.add_argument("--epochs", type=int, default=2, help="epochs of each training row")
    p.add_argument("--predictor", help="benchmark inference on this saved predictor (default: the default recipe's); "
                                       "its ONNX files are added only if it lacks them")
    p.add_argument("--out", default="runs/bench", help="where bench.json, bench.md and the runs go")
    p.add_argument("--assets", default="assets", help="where the chart bench.png goes")
    p.add_argument("--students", nargs="*", default=[], help="distilled student predictors to add as rows")
    return parser


def cmd_train(args) -> None:
    from ktrain_recipes.training.recipe import run_recipe

    run_recipe(config_from_args(args))


def cmd_evaluate(args) -> None:
    from ktrain_recipes.inference.evaluate import evaluate_saved, format_report

    if args.json:
        _check_writable_file(args.json)
    metrics = evaluate_saved(args.predictor, config_from_args(args), split=args.split, limit=args.limit,
                             int8=args.int8, strict=args.strict, unpickle_preproc=args.unpickle_preproc)
    print(format_report(metrics))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(metrics, f, indent=2)


def _check_writable_file(path: str) -> None:
    """Refuse, before the work, an output file that cannot be written."""
    import os

    parent = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path) or not os.path.isdir(parent) or not os.access(parent, os.W_OK):
        raise RecipesError(f"cannot write '{path}': choose a file in a folder that exists and is writable")


def cmd_predict(args) -> None:
    from ktrain_recipes.inference.output import write_predictions
    from ktrain_recipes.inference.prediction import classify, open_predictor

    if bool(args.texts) == bool(args.input):
        raise RecipesError("give either TEXT arguments or --input FILE (one of them)")
    if args.engine == "ray":
        from ktrain_recipes.inference.ray_scoring import predict_with_ray

        if not args.input or not args.output:
            raise RecipesError("--engine ray reads --input and writes --output: give both")
        n = predict_with_ray(args.predictor, args.input, args.output, args.format, args.proba, args.pair_column,
                             address=args.ray_address, chunk_size=args.chunk_size)
        print(f"{n} texts classified into {args.output}", file=sys.stderr)
        return
    if args.input:
        from ktrain_recipes.inference.streaming import check_input, predict_file

        check_input(args.input)  # before loading the model: its errors are the cheaper to find
        predictor = open_predictor(args.predictor, args.int8, args.strict, unpickle_preproc=args.unpickle_preproc)
        n = predict_file(predictor, args.input, args.output, args.format, args.proba, args.encoding,
                         args.pair_column, args.chunk_size)
        if args.output:
            print(f"{n} texts classified into {args.output}", file=sys.stderr)
        return
    predictor = open_predictor(args.predictor, args.int8, args.strict, unpickle_preproc=args.unpickle_preproc)
    probs = classify(predictor, args.texts, proba=True)
    write_predictions(args.texts, probs, predictor.get_classes(), args.format, args.proba, args.output)


def cmd_export(args) -> None:
    from ktrain_recipes.inference.onnx_inference import export_onnx

    for kind, path in export_onnx(args.predictor, quantize=not args.no_quantize).items():
        print(f"{kind}: {path} ({path.stat().st_size / 1e6:.1f} MB)")


def cmd_compare(args) -> None:
    from ktrain_recipes.studies.compare import write_comparison

    write_comparison(args.runs, args.chart, args.table)


def cmd_ethics(args) -> None:
    from ktrain_recipes.studies.ethics import run_ethics, write_result

    if args.json:
        _check_writable_file(args.json)
    config = config_from_args(args, data=args.data, out=args.out or f"runs/ethics-{args.task}",
                              val_fraction=args.val_fraction)
    result = run_ethics(args.task, config, args.split)
    print(" ".join(f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}" for k, v in result.items()))
    if args.json:
        write_result(result, args.json)


def cmd_distill(args) -> None:
    from ktrain_recipes.training.distill import DistillSettings, distill

    settings = DistillSettings(args.teacher, args.layers, args.student, args.temperature, args.alpha)
    distill(config_from_args(args), settings)


def cmd_bench(args) -> None:
    from ktrain_recipes.studies.bench import run_bench

    run_bench(config_from_args(args, epochs=args.epochs), predictor=args.predictor, out=args.out, assets=args.assets,
              students=args.students)


def cmd_serve(args) -> None:
    from ktrain_recipes.inference.service import serve

    serve(settings_from_args(args, ServiceSettings), host=args.host, port=args.port)


def cmd_serve_bench(args) -> None:
    from ktrain_recipes.studies.serve_bench import run_serve_bench

    run_serve_bench(args.predictor, args.out, args.assets, args.concurrency, args.seconds)


def cmd_scale_bench(args) -> None:
    from ktrain_recipes.studies.scale_bench import run_scale_bench

    run_scale_bench(args.predictor, args.data, args.texts, args.in_memory, args.ray_texts, args.work, args.out)


def cmd_models(args) -> None:
    from ktrain_recipes.models import list_models

    print(f"{'name':<11}{'model':<40}{'params':>7}{'batch':>7}{'lr':>9}{'epochs':>8}  note")
    for s in list_models():
        print(f"{s.name:<11}{s.model_id:<40}{s.params:>7}{s.batch_size:>7}{s.lr:>9.0e}{s.epochs:>8}  {s.note}")


COMMANDS = {"train": cmd_train, "evaluate": cmd_evaluate, "predict": cmd_predict, "export": cmd_export,
            "models": cmd_models, "compare": cmd_compare, "bench": cmd_bench, "ethics": cmd_ethics,
            "distill": cmd_distill, "serve": cmd_serve, "serve-bench": cmd_serve_bench,
            "scale-bench": cmd_scale_bench}


def _uses_tensorflow(args) -> bool:
    """Commands that load TensorFlow (the int8 path and the light commands do not)."""
    if args.command in ("models", "compare", "serve-bench", "scale-bench"):
        return False
    if args.command == "predict":
        return not (args.int8 or args.engine == "ray")
    if args.command == "serve":
        return args.backend == "ktrain"
    return True


def main(argv: list[str] | None = None) -> int:
    """Run one command; user errors print one line and return 1, Ctrl-C returns 130."""
    args = build_parser().parse_args(argv)
    compat.quiet()
    if _uses_tensorflow(args):
        compat.import_tensorflow_quietly()
    try:
        COMMANDS[args.command](args)
    except RecipesError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return 0
