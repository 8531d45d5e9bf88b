"""The fast inference path (``--fast``): a saved predictor exported to ONNX (tf2onnx), int8-quantized,
run by onnxruntime.

ktrain's own ``export_model_to_onnx`` fails on this stack (it goes through TF-Lite, which rejects
``Erfc``), and tf2onnx on the plain model writes an ``Erfc`` node that onnxruntime refuses. tf_keras'
exact GELU is what lowers to ``Erfc``; the same function written with ``erf`` converts cleanly.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np

from . import compat  # noqa: F401
from .errors import RecipesError
from .tokens import tokenize
from .saving import MANIFEST, load_checked_predictor, read_manifest, sha256_file, write_json_atomic

ONNX_FP32 = "model.onnx"
ONNX_INT8 = "model.int8.onnx"
OPSET = 17


def _erf_gelu(x):
    import tensorflow as tf

    return 0.5 * x * (1.0 + tf.math.erf(x / math.sqrt(2.0)))  # exact GELU, without Erfc


def _use_erf_gelu(model) -> int:
    """Swap every exact-GELU activation for the erf form; return how many were swapped."""
    swapped = 0
    for layer in model.submodules:
        for attr in ("intermediate_act_fn", "activation"):
            fn = getattr(layer, attr, None)
            if callable(fn) and "gelu" in getattr(fn, "__name__", "").lower():
                object.__setattr__(layer, attr, _erf_gelu)  # bypass Keras' attribute tracking
                swapped += 1
    return swapped


def export_onnx(folder: str | os.PathLike, quantize: bool = True) -> dict[str, Path]:
    """Export a saved predictor's model to ONNX inside its folder (plus an int8 copy) and record them.

    Args:
      folder: a predictor folder written by ``run_recipe``.
      quantize: also write ``model.int8.onnx`` (dynamic int8 quantization of the weights).
    """
    import tensorflow as tf
    import tf2onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    folder = Path(folder)
    predictor = load_checked_predictor(folder)
    model = predictor.model
    _use_erf_gelu(model)
    keys = ["input_ids", "attention_mask"] + (["token_type_ids"] if predictor.preproc.use_token_type_ids else [])
    spec = [tf.TensorSpec([None, None], tf.int32, name=k) for k in keys]

    @tf.function(input_signature=spec)
    def logits(*tensors):
        return model(dict(zip(keys, tensors)), training=False).logits

    written = {}
    partial = folder / f".{ONNX_FP32}.partial"
    tf2onnx.convert.from_function(logits, input_signature=spec, opset=OPSET, output_path=str(partial))
    if quantize:
        qpartial = folder / f".{ONNX_INT8}.partial"
        quantize_dynamic(str(partial), str(qpartial), weight_type=QuantType.QInt8)
        os.replace(qpartial, folder / ONNX_INT8)
        written["int8"] = folder / ONNX_INT8
    os.replace(partial, folder / ONNX_FP32)
    written["fp32"] = folder / ONNX_FP32
    _add_to_manifest(folder, written.values(), keys)
    return written


def _add_to_manifest(folder: Path, paths, keys: list[str]) -> None:
    manifest = json.loads((folder / MANIFEST).read_text())
    manifest["files"].update({p.name: sha256_file(p) for p in paths})
    manifest["onnx_inputs"] = keys
    write_json_atomic(folder / MANIFEST, manifest)


class _Preproc:
    """The two things ``predictor.predict`` needs from a preprocessor."""

    def __init__(self, tokenizer, maxlen: int):
        self.tokenizer, self.maxlen = tokenizer, maxlen

    def get_tokenizer(self):
        return self.tokenizer


class OnnxPredictor:
    """A saved predictor run by onnxruntime: same ``predict``/``get_classes`` interface as ktrain's."""

    def __init__(self, folder: str | os.PathLike, int8: bool = True, batch_size: int = 64, strict: bool = False):
        import onnxruntime as ort
        from transformers import AutoTokenizer

        folder = Path(folder)
        manifest = read_manifest(folder, strict)
        path = folder / (ONNX_INT8 if int8 else ONNX_FP32)
        if path.name not in manifest["files"]:
            raise RecipesError(f"'{folder}' has no {path.name}: run `python -m ktrain_recipes export "
                               f"--predictor {folder}` first")
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        try:
            self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own exception types for unreadable models
            raise RecipesError(f"'{path}' cannot be loaded by onnxruntime ({str(exc).splitlines()[0][:120]}): "
                               f"re-run `python -m ktrain_recipes export --predictor {folder}`") from None
        self.inputs = manifest["onnx_inputs"]
        self.classes = manifest["label_names"]
        self.preproc = _Preproc(AutoTokenizer.from_pretrained(folder), manifest["maxlen"])
        self.batch_size, self.path = batch_size, path

    def get_classes(self) -> list[str]:
        return list(self.classes)

    def predict(self, texts, return_proba: bool = False):
        """Return labels, or softmax probabilities with ``return_proba``, for a list of texts."""
        single = isinstance(texts, (str, tuple))
        texts = [texts] if single else list(texts)
        probs = np.concatenate([self._proba(texts[i:i + self.batch_size])
                                for i in range(0, len(texts), self.batch_size)])
        if return_proba:
            return probs[0] if single else probs
        labels = [self.classes[i] for i in probs.argmax(axis=1)]
        return labels[0] if single else labels

    def _proba(self, texts: list[str]) -> np.ndarray:
        enc = tokenize(self.preproc.tokenizer, texts, padding=True, truncation=True, max_length=self.preproc.maxlen,
                       return_tensors="np", return_token_type_ids=True)
        logits = self.session.run(None, {k: enc[k].astype(np.int32) for k in self.inputs})[0]
        exp = np.exp(logits - logits.max(axis=1, keepdims=True))
        return exp / exp.sum(axis=1, keepdims=True)


def load_onnx_predictor(folder: str | os.PathLike, int8: bool = True, strict: bool = False) -> OnnxPredictor:
    """Load the ONNX (int8 by default) copy of a saved predictor."""
    return OnnxPredictor(folder, int8=int8, strict=strict)
