"""``ktrain-recipes calibrate``: how sure a saved predictor is, a temperature fitted on validation, and a confidence
under which to withhold an answer; ``--record`` writes the temperature into the predictor's folder."""

import json
import os

from ktrain_recipes.config import DataSettings
from ktrain_recipes.errors import RecipesError
from ktrain_recipes_tools.commands.flags import add_flags, add_loading_flags, check_writable_file, flag_type, \
    settings_from_args

HELP = "measure a predictor's calibration, fit a temperature on validation, choose a confidence to withhold under"


def parse_accuracy(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is None or not 0 < value <= 1:
        raise ValueError(f"--accuracy {text!r} is not a number in (0, 1]: e.g. 0.97")
    return value


def parse_bins(text: str) -> int:
    if not text.isdigit() or not 2 <= int(text) <= 100:
        raise ValueError(f"--bins {text!r} is not a whole number from 2 to 100")
    return int(text)


def add_arguments(p) -> None:
    p.add_argument("--predictor", required=True, help="a predictor folder written by train")
    add_flags(p, DataSettings)
    p.add_argument("--accuracy", type=flag_type(parse_accuracy),
                   help="choose the lowest confidence at which the answered validation texts reach this accuracy")
    p.add_argument("--bins", type=flag_type(parse_bins), default=15, help="equal-width bins of the ECE")
    p.add_argument("--test", action="store_true", help="also score the test split, once, with what validation chose")
    p.add_argument("--record", action="store_true",
                   help="write the temperature into the predictor's folder (every loader then applies it)")
    p.add_argument("--overwrite", action="store_true", help="with --record: replace a temperature already recorded")
    p.add_argument("--json", help="also write every figure (the reliability bins, the curve) to this JSON file")
    add_loading_flags(p)


def uses_tensorflow(args) -> bool:
    return not args.int8


def run(args) -> None:
    from ktrain_recipes_tools.inference.output import jsonable, write_text_file
    from ktrain_recipes_tools.studies.calibration import calibrate_saved, summary

    if args.overwrite and not args.record:
        raise RecipesError("--overwrite replaces a recorded temperature: give it with --record")
    if args.record and args.int8:
        raise RecipesError("--record fits on the model itself: leave out --int8 (the int8 copy then applies the "
                           "recorded temperature too)")
    data = settings_from_args(args, DataSettings)
    if args.json:  # never onto the predictor or the data being scored
        check_writable_file(args.json, (args.predictor, data.data or os.environ.get("EMOTION_DATA")))
    found = calibrate_saved(args.predictor, data, accuracy=args.accuracy, bins=args.bins, test=args.test,
                            int8=args.int8, strict=args.strict)
    print(summary(found))
    if args.record:
        from ktrain_recipes.predictor.staging import record_temperature

        keep = {k: v for k, v in found.items() if k in ("temperature", "bins", "withholding")}
        keep["validation"] = {w: found["validation"][w] for w in ("before", "after")}
        record_temperature(args.predictor, found["temperature"], keep, overwrite=args.overwrite)
        print(f"recorded temperature {found['temperature']} in '{args.predictor}'")
    if args.json:
        write_text_file(args.json, json.dumps(found, indent=2, default=jsonable))
