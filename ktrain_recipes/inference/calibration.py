"""How sure a predictor of one label per text is, and whether to believe it: calibration measured, one temperature
fitted on validation, and an answer withheld below a confidence chosen there.

A model is *calibrated* when, of the texts it answers with confidence 0.9, nine in ten are right. The measures are
the usual ones: expected calibration error (ECE: texts binned by their top probability into ``bins`` equal-width
bins, the gap between each bin's accuracy and its mean confidence, weighted by the bin's share of texts; Guo et al.,
ICML 2017), log-loss and the Brier score (scikit-learn's), beside accuracy.

*Temperature scaling* (Guo et al.) divides the logits by one number ``T`` fitted on validation by log-loss (scipy's
bounded scalar minimiser): ``T > 1`` softens an over-confident model. Dividing every logit by the same positive
number keeps their order, so it never changes a label, only the probabilities. It is applied to probabilities
(``scaled``): a softmax of ``log p / T`` is the softmax of ``logits / T``, since ``log p`` is the logits less a
constant per text.

*Withholding* (selective classification, Geifman & El-Yaniv, NeurIPS 2017): a text whose top probability is under a
``min_confidence`` gets no label. ``coverage_curve`` gives the accuracy of the answered texts at each confidence
threshold on validation; ``choose_min_confidence`` the lowest threshold whose answered accuracy reaches the one the
user names. A predictor of several labels per text has none of this: its per-label thresholds, chosen on
validation (``inference.thresholds``), already decide how sure each label must be, and a text may get no label.
"""

from __future__ import annotations

import numpy as np

from ktrain_recipes.errors import RecipesError
from ktrain_recipes.predictor.saved import check_temperature  # noqa: F401  (the rule, kept with the folder's reader)

BINS = 15  # Guo et al.'s bin count, and the one every figure of ours states beside its ECE
MIN_TEXTS = 100  # fewer validation texts than this fit a temperature (or choose a threshold) on noise
BOUNDS = (0.05, 20.0)  # temperatures searched: far beyond what a fine-tuned transformer needs either way


def check_min_confidence(value) -> float:
    """``value`` as a float if it is in (0, 1]; RecipesError otherwise (the CLI's, the service's and Python's rule)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise RecipesError(f"min_confidence {value!r} is not a number in (0, 1]: give the top probability a text "
                           "needs to be answered, e.g. 0.9")
    return float(value)


def scaled(probs: np.ndarray, temperature: float | None) -> np.ndarray:
    """Softmax probabilities (texts x labels) at ``temperature``: a softmax of ``log p / T``; unchanged for None
    or 1."""
    probs = np.asarray(probs, dtype=np.float32)
    if temperature is None or temperature == 1.0:
        return probs
    logits = np.log(np.maximum(probs.astype(np.float64), np.finfo(np.float64).tiny)) / temperature
    exp = np.exp(logits - logits.max(axis=1, keepdims=True))
    return (exp / exp.sum(axis=1, keepdims=True)).astype(np.float32)


def _checked(probs, truth) -> tuple[np.ndarray, np.ndarray]:
    probs, truth = np.asarray(probs, dtype=np.float64), np.asarray(truth)
    if probs.ndim != 2 or len(probs) != len(truth) or not len(truth):
        raise RecipesError(f"calibration needs one row of probabilities per label id ({probs.shape} vs "
                           f"{truth.shape})")
    if truth.dtype.kind not in "iu" or truth.min() < 0 or truth.max() >= probs.shape[1]:
        raise RecipesError("calibration needs label ids from 0 to the number of labels less one")
    return probs, truth


def reliability(probs, truth, bins: int = BINS) -> list[dict]:
    """The reliability diagram's bins (equal width over the top probability): each one's range, text count, mean
    confidence and accuracy (empty bins left out)."""
    probs, truth = _checked(probs, truth)
    confidence, right = probs.max(axis=1), probs.argmax(axis=1) == truth
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.clip(np.digitize(confidence, edges[1:-1], right=True), 0, bins - 1)  # (lo, hi]; the first holds 0
    rows = []
    for b in range(bins):
        inside = which == b
        if inside.any():
            rows.append({"low": float(edges[b]), "high": float(edges[b + 1]), "n": int(inside.sum()),
                         "confidence": float(confidence[inside].mean()), "accuracy": float(right[inside].mean())})
    return rows


def expected_calibration_error(probs, truth, bins: int = BINS) -> float:
    """ECE: the gap between accuracy and mean confidence in each equal-width bin, weighted by the bin's share."""
    rows = reliability(probs, truth, bins)
    total = sum(r["n"] for r in rows)
    return float(sum(r["n"] / total * abs(r["accuracy"] - r["confidence"]) for r in rows))


def calibration_scores(probs, truth, bins: int = BINS) -> dict:
    """Accuracy, ECE (``bins`` equal-width bins), log-loss, the multi-class Brier score (scikit-learn's: the mean
    squared distance to the one-hot truth, summed over labels) and the mean top probability."""
    from sklearn.metrics import brier_score_loss, log_loss

    probs, truth = _checked(probs, truth)
    labels = list(range(probs.shape[1]))
    clipped = np.clip(probs, 1e-12, 1.0)
    clipped = clipped / clipped.sum(axis=1, keepdims=True)  # float32 softmax rows sum to 1 only to ~1e-7
    return {"accuracy": float((probs.argmax(axis=1) == truth).mean()),
            "ece": expected_calibration_error(probs, truth, bins), "bins": bins,
            "log_loss": float(log_loss(truth, clipped, labels=labels)),
            "brier": float(brier_score_loss(truth, clipped, labels=labels)),
            "mean_confidence": float(probs.max(axis=1).mean()), "n": int(len(truth))}


def fit_temperature(probs, truth) -> float:
    """The temperature that minimises log-loss on these (validation) texts, by scipy's bounded scalar search over
    ``BOUNDS``, rounded to 4 digits."""
    from scipy.optimize import minimize_scalar

    probs, truth = _checked(probs, truth)
    if len(truth) < MIN_TEXTS:
        raise RecipesError(f"{len(truth)} validation texts are too few to fit a temperature on: give a validation "
                           f"split of at least {MIN_TEXTS} texts (a few hundred or more)")
    logp = np.log(np.maximum(probs, np.finfo(np.float64).tiny))
    rows = np.arange(len(truth))

    def loss(t: float) -> float:
        z = logp / t
        z = z - z.max(axis=1, keepdims=True)
        return float(-(z[rows, truth] - np.log(np.exp(z).sum(axis=1))).mean())

    found = minimize_scalar(loss, bounds=BOUNDS, method="bounded", options={"xatol": 1e-5})
    return round(float(found.x), 4)


def coverage_curve(probs, truth) -> dict:
    """For each distinct top probability taken as the threshold: the share of texts answered (coverage) and the
    accuracy of those answered, thresholds rising (the accuracy-coverage curve)."""
    probs, truth = _checked(probs, truth)
    confidence, right = probs.max(axis=1), probs.argmax(axis=1) == truth
    order = np.argsort(-confidence, kind="stable")
    conf, hits = confidence[order], np.cumsum(right[order])
    answered = np.arange(1, len(conf) + 1)
    last = np.r_[conf[1:] != conf[:-1], True]  # the last text of each run of equal confidence
    cut, n = conf[last][::-1], answered[last][::-1]
    return {"threshold": cut.tolist(), "coverage": (n / len(conf)).tolist(),
            "accuracy": (hits[last][::-1] / n).tolist()}


def choose_min_confidence(probs, truth, accuracy: float) -> dict:
    """The lowest confidence threshold at which the answered validation texts reach ``accuracy``, with the coverage
    and accuracy it gives there; a one-line error when no threshold reaches it (it would withhold everything)."""
    if isinstance(accuracy, bool) or not isinstance(accuracy, (int, float)) or not 0 < accuracy <= 1:
        raise RecipesError(f"accuracy {accuracy!r} is not a number in (0, 1]: name the accuracy the answered texts "
                           "should have, e.g. 0.97")
    probs, truth = _checked(probs, truth)
    if len(truth) < MIN_TEXTS:
        raise RecipesError(f"{len(truth)} validation texts are too few to choose a confidence threshold on: give a "
                           f"validation split of at least {MIN_TEXTS} texts")
    curve = coverage_curve(probs, truth)
    for t, cov, acc in zip(curve["threshold"], curve["coverage"], curve["accuracy"]):
        if acc >= accuracy:
            return {"min_confidence": float(t), "accuracy": float(acc), "coverage": float(cov),
                    "target_accuracy": float(accuracy), "chosen_on": "validation", "n": int(len(truth))}
    best = max(curve["accuracy"])
    raise RecipesError(f"no confidence threshold reaches accuracy {accuracy:g} on these {len(truth)} validation "
                       f"texts (the best is {best:.4f}, answering only the surest): it would withhold everything; "
                       "name a lower accuracy")


def withheld(probs, min_confidence: float | None) -> np.ndarray:
    """Which texts get no label: their top probability under ``min_confidence`` (none when it is None)."""
    probs = np.asarray(probs)
    if min_confidence is None:
        return np.zeros(len(probs), dtype=bool)
    return probs.max(axis=1) < check_min_confidence(min_confidence)


def selective_scores(probs, truth, min_confidence: float) -> dict:
    """Coverage (the share answered) and the accuracy of the answered texts at ``min_confidence``."""
    probs, truth = _checked(probs, truth)
    answered = ~withheld(probs, min_confidence)
    right = probs.argmax(axis=1) == truth
    return {"min_confidence": float(min_confidence), "coverage": float(answered.mean()),
            "accuracy_answered": float(right[answered].mean()) if answered.any() else None,
            "answered": int(answered.sum()), "withheld": int((~answered).sum()), "n": int(len(truth))}
