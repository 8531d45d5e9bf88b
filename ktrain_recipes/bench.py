"""Side-by-side comparisons: saved runs (from their metrics.json) and the speed benchmark."""

from __future__ import annotations

import json
import os
from functools import partial
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
        size = folder_size_mb(path.parent, "tf_model*")
        rows[path.parent.name] = {**m, "params_m": m["params"] / 1e6, "size_mb": size}
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


class PeakRSS:
    """Track the peak resident memory (MB) of this process while a block runs, by sampling."""

    def __enter__(self):
        import threading

        import psutil

        self._proc, self._stop, self.mb = psutil.Process(), threading.Event(), 0.0
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self):
        while not self._stop.is_set():
            self.mb = max(self.mb, self._proc.memory_info().rss / 2**20)
            self._stop.wait(0.05)

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.mb = max(self.mb, self._proc.memory_info().rss / 2**20)


# the original tutorial's recipe: pad to the model's limit (512 for BERT-size models), batch 6
TUTORIAL = {"maxlen": "max", "batch_size": 6, "bucketing": False}


def _train_row(name: str, out: Path, dataset, model: str, settings: dict, **common) -> tuple[dict, dict]:
    """Train one recipe into ``out/name``; return its bench row and its full metrics."""
    from .recipe import run_recipe

    with PeakRSS() as rss:
        m = run_recipe(model, out=out / name, dataset=dataset, overwrite=True, **settings, **common)
    return {"name": name, "train_examples_per_s": m["train_examples_per_s"], "val_accuracy": m["accuracy"],
            "val_macro_f1": m["macro_f1"], "latency_p50_ms": m["latency_p50_ms"],
            "latency_p95_ms": m["inference"]["latency_p95_ms"], "throughput_per_s": m["throughput_per_s"],
            "size_mb": folder_size_mb(out / name, "tf_model.h5"), "params": m["params"],
            "peak_rss_mb": rss.mb}, m


def _inference_row(name: str, predict_with, folder: Path, val: tuple, label_names: list[str],
                   size_pattern: str) -> dict:
    from .evaluate import evaluate_predictor
    from .predictor import time_inference

    with PeakRSS() as rss:
        predict_fn = predict_with()
        m = evaluate_predictor(predict_fn, *val, label_names)
        timing = time_inference(predict_fn, val[0])
    params = json.loads((folder / METRICS).read_text()).get("params")
    return {"name": name, "train_examples_per_s": None, "val_accuracy": m["accuracy"], "val_macro_f1": m["macro_f1"],
            "latency_p50_ms": timing["latency_p50_ms"], "latency_p95_ms": timing["latency_p95_ms"],
            "throughput_per_s": timing["throughput_per_s"], "size_mb": folder_size_mb(folder, size_pattern),
            "params": params, "peak_rss_mb": rss.mb}


def run_bench(model: str = "minilm", data: str | None = None, limit: int | None = 400, eval_limit: int | None = None,
              epochs: int = 2, predictor: str | None = None, out: str | os.PathLike = "runs/bench",
              assets: str | os.PathLike = "assets", seed: int = 42) -> dict:
    """Benchmark side by side, in one process, on the same data and model; write bench.json/.md and a chart.

    Rows: (a) the tutorial's recipe (maxlen 512, batch 6, no bucketing) against (b) this package's default,
    trained on the same ``limit`` texts for the same ``epochs``; training examples/s is measured after
    warm-up (epochs 2+). (c) ktrain's own ``predictor.predict`` against (d) the int8 ONNX fast path
    (length-sorted batches), both for ``predictor`` when given (e.g. a full-data run), else (b)'s.
    """
    from .data import load_emotion, sample
    from .fast import export_onnx, load_fast_predictor
    from .predictor import load_predictor, predict

    out = Path(out)
    ds = load_emotion(data)
    common = dict(limit=limit, eval_limit=eval_limit, epochs=epochs, seed=seed)
    tutorial, tutorial_metrics = _train_row("a_tutorial_recipe", out, ds, model, TUTORIAL, **common)
    default, default_metrics = _train_row("b_default_recipe", out, ds, model, {}, **common)
    target = Path(predictor) if predictor else out / default["name"]
    export_onnx(target)
    val = sample(ds.texts("validation"), ds.labels("validation"), eval_limit, seed)
    names = json.loads((target / METRICS).read_text())["label_names"]
    plain = _inference_row("c_ktrain_predictor", lambda: load_predictor(target).predict, target, val, names,
                           "tf_model.h5")  # ktrain's own predict, as a user calls it
    fast = _inference_row("d_onnx_int8", lambda: partial(predict, load_fast_predictor(target)), target, val, names,
                          "model.int8.onnx")
    rows = [tutorial, default, plain, fast]
    # how many weight updates each recipe made: on a small slice this, not padding, decides accuracy
    steps = {row["name"]: m["optimizer_steps"] for row, m in [(tutorial, tutorial_metrics), (default, default_metrics)]}
    result = {"rows": rows, "ratios": _ratios(*rows), "optimizer_steps": steps,
              "settings": {**common, "model": model, "predictor": str(target)}}
    _write_bench(result, out, Path(assets))
    return result


def _ratios(a: dict, b: dict, c: dict, d: dict) -> dict:
    return {"train_speedup": b["train_examples_per_s"] / a["train_examples_per_s"],
            "latency_speedup": c["latency_p50_ms"] / d["latency_p50_ms"],
            "throughput_speedup": d["throughput_per_s"] / c["throughput_per_s"],
            "size_ratio": d["size_mb"] / c["size_mb"],
            "accuracy_delta": d["val_accuracy"] - c["val_accuracy"]}


def bench_table(rows: list[dict]) -> str:
    """Return the benchmark rows as a markdown table."""
    keys = list(rows[0])
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    for row in rows:
        lines.append("| " + " | ".join(_fmt(row[k]) for k in keys) + " |")
    return "\n".join(lines)


def _fmt(value) -> str:
    if value is None:
        return "-"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _write_bench(result: dict, out: Path, assets: Path) -> None:
    from .plots import plot_bench, save_figure

    out.mkdir(parents=True, exist_ok=True)
    (out / "bench.json").write_text(json.dumps(result, indent=2))
    ratios = "\n".join(f"- {k}: {v:.3g}" for k, v in result["ratios"].items())
    ratios += "\n" + "\n".join(f"- optimizer steps, {k}: {v}" for k, v in result["optimizer_steps"].items())
    (out / "bench.md").write_text(bench_table(result["rows"]) + "\n\n" + ratios + "\n")
    save_figure(plot_bench(result["rows"]), assets / "bench.png")
    print((out / "bench.md").read_text())


def write_comparison(runs: str | os.PathLike, chart: str | os.PathLike | None = None) -> pd.DataFrame:
    """Print the side-by-side table of saved runs and the recommendation; save the latency/accuracy chart."""
    from .plots import plot_latency_vs_accuracy, save_figure

    table = compare_runs(runs)
    print(table.round(4).to_string(), "\n")
    print(recommend(table))
    if chart:
        print(f"chart: {save_figure(plot_latency_vs_accuracy(table), chart)}")
    return table
