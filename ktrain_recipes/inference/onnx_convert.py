"""Converting a saved predictor's Keras model to ONNX (and its int8 copy), in a fresh Python process.

Why a process of its own: tf2onnx rewrites every node's protobuf on each pass of its optimizers (36 passes for
MPNet-base). With protobuf's default C backend (upb), the replaced messages stay in their arena until the whole
graph is freed, so each pass keeps one more copy of the weights: converting MPNet-base (438 MB of weights) peaked
at 19.2 GB. With protobuf's pure-Python backend they are freed, and the peak is 8.2 GB, in TensorFlow's own graph
optimizer (grappler), and the conversion is faster. The backend is chosen when protobuf is first imported, so a
process that has already imported TensorFlow (a notebook's kernel) cannot switch: the conversion runs in a child
interpreter, and all its memory goes back when it ends. ``benchmarks/export_memory.py`` measures the peak.

ktrain's own ``export_model_to_onnx`` fails on this stack (it goes through TF-Lite, which rejects ``Erfc``), and
tf2onnx on the plain model writes an ``Erfc`` node that onnxruntime refuses. tf_keras' exact GELU is what lowers
to ``Erfc``; the same function written with ``erf`` converts cleanly.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

from ktrain_recipes.errors import RecipesError
from ktrain_recipes.predictor.manifest import ONNX_FP32, ONNX_INT8

OPSET = 17
#: protobuf's pure-Python backend, for the child only (see the module's docstring).
CHILD_ENV = {"PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION": "python"}
_ERROR = "error: "  # the child's stderr line on a refusal: the one line the parent raises
_OS_ERROR = "oserror: "  # ... on a failed read or write (a full disk): the parent raises it as OSError


class Converted(NamedTuple):
    """What the child wrote: the files by kind (``fp32``, ``int8``), the model's input names, and the protobuf
    backend it converted with (``python`` unless the environment overrode it)."""

    files: dict[str, Path]
    inputs: list[str]
    protobuf: str


def convert_in_child(folder: str | os.PathLike, out_dir: str | os.PathLike, quantize: bool = True,
                     shown_as: str | os.PathLike | None = None) -> Converted:
    """Write ``model.onnx`` (and with ``quantize`` ``model.int8.onnx``) for the predictor in ``folder`` into
    ``out_dir``, in a child process, and say what it wrote.

    ``shown_as``: the folder's name in messages (``export`` converts a staging copy of the user's folder).
    A refusal is raised as ``RecipesError``, a failed read or write as ``OSError``."""
    shown = str(shown_as or folder)
    package_root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, **CHILD_ENV,
           "PYTHONPATH": os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH")) if p)}
    command = [sys.executable, "-m", "ktrain_recipes.inference.onnx_convert", str(folder), str(out_dir),
               "--parent", str(os.getpid())]
    done = subprocess.run(command + ([] if quantize else ["--no-quantize"]), env=env, capture_output=True,
                          text=True)
    if done.returncode < 0:
        raise RecipesError(f"converting '{shown}' to ONNX was stopped by signal {-done.returncode} (out of "
                           "memory? a base-size model needs about 8 GB free): free memory and run export again; "
                           "the predictor is unchanged")
    lines = done.stderr.strip().splitlines() or ["no message"]
    if done.returncode != 0:
        for line in reversed(lines):
            if line.startswith(_OS_ERROR):
                errno, strerror = line[len(_OS_ERROR):].split(" ", 1)
                raise OSError(int(errno), strerror)
            if line.startswith(_ERROR):
                raise RecipesError(line[len(_ERROR):].replace(str(folder), shown))
        raise RecipesError(f"converting '{shown}' to ONNX failed ({lines[-1][:200]}): the predictor is unchanged")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return Converted({kind: Path(path) for kind, path in result["files"].items()}, result["inputs"],
                     result["protobuf"])


def convert(folder: str | os.PathLike, out_dir: str | os.PathLike,
            quantize: bool = True) -> tuple[dict[str, Path], list[str]]:
    """The child's work (see ``convert_in_child``): load the checked predictor, convert it with tf2onnx,
    quantize the weights to int8 (dynamic quantization)."""
    from ktrain_recipes import compat  # noqa: F401  (tf-keras before TensorFlow)
    import tensorflow as tf
    import tf2onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from ktrain_recipes.predictor.loading import load_checked_predictor

    out_dir = Path(out_dir)
    predictor = load_checked_predictor(folder)
    model = predictor.model
    use_erf_gelu(model)
    keys = ["input_ids", "attention_mask"] + (["token_type_ids"] if predictor.preproc.use_token_type_ids else [])
    spec = [tf.TensorSpec([None, None], tf.int32, name=k) for k in keys]

    @tf.function(input_signature=spec)
    def logits(*tensors):
        return model(dict(zip(keys, tensors)), training=False).logits

    tf2onnx.convert.from_function(logits, input_signature=spec, opset=OPSET, output_path=str(out_dir / ONNX_FP32))
    written = {"fp32": out_dir / ONNX_FP32}
    if quantize:
        with _without_preprocessing_hint():
            quantize_dynamic(str(out_dir / ONNX_FP32), str(out_dir / ONNX_INT8), weight_type=QuantType.QInt8)
        written["int8"] = out_dir / ONNX_INT8
    return written, keys


def erf_gelu(x):
    """Exact GELU written with ``erf`` (tf2onnx lowers tf_keras' form to ``Erfc``, which onnxruntime refuses)."""
    import tensorflow as tf

    return 0.5 * x * (1.0 + tf.math.erf(x / math.sqrt(2.0)))


def use_erf_gelu(model) -> int:
    """Swap every exact-GELU activation for the erf form; return how many were swapped."""
    swapped = 0
    for layer in model.submodules:
        for attr in ("intermediate_act_fn", "activation"):
            fn = getattr(layer, attr, None)
            if callable(fn) and "gelu" in getattr(fn, "__name__", "").lower():
                object.__setattr__(layer, attr, erf_gelu)  # bypass Keras' attribute tracking
                swapped += 1
    return swapped


@contextmanager
def _without_preprocessing_hint():
    """Silence onnxruntime's "Please consider to run pre-processing before quantization" (logged on the root
    logger at every quantize_dynamic): its shape inference and graph optimization are what our export already
    gets from tf2onnx and from onnxruntime's own session-time optimization."""
    import logging

    class Hint(logging.Filter):
        def filter(self, record):
            return "pre-processing before quantization" not in record.getMessage()

    hint, root = Hint(), logging.getLogger()
    root.addFilter(hint)
    try:
        yield
    finally:
        root.removeFilter(hint)


def die_with(parent: int) -> None:
    """End this child when ``parent`` ends, however it ends: an ``export`` killed by SIGKILL must not leave behind
    a conversion that runs on for minutes and holds gigabytes (MPNet-base: about 8 GB). Linux's parent-death
    signal; elsewhere nothing is asked."""
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux
        return
    if os.getppid() != parent:  # the parent ended before the request was made
        os._exit(1)


def main(argv: list[str] | None = None) -> int:
    """``python -m ktrain_recipes.inference.onnx_convert FOLDER OUT_DIR [--no-quantize]`` (run by the parent)."""
    import argparse

    parser = argparse.ArgumentParser(description="convert a saved predictor to ONNX (run by `export`)")
    parser.add_argument("folder")
    parser.add_argument("out_dir")
    parser.add_argument("--no-quantize", action="store_true")
    parser.add_argument("--parent", type=int, help="the pid of the process waiting for this one")
    args = parser.parse_args(argv)
    if args.parent:
        die_with(args.parent)
    try:
        written, keys = convert(args.folder, args.out_dir, quantize=not args.no_quantize)
    except RecipesError as exc:
        print(f"{_ERROR}{exc}", file=sys.stderr, flush=True)
        return 1
    except OSError as exc:
        if exc.errno is None:
            raise
        print(f"{_OS_ERROR}{exc.errno} {exc.strerror}", file=sys.stderr, flush=True)
        return 1
    from google.protobuf.internal import api_implementation

    print(json.dumps({"files": {kind: str(path) for kind, path in written.items()}, "inputs": keys,
                      "protobuf": api_implementation.Type()}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
