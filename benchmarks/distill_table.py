"""The table of benchmarks/distill_augment.sh's runs: the T x alpha grid, then each way per seed with validation
accuracy, macro-F1, training time, and the int8 student's single-text latency (exported here when the run's folder
is still there and has no int8 copy yet).

    python benchmarks/distill_table.py [RESULTS_DIR] [WORK_DIR]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def int8_latency_ms(folder: Path, texts: list[str]) -> float | None:
    """Median single-text latency of the folder's int8 model (None without the folder)."""
    import ktrain_recipes as kr

    if not (folder / "manifest.json").exists():
        return None
    if not (folder / "model.int8.onnx").exists():
        kr.export_onnx(folder)
    return kr.time_inference(kr.open_predictor(folder, int8=True).predict, texts)["latency_p50_ms"]


def curve(run: dict) -> str:
    """A run's validation accuracy after each epoch."""
    return ", ".join(f"{v:.4f}" for v in run["history"]["val_accuracy"])


def main(results: str = "docs/distill", work: str = "runs/distill") -> None:
    import ktrain_recipes as kr

    runs = {p.stem: json.loads(p.read_text()) for p in sorted(Path(results).glob("*.json"))}
    print("| grid run | temperature | alpha | val accuracy | val macro-F1 | per epoch | training s |\n"
          "|---|---|---|---|---|---|---|")
    for name, m in runs.items():
        if name.startswith("grid-"):
            t, a = name.removeprefix("grid-t").split("-a")
            print(f"| {name} | {t} | {a} | {m['accuracy']:.4f} | {m['macro_f1']:.4f} | {curve(m)} | "
                  f"{m['train_seconds']:.0f} |")
    texts = kr.load_emotion(None).texts("validation")[:200]
    print("\n| student | seed | training texts | val accuracy | val macro-F1 | per epoch | training s | int8 p50 ms |\n"
          "|---|---|---|---|---|---|---|---|")
    for way in ("labels", "distill", "augment"):
        for seed in (42, 43):
            m = runs.get(f"{way}-s{seed}")
            if m is None:
                continue
            folder = Path(work) / f"{way}-s{seed}"
            if not folder.exists():  # distill-s42 is the chosen grid run (the script copies its JSON)
                folder = Path(work) / next((g for g, r in runs.items() if g.startswith("grid-") and r == m), "")
            latency = int8_latency_ms(folder, texts)
            print(f"| {way} | {seed} | {m['n_train']:,} | {m['accuracy']:.4f} | {m['macro_f1']:.4f} | {curve(m)} | "
                  f"{m['train_seconds']:.0f} | {'-' if latency is None else f'{latency:.2f}'} |")
    print("\n| seed | distill - labels (points) | augment - labels (points) |\n|---|---|---|")
    for seed in (42, 43):
        base = runs.get(f"labels-s{seed}")
        gaps = [runs.get(f"{way}-s{seed}") for way in ("distill", "augment")]
        if base is not None:
            print(f"| {seed} | " + " | ".join("-" if g is None else f"{100 * (g['accuracy'] - base['accuracy']):+.2f}"
                                               for g in gaps) + " |")


if __name__ == "__main__":
    main(*sys.argv[1:])
