"""Several labels per text: thresholds chosen on validation, the labels they give, and the scores a reader needs.

A multi-label model gives each label its own probability (a sigmoid each, independent): a text carries every label
whose probability reaches that label's threshold. Neither argmax (one label only) nor 0.5 (rare labels almost never
reach it) is right; the thresholds are chosen on the validation split, one for all labels (the best macro-F1) and
one per label (the best F1 of each label, where the label occurs in validation; the shared one where it does not),
and the test split is scored once with them. The scores are scikit-learn's: macro-F1 (the GoEmotions paper's
figure), micro-F1, exact match (subset accuracy: every label of the text right) and per-label precision, recall, F1
and support.
"""

from __future__ import annotations

import numpy as np

from ktrain_recipes.data.label_sets import threshold_vector  # noqa: F401  (the check, kept where the data's rules are)
from ktrain_recipes.errors import RecipesError

GRID = np.round(np.arange(0.02, 0.981, 0.01), 2)  # the thresholds tried, 0.02 to 0.98


def _f1(pred: np.ndarray, truth: np.ndarray, axis) -> np.ndarray:
    """F1 from boolean predictions and truths, summed over ``axis`` (0 in the denominator: F1 0)."""
    tp = (pred & truth).sum(axis)
    fp = (pred & ~truth).sum(axis)
    fn = (~pred & truth).sum(axis)
    denom = 2 * tp + fp + fn
    return np.where(denom > 0, 2 * tp / np.maximum(denom, 1), 0.0)


def threshold_curve(probs: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Each label's F1 at each threshold of ``GRID``: thresholds x labels."""
    truth = truth.astype(bool)
    return np.stack([_f1(probs >= t, truth, axis=0) for t in GRID])


def choose_thresholds(probs: np.ndarray, truth: np.ndarray, names: list[str]) -> dict:
    """The thresholds chosen on validation: ``shared`` (best macro-F1 with one threshold for all labels),
    ``per_label`` (best F1 of each label; the shared one for a label validation never shows), and the curve
    (``GRID`` against macro-F1) the shared one was read from."""
    truth = np.asarray(truth).astype(bool)
    if probs.shape != truth.shape or probs.shape[1] != len(names):
        raise RecipesError(f"thresholds need probabilities and labels of one shape ({probs.shape} vs {truth.shape})")
    if len(probs) < 20:
        raise RecipesError(f"{len(probs)} validation texts are too few to choose thresholds on: give a validation "
                           "split of at least a few hundred texts")
    per = threshold_curve(probs, truth)  # thresholds x labels
    macro = per.mean(axis=1)
    shared = float(GRID[int(macro.argmax())])
    seen = truth.any(axis=0)
    per_label = {name: (float(GRID[int(per[:, j].argmax())]) if seen[j] else shared) for j, name in enumerate(names)}
    return {"shared": shared, "per_label": per_label, "chosen_on": "validation", "n": int(len(probs)),
            "curve": {"threshold": [float(t) for t in GRID], "macro_f1": [round(float(m), 4) for m in macro]}}


def labels_over(probs: np.ndarray, cut: np.ndarray, names: list[str]) -> list[list[str]]:
    """Each text's labels: those whose probability reaches their threshold (possibly none)."""
    passed = probs >= cut
    return [[names[j] for j in np.flatnonzero(row)] for row in passed]


def multilabel_scores(truth: np.ndarray, pred: np.ndarray, names: list[str]) -> dict:
    """macro-F1, micro-F1, exact match and per-label precision/recall/F1/support (scikit-learn's definitions)."""
    from sklearn.metrics import accuracy_score, f1_score, precision_recall_fscore_support

    truth, pred = np.asarray(truth).astype(int), np.asarray(pred).astype(int)
    p, r, f, s = precision_recall_fscore_support(truth, pred, average=None, zero_division=0)
    return {
        "macro_f1": float(f1_score(truth, pred, average="macro", zero_division=0)),
        "micro_f1": float(f1_score(truth, pred, average="micro", zero_division=0)),
        "exact_match": float(accuracy_score(truth, pred)),
        "n": int(len(truth)),
        "per_label": {n: {"precision": float(p[j]), "recall": float(r[j]), "f1": float(f[j]), "support": int(s[j])}
                      for j, n in enumerate(names)},
    }


def score_with(probs: np.ndarray, truth: np.ndarray, names: list[str], thresholds: dict) -> dict:
    """The scores with the per-label thresholds, and beside them with the shared one and with 0.5."""
    found = multilabel_scores(truth, probs >= threshold_vector(thresholds, names), names)
    found["shared_threshold"] = {k: v for k, v in multilabel_scores(truth, probs >= thresholds["shared"], names).items()
                                 if k != "per_label"}
    found["at_0.5"] = {k: v for k, v in multilabel_scores(truth, probs >= 0.5, names).items() if k != "per_label"}
    return found


def format_multilabel(scores: dict) -> str:
    """The per-label table and the headline figures, as text."""
    lines = [f"{'label':<16}{'precision':>10}{'recall':>8}{'f1':>8}{'support':>9}"]
    for name, row in scores["per_label"].items():
        lines.append(f"{name:<16}{row['precision']:>10.3f}{row['recall']:>8.3f}{row['f1']:>8.3f}{row['support']:>9}")
    lines.append(f"macro-F1 {scores['macro_f1']:.4f}, micro-F1 {scores['micro_f1']:.4f}, exact match "
                 f"{scores['exact_match']:.4f} ({scores['n']} texts, per-label thresholds)")
    for key, what in (("shared_threshold", "one shared threshold"), ("at_0.5", "0.5 for every label")):
        if key in scores:
            s = scores[key]
            lines.append(f"  with {what}: macro-F1 {s['macro_f1']:.4f}, micro-F1 {s['micro_f1']:.4f}, exact match "
                         f"{s['exact_match']:.4f}")
    return "\n".join(lines)
