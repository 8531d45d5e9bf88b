"""``ktrain-recipes evaluate``: score a saved predictor."""

import json
import os

from ktrain_recipes_tools.commands.flags import add_flags, add_loading_flags, check_writable_file, flag_type, \
    settings_from_args
from ktrain_recipes.config import DataSettings, parse_limit

HELP = "score a saved predictor"


def add_arguments(p) -> None:
    p.add_argument("--predictor", required=True, help="a predictor folder written by train")
    add_flags(p, DataSettings)
    p.add_argument("--split", default="validation", choices=["validation", "test", "all"],
                   help="the split to score; all: every row of the data (a single file is not split)")
    p.add_argument("--limit", type=flag_type(parse_limit), help="score a stratified sample of N texts")
    p.add_argument("--json", help="also write the metrics to this JSON file")
    add_loading_flags(p)


def uses_tensorflow(args) -> bool:
    return True


def run(args) -> None:
    from ktrain_recipes.inference.evaluate import evaluate_saved, format_report

    from ktrain_recipes_tools.inference.output import jsonable, write_text_file

    data = settings_from_args(args, DataSettings)
    if args.json:  # never onto the predictor or the data being scored
        check_writable_file(args.json, (args.predictor, data.data or os.environ.get("EMOTION_DATA")))
    metrics = evaluate_saved(args.predictor, data, split=args.split, limit=args.limit, int8=args.int8,
                             strict=args.strict, unpickle_preproc=args.unpickle_preproc)
    if metrics.get("multilabel"):
        from ktrain_recipes.inference.thresholds import format_multilabel

        print(format_multilabel(metrics))
    else:
        print(format_report(metrics))
    if args.json:
        write_text_file(args.json, json.dumps(metrics, indent=2, default=jsonable))
