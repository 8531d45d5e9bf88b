"""Notebook conveniences: the runtime check, plot style, and what a learner needs to see."""

from __future__ import annotations

import os
import platform
import time
from contextlib import contextmanager

import pandas as pd

from . import compat
from .predictor import package_versions


def runtime_info() -> dict:
    """Return the platform, GPUs, memory and key package versions of this runtime."""
    import psutil
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    return {
        "platform": _platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
        "gpus": ", ".join(g.name for g in gpus) or "none",
        **{k: v for k, v in package_versions().items() if k in ("tensorflow", "ktrain", "transformers")},
    }


def _platform() -> str:
    if "COLAB_GPU" in os.environ or os.path.exists("/content"):
        return "Colab"
    if "PAPERSPACE_NOTEBOOK_REPO_ID" in os.environ or os.path.exists("/notebooks"):
        return "Gradient"
    return platform.system()


def setup_notebook() -> pd.DataFrame:
    """Quiet library chatter, set the plot style, and return a table describing the runtime."""
    import matplotlib.pyplot as plt

    compat.quiet()
    plt.rcParams.update({"figure.dpi": 100, "axes.grid": True, "grid.alpha": 0.3})
    info = runtime_info()
    if info["gpus"] == "none":
        print("No GPU: fine for minilm and the smoke runs; for BERT-size models on Colab choose "
              "Runtime > Change runtime type > GPU.")
    return pd.DataFrame([info]).T.rename(columns={0: "runtime"})


class Timer:
    """Measure wall-clock seconds: ``with Timer() as t: ...`` then ``t.seconds``."""

    seconds: float = 0.0


@contextmanager
def timed(label: str = ""):
    """Time a block and print how long it took; yields a Timer holding the seconds."""
    timer = Timer()
    start = time.perf_counter()
    try:
        yield timer
    finally:
        timer.seconds = time.perf_counter() - start
        if label:
            print(f"{label}: {timer.seconds:.1f} s")
