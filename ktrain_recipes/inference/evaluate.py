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
