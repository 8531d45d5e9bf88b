"""Version shims that the pins alone cannot fix. `import ktrain_recipes` runs this module before anything else.

Why each shim exists (measured on TF 2.21 / ktrain 0.41.4 / numpy 2.4; see docs/pins.md,
"Pins, and why each is there"):

* ``TF_USE_LEGACY_KERAS=1`` -- TensorFlow 2.16+ ships Keras 3, but transformers' TF classes
  and ktrain only work with Keras 2 (the ``tf_keras`` package). The variable is read once,
  when TensorFlow is first imported, so it must be set before anything imports TensorFlow.
* ``np.Inf`` -- removed in numpy 2.0; ktrain's one-cycle/triangular schedules still use it
  (``ktrain/lroptimize/triangular.py``), so ``fit_onecycle`` crashes without the alias.
  TensorFlow 2.21 needs numpy >= 2, so pinning numpy < 2 is not an option.
"""

from __future__ import annotations

import os
import sys
import warnings



def _tensorflow_loaded() -> bool:
    """Whether TensorFlow itself is loaded: not a placeholder another library left under its name (a None, or a
    lazy module that would import it), as on the Keras 3 road where TensorFlow is not installed at all."""
    module = sys.modules.get("tensorflow")
    if module is None:
        return False
    try:
        return isinstance(module.__dict__.get("__version__"), str)
    except Exception:  # noqa: BLE001  (a stand-in that fails to answer is not TensorFlow)
        return False


if _tensorflow_loaded() and os.environ.get("TF_USE_LEGACY_KERAS") != "1":
    warnings.warn(
        "TensorFlow was imported before ktrain_recipes: import ktrain_recipes first "
        "(or set TF_USE_LEGACY_KERAS=1) so ktrain and transformers get Keras 2.",
        stacklevel=2,
    )
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # hide TF's C++ start-up banner
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # avoid fork warnings in notebooks


def _keras_backend_where_tensorflow_is_missing() -> None:
    """Keras 3 defaults to the TensorFlow backend; on the road without TensorFlow (notebook 10 elsewhere than Colab)
    ``import keras`` then fails with a long traceback (battery v7, X72). Where no backend is named and TensorFlow is
    not installed, name an installed one (JAX, else PyTorch), saying so once."""
    import importlib.util

    if "KERAS_BACKEND" in os.environ or importlib.util.find_spec("tensorflow") is not None:
        return
    for backend in ("jax", "torch"):
        if importlib.util.find_spec(backend) is not None:
            os.environ["KERAS_BACKEND"] = backend
            print(f"note: TensorFlow is not installed and KERAS_BACKEND is not set: Keras 3 will use {backend} "
                  f"(set KERAS_BACKEND to choose another)", file=sys.stderr)
            return


_keras_backend_where_tensorflow_is_missing()

import numpy as np  # noqa: E402

if not hasattr(np, "Inf"):
    np.Inf = np.inf  # the only removed numpy name ktrain 0.41.4 uses


def quiet() -> None:
    """Silence library chatter that hides the recipe's own output (TF/transformers info, hub warnings)."""
    import logging
    import warnings

    warnings.filterwarnings("ignore", message=".*TensorFlow and JAX classes are deprecated.*")
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", message=".*numerical gradient.*")
    for name in ("tensorflow", "transformers", "datasets", "huggingface_hub", "absl"):
        logging.getLogger(name).setLevel(logging.ERROR)
    try:
        import transformers

        transformers.logging.set_verbosity_error()
        import datasets

        datasets.logging.set_verbosity_error()
        datasets.disable_progress_bars()
    except ImportError:
        pass


def import_tensorflow_quietly() -> None:
    """Import TensorFlow with the C process's stderr pointed at /dev/null.

    Its C++ start-up lines (absl's "All log messages before absl::InitializeLog()", oneDNN, cudart) are
    written before TF_CPP_MIN_LOG_LEVEL is read, so only this hides them. Python errors raised by the import
    still show: stderr is restored before they propagate. Where TensorFlow is not installed (the Keras 3 road on
    JAX or torch), it does nothing.
    """
    import importlib.util

    if "tensorflow" in sys.modules or importlib.util.find_spec("tensorflow") is None:
        return
    sys.stderr.flush()
    saved, null = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 2)
    try:
        import tensorflow  # noqa: F401
        import tf_keras  # noqa: F401  (its import loads the second copy of the library that logs again)
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


def running_backend(keras_module=None) -> str | None:
    """The backend whose devices count: ``keras_module``'s (Keras 3), else Keras 3's if it is loaded, else
    $KERAS_BACKEND, else TensorFlow where it is installed (ktrain's tf_keras runs on it), else None."""
    import importlib.util
    import os
    import sys

    if keras_module is not None:
        return keras_module.backend.backend()
    keras = sys.modules.get("keras")
    if keras is not None and hasattr(keras, "backend") and hasattr(keras.backend, "backend"):
        return keras.backend.backend()
    if os.environ.get("KERAS_BACKEND"):
        return os.environ["KERAS_BACKEND"]
    return "tensorflow" if importlib.util.find_spec("tensorflow") is not None else None
