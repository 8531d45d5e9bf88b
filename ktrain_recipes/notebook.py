"""Notebook conveniences: the runtime check, the plot style, and the CI switch of the parameter cell."""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import shutil
from pathlib import Path

import pandas as pd

from ktrain_recipes import compat
from ktrain_recipes.versions import package_versions
from ktrain_recipes.errors import note


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


def runs_folder(folder: str = "runs", google_drive: bool = False) -> str:
    """Return where runs are kept: ``folder``, or with ``google_drive`` on Colab that folder in your Drive
    (mounted here), so that predictors outlive the runtime and other notebooks find them."""
    if not google_drive:
        return folder
    try:
        from google.colab import drive
    except ImportError:
        note(f"google_drive=True works on Colab only: keeping runs in {folder}")
        return folder
    drive.mount("/content/drive")
    return drive_path(folder)


def drive_path(folder: str) -> str:
    """Where ``folder`` goes in your Google Drive: under MyDrive/ktrain-recipes, an absolute path included
    ("/content/runs" becomes MyDrive/ktrain-recipes/content/runs, not the runtime's own disk)."""
    path = Path(folder)
    if path.is_absolute():
        path = path.relative_to(path.anchor)
    return str(Path("/content/drive/MyDrive/ktrain-recipes") / path)


def _gpu_hardware() -> bool:
    """True when the machine has an NVIDIA GPU, whether or not TensorFlow can use it."""
    return os.path.exists("/dev/nvidia0") or shutil.which("nvidia-smi") is not None


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
    if info["gpus"] == "none" and _gpu_hardware():
        note("A GPU is present but TensorFlow cannot use it (a CUDA/driver mismatch): training runs on the CPU. "
              "Check `nvidia-smi` and that tensorflow[and-cuda] matches the driver.")
    elif info["gpus"] == "none":
        note("No GPU in this runtime: fine for minilm; for BERT-size models on Colab choose "
              "Runtime > Change runtime type > GPU.")
    return pd.DataFrame([info]).T.rename(columns={0: "runtime"})


def ci_overrides(settings):
    """Return ``settings`` (a RecipeConfig, DistillSettings, or a dict of row name -> model) unchanged,
    except in CI, where $KTRAIN_RECIPES_SMOKE names a JSON file of overrides.

    CI cannot download BERT-size models, so its test set-up builds tiny random ones and writes a file
    ``{"models": {name: folder}, "settings": {...}}``; the notebooks then run in seconds on a slice.
    """
    path = os.environ.get("KTRAIN_RECIPES_SMOKE")
    if not path:
        return settings
    smoke = json.loads(Path(path).read_text())
    if isinstance(settings, dict):
        note("CI smoke run: tiny random models stand in for these; the figures below are not results")
        return {name: smoke.get("models", {}).get(model, model) for name, model in settings.items()}
    fields = {f.name for f in dataclasses.fields(settings)}
    changes = {k: v for k, v in smoke.get("settings", {}).items() if k in fields}
    if "model" in fields:
        changes["model"] = smoke.get("models", {}).get(settings.model, settings.model)
    note("CI smoke run: a tiny random model on a slice of the data; the figures below are not results")
    return dataclasses.replace(settings, **changes)
