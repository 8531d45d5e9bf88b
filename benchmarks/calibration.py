"""How sure a saved predictor is, recorded once in docs/calibration.json: its calibration on emotion's validation
and test splits before and after a temperature fitted on validation, and a confidence threshold chosen on
validation for a named accuracy, scored once on test.

    python benchmarks/calibration.py --data /path/to/emotion --predictor runs/emotion-minilm minilm --accuracy 0.97

A name already in the record is replaced only with --replace: a figure is written once. ``--record-temperature``
also writes the fitted temperature into the predictor's folder (``calibrate --record``), so that it answers with it.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

RECORD = Path(__file__).resolve().parents[1] / "docs" / "calibration.json"
ABOUT = ("Calibration of saved predictors of one label per text (benchmarks/calibration.py, `ktrain-recipes "
         "calibrate`): expected calibration error over 15 equal-width bins of the top probability, log-loss and the "
         "Brier score, on the validation split (where the temperature and the confidence threshold are chosen) and "
         "once on the test split; 'before' is the model's own softmax, 'after' the same at the fitted temperature. "
         "'withholding' is the lowest confidence at which the answered validation texts reach the accuracy asked, "
         "and what it gives on test. CPU as each row names it, no GPU.")


def main(argv: list[str] | None = None) -> None:
    from ktrain_recipes.config import DataSettings
    from ktrain_recipes.versions import cpu_features, cpu_model
    from ktrain_recipes_tools.studies.calibration import calibrate_saved, summary

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="emotion's folder (train, validation and test files)")
    parser.add_argument("--predictor", required=True, help="a saved predictor's folder")
    parser.add_argument("name", help="the row's name in the record")
    parser.add_argument("--accuracy", type=float, default=0.97, help="the accuracy the answered texts should reach")
    parser.add_argument("--record", type=Path, default=RECORD)
    parser.add_argument("--replace", action="store_true")
    parser.add_argument("--record-temperature", action="store_true",
                        help="also write the temperature into the predictor's folder")
    args = parser.parse_args(argv)
    record = json.loads(args.record.read_text()) if args.record.exists() else {"about": ABOUT, "runs": {}}
    if args.name in record["runs"] and not args.replace:
        raise SystemExit(f"{args.name} is already in {args.record}: pass --replace to write it again")
    start = time.perf_counter()
    found = calibrate_saved(args.predictor, DataSettings(data=args.data), accuracy=args.accuracy, test=True)
    metrics = json.loads((Path(args.predictor) / "metrics.json").read_text())
    print(summary(found))
    found.pop("predictor")
    row = {"folder": str(args.predictor), "model": metrics.get("model_id"),
           "settings": {k: v for k, v in (metrics.get("settings") or {}).items()
                        if k in ("epochs", "lr", "batch_size", "precision", "seed", "maxlen")},
           **found, "cpu": cpu_model(), "cpu_features": cpu_features(),
           "seconds": round(time.perf_counter() - start, 1)}
    if args.record_temperature:
        from ktrain_recipes.predictor.staging import record_temperature

        keep = {k: found[k] for k in ("temperature", "bins", "withholding")}
        keep["validation"] = {w: found["validation"][w] for w in ("before", "after")}
        record_temperature(args.predictor, found["temperature"], keep, overwrite=True)
    record["about"] = ABOUT
    record["runs"][args.name] = row
    args.record.write_text(json.dumps(record, indent=1) + "\n")
    print(f"{args.name} written to {args.record}")


if __name__ == "__main__":
    main()
