"""Copy one run's figures from the metrics.json it wrote into docs/results.json, the record every page reads.

    python scripts/record_result.py notebooks/runs/base-size base-size-3ep "notebook 02's committed run (...)"

The row holds what `krt.compare_runs` shows for the run (its columns, rounded as results.json keeps them), so the
record and the table a learner makes from the same folder agree. A name already in the record is replaced only
with --replace: a figure is written once.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from ktrain_recipes_tools.studies.compare import COLUMNS, compare_runs

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results.json"
DIGITS = {"accuracy": 4, "macro_f1": 4, "train_seconds": 3, "latency_p50_ms": 4, "throughput_per_s": 4,
          "params_m": 2, "size_mb": 1}


def row_for(run: Path) -> dict:
    """The run's row of ``compare_runs`` as plain JSON values."""
    table = compare_runs(run.parent)
    if run.name not in table.index:
        raise SystemExit(f"{run} has no readable metrics.json: train and save the run first")
    row = table.loc[run.name]
    out = {}
    for column in COLUMNS + ["labels"]:
        value = row.get(column, False) if column == "smoke" else row[column]
        if hasattr(value, "item"):
            value = value.item()
        if isinstance(value, float) and math.isfinite(value) and column in DIGITS:
            value = round(value, DIGITS[column])
        out[column] = value
    # the test split, scored once after training (run_recipe does it where the data has one), and the CPU it ran on
    metrics = json.loads((run / "metrics.json").read_text())
    if isinstance(metrics.get("test"), dict):
        test = metrics["test"]
        out.update(test_accuracy=round(test["accuracy"], 4), test_macro_f1=round(test["macro_f1"], 4), test_n=test["n"])
    if metrics.get("cpu"):
        out["cpu"] = f"{metrics['cpu']} ({', '.join(metrics.get('cpu_features', [])) or 'no AVX2'})"
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="a saved run's folder (it holds metrics.json)")
    parser.add_argument("name", help="the run's name in the record, e.g. base-size-3ep")
    parser.add_argument("--about", help="a sentence added to the record's 'about': what the run is, where it shows")
    parser.add_argument("--results", type=Path, default=RESULTS, help="the record (default: docs/results.json)")
    parser.add_argument("--replace", action="store_true", help="replace a row of that name")
    args = parser.parse_args(argv)
    record = json.loads(args.results.read_text())
    if args.name in record["runs"] and not args.replace:
        raise SystemExit(f"{args.name} is already in {args.results}: pass --replace to write it again")
    record["runs"][args.name] = row_for(args.run)
    if args.about and args.about not in record["about"]:
        record["about"] = f"{record['about']} {args.about}"
    args.results.write_text(json.dumps(record, indent=2) + "\n")
    print(f"{args.name}: {json.dumps(record['runs'][args.name])}")


if __name__ == "__main__":
    main()
