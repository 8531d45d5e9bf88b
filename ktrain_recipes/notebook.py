"""Notebook conveniences: the runtime check, the plot style, and where runs are kept."""

from __future__ import annotations

import os
import platform
import shutil
from pathlib import Path

import pandas as pd

from ktrain_recipes import compat
from ktrain_recipes.compat import running_backend
from ktrain_recipes.versions import cpu_features, cpu_model, package_versions
from ktrain_recipes.errors import note


def runtime_info() -> dict:
    """Return the platform, the CPU (its model and the vector features that decide speeds), GPUs, memory and key
    package versions of this runtime: a notebook's first output names the machine its figures come from. The GPUs
    are those the running backend sees (TensorFlow for ktrain; JAX, TensorFlow or PyTorch under Keras 3), asked of
    that backend only, so it answers where TensorFlow is not installed."""
    import psutil

    backend = running_backend()
    versions = package_versions()
    shown = ("tensorflow", "ktrain", "transformers") if versions.get("tensorflow") != "missing" else ()
    return {
        "platform": _platform(),
        "python": platform.python_version(),
        # the model and its features on rows of their own: in one cell pandas cut the name at 50 characters
        "cpu": cpu_model(),
        "cpu_features": ", ".join(cpu_features()) or "no AVX2",  # they decide the speeds
        "cpus": os.cpu_count(),
        "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
        "gpus": ", ".join(gpu_names(backend)) or "none",
        **({"backend": backend} if backend not in (None, "tensorflow") else {}),
        **{k: v for k, v in versions.items() if k in shown},
    }


def gpu_names(backend: str | None) -> list[str]:
    """The GPUs ``backend`` can use, by name; none where it is not installed. Imports that backend only."""
    try:
        if backend == "jax":
            import jax

            return [str(d) for d in jax.devices() if d.platform == "gpu"]
        if backend == "torch":
            import torch

            return [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
        if backend in ("tensorflow", None):
            import tensorflow as tf

            return [g.name for g in tf.config.list_physical_devices("GPU")]
    except ImportError:
        return []
    return []


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
        note("A GPU is present but the backend cannot use it (a CUDA/driver mismatch): training runs on the CPU. "
              "Check `nvidia-smi` and that the backend's CUDA build (tensorflow[and-cuda], jax[cuda12]) matches "
              "the driver.")
    elif info["gpus"] == "none":
        note("No GPU in this runtime: fine for minilm; for BERT-size models on Colab choose "
              "Runtime > Change runtime type > GPU.")
    return pd.DataFrame([info]).T.rename(columns={0: "runtime"})
