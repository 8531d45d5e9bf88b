"""The speed benchmark: the tutorial's recipe against the default, ktrain's predictor against int8 ONNX."""

from __future__ import annotations

import dataclasses
import json
import os
from functools import partial
from pathlib import Path

from ktrain_recipes.config import RecipeConfig
from ktrain_recipes.errors import RecipesError
from ktrain_recipes.predictor.manifest import read_metrics
from ktrain_recipes_tools.studies.measure import describe_machine, folder_size_mb, process_rss_mb

class PeakRSS:
    """Track the peak resident memory (MB) of this process while a block runs, by sampling."""

    def __enter__(self):
        import threading

        self._stop, self.mb = threading.Event(), 0.0
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self):
        while not self._stop.is_set():
            self.mb = max(self.mb, process_rss_mb())
            self._stop.wait(0.05)

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.mb = max(self.mb, process_rss_mb())


# the original tutorial's recipe: pad to the model's limit (512 for BERT-size models), batch 6
TUTORIAL = {"maxlen": "max", "batch_size": 6, "bucketing": False}
ROW_TITLES = {"a_tutorial_recipe": "tutorial recipe (maxlen 512, batch 6)",
              "b_default_recipe": "default recipe (bucketed, batch 32)",
              "c_ktrain_predictor": "ktrain predictor", "d_onnx_int8": "ONNX int8"}


def _train_row(name: str, config: RecipeConfig, dataset) -> tuple[dict, dict]:
    """Train one recipe into ``config.out``; return its bench row and its full metrics."""
    from ktrain_recipes.training.recipe import run_recipe

    with PeakRSS() as rss:
        m = run_recipe(config, dataset=dataset)
    out = Path(config.out)
    return {"name": name, "train_examples_per_s": m["train_examples_per_s"], "val_accuracy": m["accuracy"],
            "val_macro_f1": m["macro_f1"], "latency_p50_ms": m["latency_p50_ms"],
            "latency_p95_ms": m["inference"]["latency_p95_ms"], "throughput_per_s": m["throughput_per_s"],
            "size_mb": folder_size_mb(out, "tf_model.h5"), "params": m["params"],
            "peak_rss_mb": rss.mb}, m


def inference_row(name: str, predict_with, folder: str | os.PathLike, val: tuple, label_names: list[str],
                  size_pattern: str) -> dict:
    """Score and time one saved predictor on the validation texts: one bench row.

    Args:
      name: the row's name.  predict_with: returns a function from texts to labels (loading happens inside the
      memory measurement).  folder: the predictor folder.  val: (texts, labels).  label_names: the labels.
      size_pattern: which files count as the model on disk (``tf_model.h5``, ``model.int8.onnx``).
    """
    from ktrain_recipes.inference.evaluate import evaluate_predictor
    from ktrain_recipes.inference.timing import time_inference

    with PeakRSS() as rss:
        predict_fn = predict_with()
        m = evaluate_predictor(predict_fn, *val, label_names)
        timing = time_inference(predict_fn, val[0])
    params = read_metrics(folder).get("params")
    return {"name": name, "train_examples_per_s": None, "val_accuracy": m["accuracy"], "val_macro_f1": m["macro_f1"],
            "latency_p50_ms": timing["latency_p50_ms"], "latency_p95_ms": timing["latency_p95_ms"],
            "throughput_per_s": timing["throughput_per_s"], "size_mb": folder_size_mb(folder, size_pattern),
            "params": params, "peak_rss_mb": rss.mb}


# the two ways of serving each saved model that notebook 09 sets side by side: (kind, int8, the weights on disk)
KINDS = (("fp32", False, "tf_model.h5"), ("int8", True, "model.int8.onnx"))


def side_by_side(models: dict[str, str | os.PathLike], val: tuple, label_names: list[str], rounds: int = 3):
    """Each saved model as ktrain's predictor (fp32) and as its int8 ONNX copy, scored and timed on the same texts.

    Rows ``"<name> fp32"`` and ``"<name> int8"``: accuracy, macro-F1, size and parameters from ``inference_row``;
    latency and throughput from ``time_side_by_side`` (every predictor called in turn, ``rounds`` rounds), so that a
    shared machine's slow moments hit every row alike. Each model must be exported first (``export_onnx``).

    Args:
      models: a row name per predictor folder.  val: (texts, labels).  label_names: the labels.
      rounds: timing rounds of all texts (throughput: the median round; latency: 100 single texts a round).
    """
    import pandas as pd

    from ktrain_recipes.inference.prediction import classify, open_predictor
    from ktrain_recipes.inference.timing import time_side_by_side

    rows, predict = [], {}
    for name, folder in models.items():
        for kind, int8, weights in KINDS:
            row = f"{name} {kind}"

            def load(f=folder, i=int8, row=row):  # loaded inside inference_row's memory measurement, once
                predict[row] = partial(classify, open_predictor(f, int8=i))
                return predict[row]
            rows.append(inference_row(row, load, folder, val, label_names, weights))
    table = pd.DataFrame(rows).set_index("name").drop(columns=["train_examples_per_s", "peak_rss_mb"])
    medians = pd.DataFrame(time_side_by_side(predict, val[0], rounds=rounds)).T
    timing = ["latency_p50_ms", "latency_p95_ms", "throughput_per_s"]
    table[timing] = medians[timing].astype(float)
    return table


def run_bench(config: RecipeConfig, predictor: str | None = None, out: str | os.PathLike = "runs/bench",
              assets: str | os.PathLike = "assets", students: list[str] = ()) -> dict:
    """Benchmark side by side, in one process, on the same data and model; write bench.json/.md and a chart.

    Rows: (a) the tutorial's recipe (maxlen 512, batch 6, no bucketing) against (b) this package's default,
    trained on the same ``limit`` texts for the same ``epochs``; training examples/s is measured after
    warm-up (epochs 2+). (c) ktrain's own ``predictor.predict`` against (d) the int8 ONNX path
    (length-sorted batches), both for ``predictor`` when given (e.g. a full-data run), else (b)'s.
    """
    from ktrain_recipes.data.loading import load_data_for, sample
    from ktrain_recipes.inference.onnx_inference import load_int8_predictor
    from ktrain_recipes.inference.prediction import classify
    from ktrain_recipes.predictor.loading import load_checked_predictor

    config = config.with_defaults()
    out = Path(out)
    if out.is_file() or (out.is_dir() and any(out.iterdir()) and not (out / "bench.json").exists()):
        raise RecipesError(f"bench --out '{out}' holds files that are not a bench run: choose a new or empty folder")
    ds = load_data_for(config)
    for folder in ([predictor] if predictor else []) + list(students):  # before the training rows, not after
        _check_bench_predictor(folder, ds.label_names)
    tutorial, tutorial_metrics = _train_row("a_tutorial_recipe", dataclasses.replace(
        config, **TUTORIAL, out=str(out / "a_tutorial_recipe"), overwrite=True), ds)
    default, default_metrics = _train_row("b_default_recipe", dataclasses.replace(
        config, out=str(out / "b_default_recipe"), overwrite=True), ds)
    target = Path(predictor) if predictor else out / default["name"]
    _export_once(target)
    val = sample(ds.texts("validation"), ds.labels("validation"), config.eval_limit, config.seed)
    names = read_metrics(target)["label_names"]
    plain = inference_row("c_ktrain_predictor", lambda: load_checked_predictor(target).predict, target, val, names,
                           "tf_model.h5")  # ktrain's own predict, as a user calls it
    fast = inference_row("d_onnx_int8", lambda: partial(classify, load_int8_predictor(target)), target, val,
                          names, "model.int8.onnx")
    rows = [tutorial, default, plain, fast]
    for student in map(Path, students):  # distilled students (see `distill`), as predictors and as int8 ONNX
        _export_once(student)
        rows.append(inference_row(f"student {student.name}", lambda s=student: load_checked_predictor(s).predict,
                                  student, val, names, "tf_model.h5"))
        rows.append(inference_row(f"student {student.name} int8",
                                  lambda s=student: partial(classify, load_int8_predictor(s)), student, val, names,
                                  "model.int8.onnx"))
    # how many weight updates each recipe made: on a small slice this, not padding, decides accuracy
    steps = {row["name"]: m["optimizer_steps"] for row, m in [(tutorial, tutorial_metrics), (default, default_metrics)]}
    result = {"rows": rows, "ratios": ratios(*rows[:4]), "optimizer_steps": steps,
              "settings": {**config.settings(), "predictor": str(target)}}
    if students:
        result["side_by_side"] = _side_by_side(target, list(map(Path, students)), val[0])
    _write_bench(result, out, Path(assets))
    return result


def _side_by_side(teacher: Path, students: list[Path], texts: list[str]) -> dict:
    """The teacher and each student at each precision, timed in alternation (``time_side_by_side``), with
    each student's throughput as a multiple of the teacher's at the same precision."""
    from ktrain_recipes.inference.onnx_inference import load_int8_predictor
    from ktrain_recipes.inference.prediction import classify
    from ktrain_recipes.predictor.loading import load_checked_predictor
    from ktrain_recipes.inference.timing import time_side_by_side

    out = {}
    for kind, load in [("fp32", load_checked_predictor), ("int8", load_int8_predictor)]:
        fns = {f"{p.name} {kind}": partial(classify, load(p)) for p in [teacher, *students]}
        timed = time_side_by_side(fns, texts, rounds=3 if kind == "fp32" else 5)
        base = timed[f"{teacher.name} {kind}"]["throughput_per_s"]
        for t in timed.values():
            t["throughput_vs_teacher"] = t["throughput_per_s"] / base
            t.pop("calls")
        out[kind] = timed
    return out


def ratios(a: dict, b: dict, c: dict, d: dict) -> dict:
    """The headline ratios of rows a-d (tutorial recipe, ours, ktrain predictor, int8), each read as "how many
    times better": training speed b/a, latency c/d, throughput d/c; size d/c and accuracy d-c."""
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
    from ktrain_recipes.plots import save_figure

    out.mkdir(parents=True, exist_ok=True)
    (out / "bench.json").write_text(json.dumps(result, indent=2))
    lines = "\n".join(f"- {k}: {v:.3g}" for k, v in result["ratios"].items())
    lines += "\n" + "\n".join(f"- optimizer steps, {k}: {v}" for k, v in result["optimizer_steps"].items())
    side = ""
    for kind, timed in result.get("side_by_side", {}).items():
        side += (f"\n{kind}, timed in alternation:\n\n| predictor | p50 ms | p95 ms | texts/s | x teacher |\n"
                 "|---|---|---|---|---|\n")
        side += "".join(f"| {n} | {t['latency_p50_ms']:.2f} | {t['latency_p95_ms']:.2f} | "
                        f"{t['throughput_per_s']:.1f} | {t['throughput_vs_teacher']:.2f} |\n" for n, t in timed.items())
    (out / "bench.md").write_text(bench_table(result["rows"]) + "\n\n" + lines + "\n" + side)
    s = result["settings"]
    caption = (f"{hardware()}; {s['model']}; training rows: {s['limit'] or 'all'} texts x {s['epochs']} epochs; "
               "inference rows: the 2,000 validation texts" if not s["eval_limit"] else
               f"{hardware()}; {s['model']}; {s['limit'] or 'all'} training texts x {s['epochs']} epochs; "
               f"{s['eval_limit']} validation texts")
    save_figure(plot_bench(result["rows"], ROW_TITLES, caption), assets / "bench.png")
    print((out / "bench.md").read_text())


def _check_bench_predictor(folder: str, label_names: list[str]) -> None:
    """A --predictor or --students folder must be a whole predictor of the data's labels."""
    from ktrain_recipes.predictor.saved import read_predictor

    saved = read_predictor(folder)
    if saved.label_names != list(label_names):
        raise RecipesError(f"'{folder}' predicts {', '.join(saved.label_names)}, but the data's labels are "
                           f"{', '.join(label_names)}: bench a predictor trained on this data")


def _export_once(folder: Path) -> None:
    """Export the ONNX files only where the folder lacks them (or they are damaged): a user's predictor is
    otherwise left as it is."""
    from ktrain_recipes.inference.onnx_inference import export_onnx
    from ktrain_recipes.predictor.manifest import ONNX_FP32, ONNX_INT8
    from ktrain_recipes.predictor.saved import read_predictor

    saved = read_predictor(folder)
    try:
        for name in (ONNX_FP32, ONNX_INT8):
            saved.derived(name)
    except RecipesError:
        export_onnx(folder)


def hardware() -> str:
    """Describe this machine in words: CPU model, cores, GPUs (for figure captions)."""
    import tensorflow as tf

    return describe_machine(len(tf.config.list_physical_devices("GPU")))


def plot_bench(rows: list[dict], titles: dict | None = None, caption: str = ""):
    """Bar charts of the benchmark: training throughput, inference throughput and single-text latency.

    Args:
      rows: bench rows (``name`` plus figures).  titles: readable names per row name.  caption: under the chart.
    """
    import matplotlib.pyplot as plt

    titles = titles or {}
    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    panels = [("train_examples_per_s", "training examples/s"), ("throughput_per_s", "inference texts/s"),
              ("latency_p50_ms", "single-text latency p50 (ms)")]
    for ax, (key, title) in zip(axes, panels):
        kept = [r for r in rows if r.get(key) is not None]
        ax.barh([titles.get(r["name"], r["name"]) for r in kept], [r[key] for r in kept], color="steelblue")
        for i, r in enumerate(kept):
            ax.annotate(f"{r[key]:.3g}", (r[key], i), va="center", fontsize=8)
        ax.set(title=title)
        ax.invert_yaxis()
    fig.tight_layout()
    if caption:
        fig.text(0.5, -0.03, caption, ha="center", va="top", fontsize=9, wrap=True)
    plt.close(fig)
    return fig
