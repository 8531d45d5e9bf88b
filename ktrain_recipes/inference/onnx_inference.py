"""The int8 path (``--int8``): a saved predictor exported to ONNX (tf2onnx), int8-quantized, run by
onnxruntime, with no TensorFlow and no pickle. The conversion itself is ``onnx_convert``'s, in a child process.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ktrain_recipes import compat  # noqa: F401
from ktrain_recipes.batch_policy import MODEL_BATCH, length_groups
from ktrain_recipes.errors import RecipesError
from ktrain_recipes.inference import onnx_convert
from ktrain_recipes.inference.calibration import scaled
from ktrain_recipes.predictor.loading import load_consistent
from ktrain_recipes.predictor.manifest import DERIVED, ONNX_FP32, ONNX_INT8, sha256_file
from ktrain_recipes.predictor.saved import SavedPredictor, label_sets_of, read_predictor, temperature_of
from ktrain_recipes.predictor.staging import staged_predictor
from ktrain_recipes.data.maxlen import tokenize


def export_onnx(folder: str | os.PathLike, quantize: bool = True) -> dict[str, Path]:
    """Export a saved predictor's model to ONNX inside its folder (plus an int8 copy) and record them.

    The conversion runs in a child process (``onnx_convert``: it bounds the memory and returns it when done).
    The folder is rewritten through a staging copy and a swap, so a kill at any step leaves either the old
    or the new files, each matching the manifest. Running it again repairs damaged ONNX files.

    Args:
      folder: a predictor folder written by ``run_recipe``.
      quantize: also write ``model.int8.onnx`` (dynamic int8 quantization of the weights).
    """
    folder = Path(folder)
    read = read_predictor(folder).manifest  # the save this export rewrites: a new save meanwhile makes it refuse
    if not os.access(folder.parent, os.W_OK):
        raise RecipesError(f"cannot write beside '{folder}' (read-only): copy the predictor somewhere writable "
                           "and export the copy")
    try:
        with staged_predictor(folder, overwrite=True, copy_of=folder, skip=DERIVED,
                              rewrites=read["save_id"]) as stage:
            written, keys, _ = onnx_convert.convert_in_child(stage.path, stage.path, quantize=quantize,
                                                             shown_as=folder)
            manifest = dict(read)
            files = {k: v for k, v in manifest["files"].items() if k not in DERIVED}
            files.update({p.name: sha256_file(p) for p in written.values()})
            manifest.update(files=files, onnx_inputs=keys)
            stage.commit_manifest(manifest)
    except OSError as exc:
        raise RecipesError(f"cannot write the ONNX files beside '{folder}' ({exc.strerror or exc}): free some "
                           "space or choose a writable copy; the predictor is unchanged") from None
    return {kind: folder / p.name for kind, p in written.items()}


class OnnxPredictor:
    """A saved predictor's ONNX copy run by onnxruntime, loaded from files that hold no code.

    It reads the ONNX model, the tokenizer files and ``manifest.json`` (labels, maxlen, input names): no
    pickle and no TensorFlow. It satisfies ``prediction.Classifier`` and also offers ktrain's
    ``predict``/``get_classes``.
    """

    def __init__(self, folder: str | os.PathLike | SavedPredictor, int8: bool = True, batch_size: int = MODEL_BATCH,
                 strict: bool = False, threads: int | None = None):
        """``folder``: a predictor folder (read and checked here), or a save already read (``read_predictor``)."""
        self.int8, self.batch_size, self.threads = int8, batch_size, threads
        if isinstance(folder, SavedPredictor):
            self.folder = folder.folder
            self._load(folder)
        else:
            self.folder = Path(folder)
            load_consistent(self.folder, self._load, strict)

    def _load(self, saved: SavedPredictor) -> None:
        import onnxruntime as ort
        from transformers import AutoTokenizer

        from ktrain_recipes.predictor.loading import check_model_files, refuse_ranker

        folder, manifest = saved.folder, saved.manifest
        refuse_ranker(saved)
        check_model_files(saved)
        path = saved.derived(ONNX_INT8 if self.int8 else ONNX_FP32)
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if self.threads:  # a service shares the CPU with its HTTP side: fixed threads that sleep when idle
            options.intra_op_num_threads = self.threads
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            session = ort.InferenceSession(path.read_bytes(), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own exception types for unreadable models
            raise RecipesError(f"'{folder / path.name}' cannot be loaded by onnxruntime "
                               f"({str(exc).splitlines()[0][:120]}): `ktrain-recipes export --predictor {folder}` "
                               "rebuilds it") from None
        self.session, self.path = session, folder / path.name
        self.inputs = manifest["onnx_inputs"]
        self.classes = list(manifest["label_names"])
        outputs = session.get_outputs()[0].shape[-1]
        if isinstance(outputs, int) and outputs != len(self.classes):  # probabilities would not match the names
            raise RecipesError(f"'{folder}': the model has {outputs} outputs but the manifest names "
                               f"{len(self.classes)} labels: re-run train")
        self.maxlen = int(manifest["maxlen"])
        self.pairs = manifest.get("pairs")
        self.multilabel, self.thresholds = label_sets_of(saved)  # several labels per text: a sigmoid each
        self.temperature = temperature_of(saved)  # fitted on validation (calibrate --record), or None
        self.identity = {**saved.identity, "backend": "int8" if self.int8 else "onnx-fp32"}
        self.saved = saved
        self.tokenizer = AutoTokenizer.from_pretrained(saved.source, local_files_only=True)  # this save's own
        self.tokenizer.name_or_path = str(folder)

    def get_classes(self) -> list[str]:
        return list(self.classes)

    def predict_proba(self, texts: list) -> np.ndarray:
        """Softmax probabilities (texts x labels) for a list of texts or (text, text) pairs, at the save's
        temperature when it records one; for a predictor of several labels per text, a sigmoid per label.

        The texts are tokenized once, then run in calls of like length (``batch_policy.length_groups``: at most
        ``batch_size`` texts and ``CALL_TOKENS`` padded tokens each), each padded only to its own longest text, and the
        answers put back in the texts' order."""
        texts = list(texts)
        probs = np.zeros((len(texts), len(self.classes)), np.float32)
        if not texts:
            return probs
        enc = tokenize(self.tokenizer, texts, truncation=True, max_length=self.maxlen, return_token_type_ids=True)
        for group in length_groups([len(ids) for ids in enc["input_ids"]], self.batch_size):
            probs[group] = self._proba({k: [enc[k][i] for i in group] for k in self.inputs})
        return probs if self.multilabel else scaled(probs, self.temperature)

    def predict(self, texts, return_proba: bool = False):
        """ktrain's interface: labels, or probabilities with ``return_proba``, for one text or a list."""
        single = isinstance(texts, (str, tuple))
        probs = self.predict_proba([texts] if single else texts)
        if return_proba:
            return probs[0] if single else probs
        labels = [self.classes[i] for i in probs.argmax(axis=1)]
        if self.multilabel:  # ktrain's form: (label, probability) for every label
            labels = [list(zip(self.classes, row)) for row in probs]
        return labels[0] if single else labels

    def _proba(self, features: dict[str, list[list[int]]]) -> np.ndarray:
        """Run one call: each feature's rows padded to the longest (on the tokenizer's padding side)."""
        length = max(len(row) for row in features["input_ids"])
        pad = {"input_ids": self.tokenizer.pad_token_id or 0, "token_type_ids": self.tokenizer.pad_token_type_id}
        left = self.tokenizer.padding_side == "left"
        feed = {}
        for name, rows in features.items():
            array = np.full((len(rows), length), pad.get(name, 0), np.int32)
            for r, row in enumerate(rows):
                if left:
                    array[r, length - len(row):] = row
                else:
                    array[r, :len(row)] = row
            feed[name] = array
        logits = self.session.run(None, feed)[0]
        if self.multilabel:  # as ktrain's predictor does for a model trained with binary cross-entropy
            return 1.0 / (1.0 + np.exp(-logits))
        exp = np.exp(logits - logits.max(axis=1, keepdims=True))
        return exp / exp.sum(axis=1, keepdims=True)


def load_int8_predictor(folder: str | os.PathLike, int8: bool = True, strict: bool = False,
                        threads: int | None = None, batch_size: int = MODEL_BATCH) -> OnnxPredictor:
    """Load the int8 ONNX copy (or with ``int8=False`` the fp32 one) of a saved predictor.

    ``threads``: onnxruntime's intra-op threads, without spinning (default: its own choice, all cores).
    """
    return OnnxPredictor(folder, int8=int8, strict=strict, threads=threads, batch_size=batch_size)


