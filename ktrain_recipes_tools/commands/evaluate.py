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
    from ktrain_recipes.inference.evaluate import format_report

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


def evaluate_saved(predictor_dir: str, data=None, split: str = "validation", limit: int | None = None,
                   int8: bool = False, strict: bool = False, unpickle_preproc: bool = False, seed: int = 42) -> dict:
    """Load a saved predictor and score it on a split of the data ``data`` names (default: emotion).

    Args:
      predictor_dir: folder written by ``run_recipe``.  data: ``DataSettings`` naming the data and its columns (a
        ``RecipeConfig`` has them too).
      split: 'validation', 'test', or 'all' (every row of every split; a single file whole).
      limit: score a stratified sample of this many texts.
      int8: use the exported int8 ONNX model (see ``onnx_inference.export_onnx``) instead of ktrain.
      strict: refuse a predictor saved under other package versions.
      unpickle_preproc: load ktrain's pickle (see ``loading.load_checked_predictor``).
      seed: of the stratified sample (``limit``) and of the validation share held out of a data without one.
    """
    from ktrain_recipes.config import DataSettings
    from ktrain_recipes.data.loading import load_data_for, sample
    from ktrain_recipes.errors import RecipesError
    from ktrain_recipes.inference.evaluate import evaluate_predictor
    from ktrain_recipes.inference.prediction import as_classifier, classify, open_predictor, threshold_cuts

    config = data or DataSettings()
    # first: its errors are the cheaper to find
    predictor = open_predictor(predictor_dir, int8, strict, unpickle_preproc=unpickle_preproc)
    if split == "all":  # every row: a single file is read whole, not split into train and validation
        from ktrain_recipes.data.loading import Columns, load_data

        columns = Columns(text=config.text_column, label=config.label_column, pair=config.pair_column,
                          label_sep=getattr(config, "label_sep", None))
        ds = load_data(config.data, columns, config.labels, config.data_config, hold_out=False)
        texts = [t for s in ds.splits.values() for t in s[0]]
        labels = [y for s in ds.splits.values() for y in s[1]]
        texts, labels = sample(texts, labels, limit, seed)
    else:
        ds = load_data_for(config, seed)
        texts, labels = sample(ds.texts(split), ds.labels(split), limit, seed)
    cuts = threshold_cuts(predictor)
    if (cuts is not None) != ds.multilabel:  # one shape of answer scored against the other: said, not scored
        have, want = ("several labels", "one label") if cuts is not None else ("one label", "several labels")
        raise RecipesError(f"'{predictor_dir}' gives {have} per text, and the data has {want} per text: score it on "
                           f"data of its own shape ({'--label-sep, ' if cuts is not None else ''}see "
                           "docs/command-line.md)")
    if cuts is not None:
        from ktrain_recipes.data.label_sets import multi_hot
        from ktrain_recipes.inference.thresholds import score_with

        names = list(predictor.get_classes())
        probs = classify(predictor, texts, proba=True)
        found = score_with(probs, multi_hot(labels, names), names, as_classifier(predictor).thresholds
                           or {"per_label": dict.fromkeys(names, 0.5), "shared": 0.5})
        return {"multilabel": True, "accuracy": found["exact_match"], **found, "label_names": names, "split": split}
    names = list(predictor.get_classes())
    probs = classify(predictor, texts, proba=True)  # at the save's temperature, when it records one
    metrics = evaluate_predictor(lambda t: [names[i] for i in probs.argmax(axis=1)], texts, labels, names)
    from ktrain_recipes.inference.calibration import calibration_scores

    metrics["calibration"] = {**calibration_scores(probs, [names.index(y) for y in labels]),
                              "temperature": as_classifier(predictor).temperature}
    metrics["split"] = split
    return metrics
