"""How sure a saved predictor is, measured on a data's splits: its calibration before and after a temperature fitted
on validation, the accuracy-coverage curve, a confidence threshold chosen there for a named accuracy, and what both
give on the test split, scored once (``ktrain-recipes calibrate``; the figures of docs/calibration.json)."""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from ktrain_recipes.errors import RecipesError
from ktrain_recipes.inference import calibration as cal

BENCH_TEMPERATURE = 1.5  # what serve-bench's calibrated copy records when the folder has none: the cost is the same
CURVE_POINTS = 50  # the accuracy-coverage curve kept in a record: enough to draw it, few enough to read


def probabilities(model, texts: list, labels: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The model's probabilities for ``texts`` without any temperature, and the label ids of ``labels``."""
    from ktrain_recipes.inference.prediction import classify

    unknown = sorted(set(labels) - set(model.classes))
    if unknown:
        raise RecipesError(f"the data has label(s) {', '.join(unknown[:5])} that the predictor does not know "
                           f"({', '.join(model.classes)}): calibrate on data with the same labels")
    return classify(model, texts, proba=True), np.array([model.classes.index(y) for y in labels])


def thinned(curve: dict, points: int = CURVE_POINTS) -> dict:
    """The curve at about ``points`` evenly spaced coverages (each threshold kept exactly as found)."""
    n = len(curve["threshold"])
    keep = sorted(set(np.linspace(0, n - 1, min(points, n)).round().astype(int).tolist()))
    return {k: [round(float(v[i]), 5) for i in keep] for k, v in curve.items()}


def calibrate_saved(predictor_dir: str, data=None, accuracy: float | None = None, bins: int = cal.BINS,
                    test: bool = False, int8: bool = False, strict: bool = False, seed: int = 42) -> dict:
    """Measure a saved predictor's calibration on the validation split of ``data`` (``DataSettings``), fit a
    temperature there, and with ``accuracy`` choose the lowest confidence at which the answered validation texts
    reach it; with ``test``, score the test split once with both. The temperature the folder records already, if
    any, is left aside: the fit starts from the model's own probabilities."""
    from ktrain_recipes.config import DataSettings
    from ktrain_recipes.data.loading import load_data_for
    from ktrain_recipes.inference.prediction import as_classifier, open_predictor

    model = as_classifier(open_predictor(predictor_dir, int8, strict))
    if getattr(model, "multilabel", False):
        raise RecipesError(f"'{predictor_dir}' gives several labels per text: calibrate is for one label per text "
                           "(its per-label thresholds, chosen on validation, already set how sure each label must be)")
    recorded, model.temperature = getattr(model, "temperature", None), None
    ds = load_data_for(data or DataSettings(), seed)
    if ds.multilabel:
        raise RecipesError("the data has several labels per text: calibrate a predictor of one label per text on "
                           "data of that shape")
    found = {"predictor": str(predictor_dir), "backend": "int8" if int8 else "ktrain", "bins": bins,
             "recorded_temperature": recorded, "label_names": list(model.classes)}
    probs, truth = probabilities(model, ds.texts("validation"), ds.labels("validation"))
    temperature = cal.fit_temperature(probs, truth)
    after = cal.scaled(probs, temperature)
    found["temperature"] = temperature
    found["validation"] = {"before": cal.calibration_scores(probs, truth, bins),
                           "after": cal.calibration_scores(after, truth, bins),
                           "reliability_before": cal.reliability(probs, truth, bins),
                           "reliability_after": cal.reliability(after, truth, bins),
                           "coverage_curve": thinned(cal.coverage_curve(after, truth))}
    if accuracy is not None:
        found["withholding"] = cal.choose_min_confidence(after, truth, accuracy)
    if test:
        probs, truth = probabilities(model, ds.texts("test"), ds.labels("test"))
        after = cal.scaled(probs, temperature)
        found["test"] = {"before": cal.calibration_scores(probs, truth, bins),
                         "after": cal.calibration_scores(after, truth, bins),
                         "reliability_before": cal.reliability(probs, truth, bins),
                         "reliability_after": cal.reliability(after, truth, bins)}
        if accuracy is not None:
            found["test"]["withholding"] = cal.selective_scores(after, truth,
                                                                found["withholding"]["min_confidence"])
    return found


def summary(found: dict) -> str:
    """The figures a reader wants first, as text."""
    lines = [f"temperature fitted on validation: {found['temperature']:.4f}"
             + (f" (the folder recorded {found['recorded_temperature']})" if found["recorded_temperature"] else "")]
    for split in ("validation", "test"):
        if split not in found:
            continue
        for when in ("before", "after"):
            s = found[split][when]
            lines.append(f"{split:<10} {when:<6} accuracy {s['accuracy']:.4f}  ECE {s['ece']:.4f} ({s['bins']} bins)  "
                         f"log-loss {s['log_loss']:.4f}  Brier {s['brier']:.4f}  ({s['n']} texts)")
    if "withholding" in found:
        w = found["withholding"]
        lines.append(f"min_confidence {w['min_confidence']:.4f} reaches accuracy {w['accuracy']:.4f} on validation, "
                     f"answering {w['coverage']:.1%} (asked: {w['target_accuracy']:g})")
        if "test" in found:
            t = found["test"]["withholding"]
            answered = "no text" if t["accuracy_answered"] is None else f"accuracy {t['accuracy_answered']:.4f}"
            lines.append(f"on test: {answered} on the {t['coverage']:.1%} answered ({t['withheld']} of {t['n']} "
                         "withheld)")
    return "\n".join(lines)


@contextmanager
def calibrated_copy(predictor: str):
    """A temporary copy of ``predictor`` that records a temperature (its own, else ``BENCH_TEMPERATURE``), for
    serve-bench to serve beside the folder as it is; removed at the end."""
    import shutil
    import tempfile
    from pathlib import Path

    from ktrain_recipes.predictor.manifest import unchecked_manifest
    from ktrain_recipes.predictor.staging import record_temperature

    with tempfile.TemporaryDirectory(prefix="calibrated-") as tmp:
        copy = Path(tmp) / Path(predictor).name
        shutil.copytree(predictor, copy)
        if unchecked_manifest(copy).get("temperature") is None:
            record_temperature(copy, BENCH_TEMPERATURE, {"about": "serve-bench's copy: the cost of scaling"})
        yield str(copy)
