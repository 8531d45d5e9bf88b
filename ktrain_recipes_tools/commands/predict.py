"""``ktrain-recipes predict``: classify texts (arguments or a file) with a saved predictor."""

import sys

from ktrain_recipes.batch_policy import STREAM_CHUNK
from ktrain_recipes_tools.commands.flags import add_loading_flags, flag_type
from ktrain_recipes.errors import RecipesError

HELP = "classify texts with a saved predictor"


def add_arguments(p) -> None:
    p.add_argument("--predictor", required=True, help="a predictor folder written by train")
    p.add_argument("texts", nargs="*", metavar="TEXT", help="texts to classify")
    p.add_argument("--input", help="a file to classify, read in chunks: .txt (one text per line), or .csv, .jsonl or "
                                   ".parquet with a text column")
    p.add_argument("--chunk-size", type=int, default=STREAM_CHUNK, help="texts read, classified and written at a time")
    p.add_argument("--engine", default="local", choices=["local", "ray"],
                   help="local: this process; ray: Ray Data, the int8 model in an actor pool (see docs/scaling.md, "
                        "'Scoring a large file, or on a cluster')")
    p.add_argument("--ray-address", help="a Ray cluster's address (default: a local Ray on this machine's CPUs)")
    p.add_argument("--encoding", default="utf-8", help="the --input file's text encoding")
    p.add_argument("--pair-column", help="classify sentence pairs: the .csv column holding each text's second part")
    p.add_argument("--proba", action="store_true", help="also give each label's probability")
    p.add_argument("--report-truncation", action="store_true",
                   help="two more columns: the tokens the model read of each text, and whether it was longer than "
                        "the model's maxlen and cut (tokens, truncated)")
    p.add_argument("--format", default="text", choices=["text", "json", "csv"],
                   help="text: label TAB text per line (tabs/newlines escaped); json: a list of records; "
                        "csv: the input's columns plus label and one probability column per label; an --output "
                        "ending in .parquet or .jsonl is written in that format")
    p.add_argument("--output", help="write to this file instead of the screen")
    p.add_argument("--min-confidence", type=flag_type(parse_min_confidence),
                   help="give no label (shown '-', with a withheld column) to a text whose top probability is under "
                        "this, in (0, 1]; choose it on validation with `calibrate --accuracy` (one label per text "
                        "only)")
    add_loading_flags(p)


def parse_min_confidence(text: str) -> float:
    """The flag's value: a number in (0, 1] (ValueError otherwise, which argparse prints as a usage error)."""
    from ktrain_recipes.inference.calibration import check_min_confidence

    try:
        return check_min_confidence(float(text))
    except (ValueError, RecipesError) as exc:
        raise ValueError(str(exc) if isinstance(exc, RecipesError) else
                         f"min_confidence {text!r} is not a number in (0, 1]: e.g. 0.9") from None


def uses_tensorflow(args) -> bool:
    return not (args.int8 or args.engine == "ray")


def run(args) -> None:
    from ktrain_recipes_tools.inference.output import write_predictions
    from ktrain_recipes.inference.prediction import as_classifier, classify, open_predictor, threshold_cuts

    if bool(args.texts) == bool(args.input):
        raise RecipesError("give either TEXT arguments or --input FILE (one of them)")
    # everything that can be checked without the model, before it loads
    from ktrain_recipes.config import check_limit, check_pair_column
    from ktrain_recipes_tools.inference.output import check_output_file, output_format

    check_limit(args.chunk_size, "--chunk-size")
    check_pair_column(args.pair_column, "text", "label")  # predict reads 'text' and writes 'label'
    if args.output:
        if args.texts and output_format(args.format, args.output) == "parquet":
            raise RecipesError("parquet output is for --input files: name the --output .txt, .csv, .json or .jsonl")
        output_format(args.format, args.output)
        check_output_file(args.output, (args.input,) if args.input else ())
    if args.engine == "ray":
        from ktrain_recipes_tools.inference.ray_scoring import predict_with_ray

        if not args.input or not args.output:
            raise RecipesError("--engine ray reads --input and writes --output: give both")
        if args.report_truncation or args.min_confidence is not None:
            flag = "--report-truncation" if args.report_truncation else "--min-confidence"
            raise RecipesError(f"{flag} is for the local engine: leave out --engine ray for it")
        n = predict_with_ray(args.predictor, args.input, args.output, args.format, args.proba, args.pair_column,
                             address=args.ray_address, chunk_size=args.chunk_size)
        print(f"{n} texts classified into {args.output}", file=sys.stderr)
        return
    if args.input:
        from ktrain_recipes.inference.input_files import check_input
        from ktrain_recipes_tools.inference.streaming import predict_file

        check_input(args.input)  # before loading the model: its errors are the cheaper to find
        predictor = open_predictor(args.predictor, args.int8, args.strict, unpickle_preproc=args.unpickle_preproc)
        refuse_min_confidence(predictor, args.min_confidence)
        n = predict_file(predictor, args.input, args.output, args.format, args.proba, args.encoding,
                         args.pair_column, args.chunk_size, report_truncation=args.report_truncation,
                         min_confidence=args.min_confidence)
        if args.output:
            print(f"{n} texts classified into {args.output}", file=sys.stderr)
        return
    predictor = open_predictor(args.predictor, args.int8, args.strict, unpickle_preproc=args.unpickle_preproc)
    refuse_min_confidence(predictor, args.min_confidence)
    if args.report_truncation:  # the texts given as arguments go through the file writer, which has the columns
        from ktrain_recipes.inference.prediction import as_classifier
        from ktrain_recipes_tools.inference.truncation import token_counts
        from ktrain_recipes_tools.inference.writer import PredictionWriter

        model = as_classifier(predictor)
        probs = classify(model, args.texts, proba=True)
        with PredictionWriter(args.output, output_format(args.format, args.output), model.classes, args.proba,
                              cuts=threshold_cuts(model), min_confidence=args.min_confidence) as w:
            w.write(list(args.texts), probs, counts=token_counts(model.tokenizer, list(args.texts), model.maxlen))
        return
    probs = classify(predictor, args.texts, proba=True)
    write_predictions(args.texts, probs, as_classifier(predictor).classes, output_format(args.format, args.output),
                      args.proba, args.output, cuts=threshold_cuts(predictor), min_confidence=args.min_confidence)


def refuse_min_confidence(predictor, min_confidence) -> None:
    """--min-confidence is for one label per text: a predictor of several says so (its thresholds decide)."""
    from ktrain_recipes.inference.prediction import as_classifier

    if min_confidence is not None and getattr(as_classifier(predictor), "multilabel", False):
        raise RecipesError("--min-confidence is for a predictor of one label per text; this one gives several "
                           "labels per text, each over its threshold chosen on validation: leave it out")
