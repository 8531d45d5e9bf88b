"""Saved runs side by side, read from the metrics.json each run wrote; which model for which use."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pandas as pd

from ktrain_recipes.errors import RecipesError, note
from ktrain_recipes.predictor.manifest import METRICS, read_metrics, read_regular
from ktrain_recipes_tools.studies.measure import folder_size_mb

COLUMNS = ["model_id", "accuracy", "macro_f1", "train_seconds", "latency_p50_ms", "throughput_per_s",
           "params_m", "size_mb", "n_train", "epochs", "maxlen", "smoke"]


def without_plumbing(table: pd.DataFrame) -> pd.DataFrame:
    """The table without its ``smoke`` column when no row is a smoke run: a column of False tells a reader
    nothing; where a smoke run is present, the column says which rows are not results."""
    return table if table["smoke"].any() else table.drop(columns="smoke")


def compare_runs(folder: str | os.PathLike = "runs", fallback: str | os.PathLike | None = None,
                 committed: str | os.PathLike | None = None) -> pd.DataFrame:
    """Return one row per saved predictor under ``folder``, read from the metrics.json each run wrote.

    Args:
      folder: holds one predictor folder per run.
      fallback: a results file (like docs/results.json) to show, saying so, when ``folder`` holds no runs.
      committed: a results file whose runs join the table beside ``folder``'s, each named "<run> (record)".
    """
    if committed and Path(committed).is_file():
        recorded = pd.DataFrame.from_dict(json.loads(read_regular(Path(committed)))["runs"], orient="index")
        recorded.index = [f"{name} (record)" for name in recorded.index]
        recorded = recorded[COLUMNS + ["labels"]]
        try:
            local = compare_runs(folder)
        except RecipesError:  # no runs of your own yet: the record alone
            local = recorded.iloc[:0]
        local = local if "smoke" in local else local.assign(smoke=False)
        return without_plumbing(pd.concat([local, recorded]).sort_values("accuracy", ascending=False))
    paths = sorted(Path(folder).glob(f"*/{METRICS}"))
    if not paths and fallback and Path(fallback).is_file():
        content = json.loads(read_regular(Path(fallback)))
        note(f"no runs under '{folder}' yet: showing the results committed in {fallback}. {content['about']}")
        return without_plumbing(pd.DataFrame.from_dict(content["runs"], orient="index")[COLUMNS + ["labels"]])
    if not paths:
        raise RecipesError(f"no runs with {METRICS} under '{folder}': train some first (notebooks 00-02 or the CLI)")
    rows = {}
    for path in paths:
        try:
            m = read_metrics(path.parent)
            m = {**m.get("settings", {}), **m}  # the run's settings beside what it measured
            numbers = {k: float(m[k]) for k in ("accuracy", "macro_f1", "latency_p50_ms", "params")}
            if not all(map(math.isfinite, numbers.values())):
                raise ValueError("not finite")
            rows[path.parent.name] = {**m, **numbers, "params_m": numbers["params"] / 1e6,
                                      "smoke": bool(m.get("smoke", False)), "epochs": m.get("epochs"),
                                      "size_mb": folder_size_mb(path.parent, "tf_model*"),
                                      "labels": ",".join(map(str, m["label_names"]))}
        except (RecipesError, ValueError, KeyError, TypeError, AttributeError):
            note(f"note: skipped {path}: not a readable metrics.json of ktrain_recipes (scores missing or not "
                  "numbers)")
    if not rows:
        raise RecipesError(f"no readable {METRICS} under '{folder}': train some runs first")
    table = pd.DataFrame.from_dict(rows, orient="index")
    return without_plumbing(table[COLUMNS + ["labels"]].sort_values("accuracy", ascending=False))


def recommend(table: pd.DataFrame, tolerance: float = 0.01) -> str:
    """Pick a model for best accuracy, real-time use and tight memory, arguing from the measured figures.

    Real-time and memory picks are the fastest / smallest runs within ``tolerance`` of the best accuracy.
    """
    if table["labels"].nunique() > 1:
        return ("These runs classify different label sets, so their accuracies are not comparable: "
                "compare runs of one dataset at a time (one --runs folder each).")
    best = table["accuracy"].idxmax()
    close = table[table["accuracy"] >= table.loc[best, "accuracy"] - tolerance]
    fast, small = close["latency_p50_ms"].idxmin(), close["size_mb"].idxmin()

    def line(use: str, name: str) -> str:
        r = table.loc[name]
        return (f"- {use}: **{name}** ({r.model_id}) - accuracy {r.accuracy:.3f}, macro-F1 {r.macro_f1:.3f}, "
                f"{r.latency_p50_ms:.0f} ms per text, {r.size_mb:.0f} MB")

    caveat = ("\n\nThese runs include smoke runs of tiny random models: they show the method, not a verdict."
              if "smoke" in table and table["smoke"].any() else "")
    return "\n".join([line("best accuracy", best), line("real-time (fastest within 1 point)", fast),
                      line("memory-constrained (smallest within 1 point)", small)]) + caveat




def write_comparison(runs: str | os.PathLike, chart: str | os.PathLike | None = None,
                     table_out: str | os.PathLike | None = None) -> pd.DataFrame:
    """Print the side-by-side table of saved runs and the recommendation; save the chart and the table.

    Args:
      runs: folder holding one predictor folder per run.  chart: PNG path for the latency/accuracy chart.
      table_out: write the table as CSV (``.csv``) or JSON (``.json``).
    """
    from ktrain_recipes.plots import plot_latency_vs_accuracy, save_figure

    from ktrain_recipes_tools.inference.output import check_output_file

    for path, flag, kinds in ((chart, "--chart", (".png",)), (table_out, "--table", (".csv", ".json"))):
        if path:  # before the work: found now, not after it
            check_output_file(path, (), flag)
            if Path(path).suffix.lower() not in kinds:
                raise RecipesError(f"{flag} '{path}' must end with {' or '.join(kinds)}")
    table = compare_runs(runs)
    print(table.round(4).to_string(), "\n")
    print(recommend(table))
    if chart:
        print(f"chart: {save_figure(plot_latency_vs_accuracy(table), chart)}")
    if table_out:
        if Path(table_out).suffix.lower() == ".json":
            table.to_json(table_out, orient="index", indent=2)
        else:
            table.to_csv(table_out)
    return table
