"""``python -m ktrain_recipes`` / ``ktrain-recipes``: each command parses flags and calls one library function."""

from __future__ import annotations

import argparse
import json
import sys

from . import compat  # noqa: F401
from .errors import RecipesError


def _maxlen(value: str) -> int | str:
    if value in ("auto", "max"):
        return value
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be 'auto', 'max' or an integer, got {value!r}") from None


def _limit(value: str) -> int | None:
    if value == "all":
        return None
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of texts or 'all', got {value!r}") from None


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser for all commands."""
    parser = argparse.ArgumentParser(prog="ktrain-recipes", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("train", help="fine-tune a model on emotion and save a predictor")
    p.add_argument("--model", default="minilm", help="registry name, hub id or local folder (default minilm)")
    p.add_argument("--data", help="local emotion folder (default: $EMOTION_DATA, else the hub)")
    p.add_argument("--out", required=True, help="predictor folder to create")
    p.add_argument("--maxlen", type=_maxlen, default="auto",
                   help="'auto' (from the data), 'max' (the model's limit) or a number of tokens")
    p.add_argument("--batch-size", type=int, help="default: the model's registry default")
    p.add_argument("--lr", type=float, help="peak learning rate for fit_onecycle (default: registry)")
    p.add_argument("--epochs", type=int, help="default: the model's registry default")
    p.add_argument("--limit", type=int, help="train on a stratified sample of N texts")
    p.add_argument("--eval-limit", type=int, help="validate on a stratified sample of N texts")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--lr-find", action="store_true", help="run the LR finder first; saves lr_find.png")
    p.add_argument("--no-bucketing", dest="bucketing", action="store_false",
                   help="pad every text to maxlen in random batches, as the original tutorial does")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --out folder")
    p.add_argument("--resume", action="store_true",
                   help="continue from the checkpoint an interrupted run left; with --epochs 0, just save it")

    p = sub.add_parser("evaluate", help="score a saved predictor")
    p.add_argument("--predictor", required=True)
    p.add_argument("--data")
    p.add_argument("--split", default="validation", choices=["validation", "test"])
    p.add_argument("--limit", type=int, help="score a stratified sample of N texts")
    p.add_argument("--json", help="also write the metrics to this JSON file")
    p.add_argument("--fast", action="store_true", help="use the exported int8 ONNX model (see export)")

    p = sub.add_parser("predict", help="classify texts with a saved predictor")
    p.add_argument("--predictor", required=True)
    p.add_argument("texts", nargs="*", metavar="TEXT")
    p.add_argument("--input", help="file with one text per line, or a CSV with a text column")
    p.add_argument("--proba", action="store_true", help="also print each label's probability")
    p.add_argument("--fast", action="store_true", help="use the exported int8 ONNX model (see export)")

    p = sub.add_parser("export", help="add ONNX fp32 and int8 copies of a saved predictor's model to its folder")
    p.add_argument("--predictor", required=True)
    p.add_argument("--no-quantize", action="store_true", help="write only the fp32 ONNX model")

    sub.add_parser("models", help="list the model registry")

    p = sub.add_parser("compare", help="saved runs side by side (from their metrics.json), with a chart")
    p.add_argument("--runs", default="runs", help="folder holding one predictor folder per run")
    p.add_argument("--chart", help="save the latency vs accuracy chart here (PNG)")

    p = sub.add_parser("bench", help="tutorial recipe vs default recipe, ktrain predictor vs int8 ONNX")
    p.add_argument("--model", default="minilm")
    p.add_argument("--data")
    p.add_argument("--limit", type=_limit, default=400,
                   help="training texts for both recipes (default 400; 'all' for the full data, on a GPU)")
    p.add_argument("--eval-limit", type=int, help="validation texts (default: all)")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--predictor", help="benchmark inference on this saved predictor (default: the default recipe's)")
    p.add_argument("--out", default="runs/bench", help="where bench.json, bench.md and the runs go")
    p.add_argument("--assets", default="assets", help="where the chart bench.png goes")
    p.add_argument("--seed", type=int, default=42)
    return parser


def cmd_train(args) -> None:
    from .recipe import run_recipe

    run_recipe(model=args.model, data=args.data, out=args.out, maxlen=args.maxlen, batch_size=args.batch_size,
               lr=args.lr, epochs=args.epochs, limit=args.limit, eval_limit=args.eval_limit, seed=args.seed,
               lr_find=args.lr_find, overwrite=args.overwrite, resume=args.resume, bucketing=args.bucketing)


def cmd_evaluate(args) -> None:
    from .evaluate import evaluate_saved, format_report

    metrics = evaluate_saved(args.predictor, data=args.data, split=args.split, limit=args.limit, fast=args.fast)
    print(format_report(metrics))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(metrics, f, indent=2)


def cmd_predict(args) -> None:
    from .data import read_texts
    from .predictor import load_any_predictor, predict

    if bool(args.texts) == bool(args.input):
        raise RecipesError("give either TEXT arguments or --input FILE (one of them)")
    texts = read_texts(args.input) if args.input else args.texts
    predictor = load_any_predictor(args.predictor, args.fast)
    if args.proba:
        names = predictor.get_classes()
        for text, row in zip(texts, predict(predictor, texts, proba=True)):
            probs = "  ".join(f"{n}={p:.3f}" for n, p in zip(names, row))
            print(f"{names[int(row.argmax())]}\t{probs}\t{text}")
    else:
        for text, label in zip(texts, predict(predictor, texts)):
            print(f"{label}\t{text}")


def cmd_export(args) -> None:
    from .fast import export_onnx

    for kind, path in export_onnx(args.predictor, quantize=not args.no_quantize).items():
        print(f"{kind}: {path} ({path.stat().st_size / 1e6:.1f} MB)")


def cmd_compare(args) -> None:
    from .bench import write_comparison

    write_comparison(args.runs, args.chart)


def cmd_bench(args) -> None:
    from .bench import run_bench

    run_bench(model=args.model, data=args.data, limit=args.limit, eval_limit=args.eval_limit, epochs=args.epochs,
              predictor=args.predictor, out=args.out, assets=args.assets, seed=args.seed)


def cmd_models(args) -> None:
    from .models import list_models

    print(f"{'name':<11}{'model':<40}{'params':>7}{'batch':>7}{'lr':>9}{'epochs':>8}  note")
    for s in list_models():
        print(f"{s.name:<11}{s.model_id:<40}{s.params:>7}{s.batch_size:>7}{s.lr:>9.0e}{s.epochs:>8}  {s.note}")


COMMANDS = {"train": cmd_train, "evaluate": cmd_evaluate, "predict": cmd_predict, "export": cmd_export,
            "models": cmd_models, "compare": cmd_compare, "bench": cmd_bench}


def main(argv: list[str] | None = None) -> int:
    """Run one command; user errors print one line and return 1, Ctrl-C returns 130."""
    args = build_parser().parse_args(argv)
    compat.quiet()
    try:
        COMMANDS[args.command](args)
    except RecipesError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted: nothing was saved over an existing predictor", file=sys.stderr)
        return 130
    return 0
