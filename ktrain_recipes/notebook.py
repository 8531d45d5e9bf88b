"""Notebook conveniences: the runtime check, the plot style, and where runs are kept."""

from __future__ import annotations

import os
import platform
import shutil
from pathlib import Path

import pandas as pd

from ktrain_recipes import compat
from ktrain_recipes.versions import cpu_features, cpu_model, package_versions
from ktrain_recipes.errors import note


def runtime_info() -> dict:
    """Return the platform, the CPU (its model and the vector features that decide speeds), GPUs, memory and key
    package versions of this runtime: a notebook's first output names the machine its figures come from."""
    import psutil
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    return {
        "platform": _platform(),
        "python": platform.python_version(),
        "cpu": f"{cpu_model()} ({', '.join(cpu_features()) or 'no AVX2'})",  # its features decide the speeds
        "cpus": os.cpu_count(),
        "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
        "gpus": ", ".join(g.name for g in gpus) or "none",
        **{k: v for k, v in package_versions().items() if k in ("tensorflow", "ktrain", "transformers")},
    }


def runs_folder(folder: str = "runs", google_drive: bool | None = None) -> str:
    """Return where runs are kept: ``folder``, or that folder in your Google Drive (mounted here).

    ``google_drive=None`` (the default) means Drive on Colab and ``folder`` elsewhere. Colab gives each notebook its own
    runtime, and a runtime's disk is lost with it: in Drive, predictors outlive the runtime and the other notebooks
    find them (06, 07 and 09 read what 00 saved).
    """
    on_colab = _colab_drive() is not None
    if google_drive is None:
        google_drive = on_colab
    if not google_drive:
        return folder
    if not on_colab:
        note(f"google_drive=True works on Colab only: keeping runs in {folder}")
        return folder
    path = drive_path(folder)
    note(f"Keeping runs in your Google Drive ({path}), so that the other notebooks find this one's predictor: "
         "Colab asks once for permission to mount it. For the runtime's own disk, pass google_drive=False.")
    _colab_drive().mount("/content/drive")
    return path


def _colab_drive():
    """google.colab.drive on Colab, else None."""
    try:
        from google.colab import drive
    except ImportError:
        return None
    return drive


def drive_path(folder: str) -> str:
    """Where ``folder`` goes in your Google Drive: under MyDrive/ktrain-recipes, an absolute path included
    ("/content/runs" becomes MyDrive/ktrain-recipes/content/runs, not the runtime's own disk)."""
    from ktrain_recipes.errors import RecipesError

    path = Path(folder)
    if path.is_absolute():
        path = path.relative_to(path.anchor)
    root = Path("/content/drive/MyDrive/ktrain-recipes")
    inside = Path(os.path.normpath(root / path))
    if not inside.is_relative_to(root):  # '../..' would climb out of Drive onto the runtime's own disk
        raise RecipesError(f"runs_folder('{folder}') leads out of your Drive folder: name a folder without '..'")
    return str(inside)


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
