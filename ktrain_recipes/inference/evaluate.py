"""Score predictions: accuracy, macro-F1, the per-label report and the confusion matrix."""

from __future__ import annotations

import pandas as pd
from sklearn.metrics import accuracy_score, classification_report, confusion_matrix, f1_score

from ktrain_recipes.errors import RecipesError


def score(y_true: list[str], y_pred: list[str], label_names: list[str]) -> dict:
    """Return accuracy, macro_f1, n, the per-label report and the confusion matrix (rows = truth).

    Args:
      y_true: true label names.
      y_pred: predicted label names.
      label_names: every label, in the dataset's order (fixes report and matrix order).
    """
    if len(y_true) != len(y_pred) or not y_true:
        raise RecipesError(f"cannot score {len(y_pred)} predictions against {len(y_true)} labels")
    return {
        "accuracy": float(accuracy_score(y_true, y_pred)),
        "macro_f1": float(f1_score(y_true, y_pred, labels=label_names, average="macro", zero_division=0)),
        "n": len(y_true),
        "label_names": list(label_names),
        "report": classification_report(
            y_true, y_pred, labels=label_names, output_dict=True, zero_division=0
        ),
        "confusion_matrix": confusion_matrix(y_true, y_pred, labels=label_names).tolist(),
    }


def report_table(metrics: dict) -> pd.DataFrame:
    """Return the per-label classification report as a table (precision, recall, f1, support)."""
    report = metrics["report"]
    rows = metrics["label_names"] + ["macro avg", "weighted avg"]
    table = pd.DataFrame([report[r] for r in rows], index=rows)
    table["support"] = table["support"].astype(int)
    return table.round(3)


def format_report(metrics: dict) -> str:
    """Return the report, accuracy, macro-F1 and confusion matrix as printable text."""
    cm = pd.DataFrame(metrics["confusion_matrix"], index=metrics["label_names"], columns=metrics["label_names"])
    return (
        f"{report_table(metrics).to_string()}\n\n"
        f"accuracy {metrics['accuracy']:.4f}   macro-F1 {metrics['macro_f1']:.4f}   n {metrics['n']}\n\n"
        f"{calibration_line(metrics)}"
        f"confusion matrix (rows: true, columns: predicted)\n{cm.to_string()}"
    )


def calibration_line(metrics: dict) -> str:
    """How sure the predictor was, in a line (empty when not measured)."""
    c = metrics.get("calibration")
    if not c:
        return ""
    at = f"temperature {c['temperature']}" if c.get("temperature") else "no temperature recorded"
    return (f"calibration: ECE {c['ece']:.4f} ({c['bins']} bins)   log-loss {c['log_loss']:.4f}   Brier "
            f"{c['brier']:.4f}   ({at})\n\n")


def evaluate_predictor(predict_fn, texts: list[str], labels: list[str], label_names: list[str]) -> dict:
    """Predict ``texts`` with ``predict_fn`` and score against ``labels``."""
    unknown = sorted(set(labels) - set(label_names))
    if unknown:
        raise RecipesError(
            f"the data has label(s) {', '.join(unknown)} that the predictor does not know "
            f"({', '.join(label_names)}): evaluate on data with the same labels"
        )
    return score(labels, list(predict_fn(texts)), label_names)


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
