"""GoEmotions' figures, recorded once in docs/goemotions.json: the TF-IDF baseline, or a saved predictor, on all 28
labels and on Ekman's grouping, with thresholds chosen on dev and the test split scored once.

    python benchmarks/goemotions.py --data /path/to/goemotions baseline tfidf-ovr-lr
    python benchmarks/goemotions.py --data /path/to/goemotions --predictor runs/goemotions-minilm minilm-4ep

A predictor's own metrics.json already holds its 28-label figures (train scored them at the end of the run): they
are copied as they are, and only the grouping is computed here, from the same thresholds' split (dev). A name
already in the record is replaced only with --replace: a figure is written once.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

RECORD = Path(__file__).resolve().parents[1] / "docs" / "goemotions.json"
HEADLINE = ("macro_f1", "micro_f1", "exact_match", "n")


def headline(scores: dict) -> dict:
    return {k: round(scores[k], 4) if isinstance(scores[k], float) else scores[k] for k in HEADLINE if k in scores}


def main(argv: list[str] | None = None) -> None:
    from ktrain_recipes.data.loading import load_data
    from ktrain_recipes.versions import cpu_features, cpu_model
    from ktrain_recipes_tools.studies import label_sets as ls

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="a GoEmotions folder (train.tsv, dev.tsv, test.tsv, "
                                                      "emotions.txt, ekman_mapping.json)")
    parser.add_argument("--predictor", help="a saved predictor's folder (default: the TF-IDF baseline)")
    parser.add_argument("name", help="the row's name in the record")
    parser.add_argument("--record", type=Path, default=RECORD)
    parser.add_argument("--replace", action="store_true")
    parser.add_argument("--model", help="the model's name, where the predictor's metrics.json does not give it")
    parser.add_argument("--settings", help="what the run trained with, as JSON, where metrics.json does not say")
    parser.add_argument("--about", help="how the run was made (a notebook's run, say)")
    args = parser.parse_args(argv)
    record = json.loads(args.record.read_text()) if args.record.exists() else {"about": "", "runs": {}}
    if args.name in record["runs"] and not args.replace:
        raise SystemExit(f"{args.name} is already in {args.record}: pass --replace to write it again")
    data = load_data(args.data)
    start = time.perf_counter()
    row: dict = {"data": f"{Path(args.data).name}: {', '.join(f'{s} {len(data.texts(s))}' for s in data.splits)}"}
    if args.predictor:
        from ktrain_recipes.inference.prediction import open_predictor

        predictor = open_predictor(args.predictor)
        metrics = json.loads((Path(args.predictor) / "metrics.json").read_text())
        val, test = ls.predictor_probs(predictor, data)
        settings = metrics.get("settings") or {}  # a notebook's save records what it chose to (--settings for it)
        settings = {**{k: settings[k] for k in ("epochs", "lr", "batch_size", "precision", "seed") if k in settings},
                    **json.loads(args.settings or "{}")}
        row.update(kind="predictor", folder=str(args.predictor), model=metrics.get("model_id") or args.model,
                   settings=settings, train_seconds=round(metrics["train_seconds"], 1), maxlen=metrics["maxlen"],
                   validation=headline(metrics), test=headline(metrics["test"]),
                   shared_threshold_test=headline(metrics["test"]["shared_threshold"]),
                   at_05_test=headline(metrics["test"]["at_0.5"]), cpu=metrics.get("cpu") or cpu_model(),
                   cpu_features=metrics.get("cpu_features") or cpu_features())
    else:
        val, test = ls.tfidf_baseline(data)
        found = ls.scored(data, data.label_names, val, test)
        row.update(kind="baseline", model="TF-IDF (1-2 grams) + one-vs-rest logistic regression (C=4)",
                   validation=headline(found["validation"]), test=headline(found["test"]),
                   shared_threshold_test=headline(found["test"]["shared_threshold"]),
                   at_05_test=headline(found["test"]["at_0.5"]), cpu=cpu_model(), cpu_features=cpu_features())
    groups = ls.grouping(Path(args.data) / "ekman_mapping.json")
    names, gval = ls.grouped(val, data.label_names, groups)
    _, gtest = ls.grouped(test, data.label_names, groups)
    truth = {s: ls.grouped_truth(data.labels(s), groups) for s in ("validation", "test")}
    ekman = ls.scored(data, names, gval, gtest, truth)
    row["ekman"] = {"validation": headline(ekman["validation"]), "test": headline(ekman["test"]),
                    "groups": names, "how": "each group's probability the largest of its labels'; thresholds per "
                                            "group chosen on dev"}
    row["seconds"] = round(time.perf_counter() - start, 1)
    if args.about:
        row["about"] = args.about
    record["runs"][args.name] = row
    args.record.write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps(row, indent=1))


if __name__ == "__main__":
    sys.exit(main())
