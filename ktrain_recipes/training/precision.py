"""The precision a run trains in, chosen by what was measured: bfloat16 on a GPU of compute capability 8.0 or more
(Ampere, Hopper) and on a CPU that computes it natively, float16 on a 7.x GPU (V100, T4), float32 elsewhere.

Mixed precision keeps every weight in float32 and computes the layers in 16 bits; the classification head (the
logits, and so the loss and the softmax) stays in float32. The saved weights are float32, so a predictor trained
in either precision loads, exports and serves exactly as one trained in float32. A CPU without native bfloat16
(AVX-512 BF16 or AMX) emulates it, slower than float32: there ``auto`` keeps float32. On an H200 (Keras 3 on JAX,
batch 32) float16 with loss scaling trained BERT-base 14% slower than float32 and bfloat16 was never slower
(docs/results.md); NVIDIA's figures show float16 paying 3-4x on V100 and T4, where bfloat16 is not native.

The GPUs are asked of the backend that runs (JAX, torch or TensorFlow), importing no other: ``auto`` answers where
TensorFlow is not installed.
"""

from __future__ import annotations

from pathlib import Path

from ktrain_recipes.config import PRECISIONS
from ktrain_recipes.compat import running_backend  # noqa: F401  (asked here too: tests, gpu_check)
from ktrain_recipes.errors import RecipesError

POLICIES = {"float32": "float32", "bfloat16": "mixed_bfloat16", "float16": "mixed_float16"}
BF16_FLAGS = ("avx512_bf16", "amx_bf16")


def cpu_flags(cpuinfo: str | Path = "/proc/cpuinfo") -> set[str]:
    """The instruction-set flags of this machine's first CPU (Linux); empty where /proc/cpuinfo is absent."""
    try:
        text = Path(cpuinfo).read_text(errors="replace")
    except OSError:
        return set()
    line = next((ln for ln in text.splitlines() if ln.startswith("flags")), "")
    return set(line.partition(":")[2].split())


def gpu_capabilities(backend: str | None = None) -> list[tuple[int, int]]:
    """The CUDA compute capability of each GPU ``backend`` sees (default: ``running_backend()``); none on a
    CPU-only machine or where the backend is not installed. Imports that backend only."""
    backend = running_backend() if backend is None else backend
    try:
        if backend == "jax":
            import jax

            return [_capability(getattr(d, "compute_capability", None)) for d in jax.devices() if d.platform == "gpu"]
        if backend == "torch":
            import torch

            return [tuple(torch.cuda.get_device_capability(i)) for i in range(torch.cuda.device_count())]
        if backend == "tensorflow":
            import tensorflow as tf

            return [_capability(tf.config.experimental.get_device_details(gpu).get("compute_capability"))
                    for gpu in tf.config.list_physical_devices("GPU")]
    except ImportError:  # the backend named is not installed here: no GPU it could use
        return []
    return []


def _capability(value) -> tuple[int, int]:
    """A compute capability as (major, minor), from JAX's "9.0" or TensorFlow's (9, 0); (0, 0) when unknown."""
    if isinstance(value, str):
        major, _, minor = value.partition(".")
        return (int(major), int(minor or 0)) if major.isdigit() and (minor or "0").isdigit() else (0, 0)
    return tuple(value) if value else (0, 0)


def choose_precision(requested: str = "auto", gpus: list[tuple[int, int]] | None = None,
                     flags: set[str] | None = None) -> tuple[str, str]:
    """The precision to train in, and why, in a few words.

    ``gpus``: compute capabilities (default: what the running backend sees, ``gpu_capabilities``); ``flags``: the
    CPU's (default: /proc/cpuinfo).
    """
    if requested not in PRECISIONS:
        raise RecipesError(f"--precision must be one of {', '.join(PRECISIONS)}, got {requested!r}")
    if requested != "auto":
        return requested, "as asked"
    gpus = gpu_capabilities() if gpus is None else gpus
    if gpus:
        best = max(gpus)
        where = f"compute capability {best[0]}.{best[1]}"
        if best >= (8, 0):
            return "bfloat16", f"a GPU with native bfloat16 ({where}): as fast as float16 there, without loss scaling"
        if best >= (7, 0):
            return "float16", f"a GPU with float16 tensor cores and no native bfloat16 ({where})"
        return "float32", f"a GPU without tensor cores ({where})"
    flags = cpu_flags() if flags is None else flags
    native = [f for f in BF16_FLAGS if f in flags]
    if native:
        return "bfloat16", f"a CPU with native bfloat16 ({', '.join(native)})"
    return "float32", "this CPU has no native bfloat16 (AVX-512 BF16 or AMX): emulated, it would be slower"


def set_policy(precision: str, keras_module=None) -> None:
    """Set the global dtype policy of tf_keras (the ktrain path; default) or of ``keras_module`` (Keras 3)."""
    if keras_module is None:
        try:
            import tf_keras
        except ModuleNotFoundError:  # the Keras 3 road without TensorFlow (battery v7, X73): Keras 3's own policy
            import keras as keras_module
        else:
            tf_keras.mixed_precision.set_global_policy(POLICIES[precision])
            return
    keras_module.config.set_dtype_policy(POLICIES[precision])


def float32_head(model) -> None:
    """Compute a transformers TF classifier's head in float32 (its logits, and so the loss and the softmax)."""
    import tf_keras

    head = [getattr(model, name) for name in ("pre_classifier", "classifier") if hasattr(model, name)]
    for layer in head:
        for sub in [layer, *layer.submodules]:
            if isinstance(sub, tf_keras.layers.Layer):
                sub._set_dtype_policy(tf_keras.mixed_precision.Policy("float32"))  # tf_keras' own setter


def use_precision(requested: str = "auto", keras_module=None) -> str:
    """Choose the precision (``choose_precision``), say which and why, and set it as the global dtype policy of
    tf_keras, or of ``keras_module`` (Keras 3) before a model is built there. Returns the precision chosen; after a
    mixed one, ``float32_output`` keeps a Keras 3 model's logits in float32."""
    gpus = gpu_capabilities(running_backend(keras_module)) if requested == "auto" else []
    chosen, why = choose_precision(requested, gpus=gpus)
    print(f"precision: {chosen} ({why})")  # on stdout: a notebook keeps it in the cell's output
    set_policy(chosen, keras_module)
    return chosen


def float32_output(model, layer: str = "output_dense") -> None:
    """A Keras 3 (KerasHub) classifier's output layer computes in float32: its logits, the loss and the softmax."""
    if hasattr(model, layer):
        getattr(model, layer).dtype_policy = "float32"
