"""Side-by-side comparisons: saved runs (from their metrics.json) and the speed benchmark."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd

from .errors import RecipesError
from .predictor import METRICS, folder_size_mb

COLUMNS = ["model_id", "accuracy", "macro_f1", "train_seconds", "latency_p50_ms", "throughput_per_s",
           "params_m", "size_mb", "n_train", "epochs", "maxlen", "smoke"]


def compare_runs(folder: str | os.PathLike = "runs") -> pd.DataFrame:
    """Return one row per saved predictor under ``folder``, read from the metrics.json each run wrote."""
    paths = sorted(Path(folder).glob(f"*/{METRICS}"))
    if not paths:
        raise RecipesError(f"no runs with {METRICS} under '{folder}': train some first (notebooks 01-04 or the CLI)")
    rows = {}
    for path in paths:
        m = json.loads(path.read_text())
        rows[path.parent.name] = {**m, "params_m": m["params"] / 1e6, "size_mb": folder_size_mb(path.parent, "tf_model*")}
    return pd.DataFrame.from_dict(rows, orient="index")[COLUMNS].sort_values("accuracy", ascending=False)


def recommend(table: pd.DataFrame, tolerance: float = 0.01) -> str:
    """Pick a model for best accuracy, real-time use and tight memory, arguing from the measured figures.

    Real-time and memory picks are the fastest / smallest runs within ``tolerance`` of the best accuracy.
    """
    best = table["accuracy"].idxmax()
    close = table[table["accuracy"] >= table.loc[best, "accuracy"] - tolerance]
    fast, small = close["latency_p50_ms"].idxmin(), close["size_mb"].idxmin()

    def line(use: str, name: str) -> str:
        r = table.loc[name]
        return (f"- {use}: **{name}** ({r.model_id}) - accuracy {r.accuracy:.3f}, macro-F1 {r.macro_f1:.3f}, "
                f"{r.latency_p50_ms:.0f} ms per text, {r.size_mb:.0f} MB")

    caveat = ("\n\nThese runs include smoke runs of tiny random models: they show the method, not a verdict."
              if table["smoke"].any() else "")
    return "\n".join([line("best accuracy", best), line("real-time (fastest within 1 point)", fast),
                      line("memory-constrained (smallest within 1 point)", small)]) + caveat
