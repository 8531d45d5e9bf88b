"""Classify texts with a saved predictor: input rules, length-sorted batches, the truncation note."""

from __future__ import annotations

import os
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ktrain_recipes.batch_policy import CLASSIFY_CHUNK
from ktrain_recipes.errors import RecipesError, note
from ktrain_recipes.data.tokens import token_lengths
from ktrain_recipes.data.characters import is_blank
from ktrain_recipes.inference.text_rules import CHARS_PER_TOKEN, check_texts, cut


@runtime_checkable
class Classifier(Protocol):
    """What classifying needs from a loaded predictor: its labels, maxlen, tokenizer and probabilities.

    ``OnnxPredictor`` (the int8 path) satisfies it; a ktrain predictor does through ``KtrainClassifier``.
    """

    classes: list[str]
    maxlen: int
    tokenizer: Any

    def predict_proba(self, texts: list) -> np.ndarray:
        """Softmax probabilities, texts x labels."""


class KtrainClassifier:
    """A ktrain ``TextPredictor`` seen through the ``Classifier`` protocol."""

    def __init__(self, predictor):
        self.predictor = predictor
        self.classes = list(predictor.get_classes())
        self.maxlen = int(predictor.preproc.maxlen)
        self.tokenizer = predictor.preproc.get_tokenizer()
        self.pairs = getattr(predictor, "pairs", None)  # set by load_checked_predictor from the manifest

    def predict_proba(self, texts: list) -> np.ndarray:
        return np.asarray(self.predictor.predict(list(texts), return_proba=True)).reshape(len(texts), -1)


def as_classifier(predictor) -> Classifier:
    """Return ``predictor`` if it is a ``Classifier``, else wrap a ktrain predictor in ``KtrainClassifier``."""
    return predictor if isinstance(predictor, Classifier) else KtrainClassifier(predictor)


def classify(predictor, texts, proba: bool = False, chunk: int = CLASSIFY_CHUNK, report: bool = False):
    """Return labels (or, with ``proba``, a texts x labels probability array) for texts or text pairs.

    ``report``: one dict per text instead, ``{"label", "tokens", "truncated"}`` (and ``"probabilities"`` by label
    with ``proba``): the tokens the model read of the text, and whether it was longer than maxlen and cut.

    ``predictor``: a ``Classifier`` (the int8 path) or a ktrain predictor. What this adds to ktrain's
    ``predict``: input checks, a note on stderr counting the texts longer than maxlen (they are truncated),
    and length-sorted chunks, since ktrain pads each call to its longest text.
    """
    model = as_classifier(predictor)
    texts = check_texts(texts)
    if getattr(model, "pairs", None) is False and isinstance(texts[0], tuple):
        raise RecipesError("this predictor classifies single texts, and was given text pairs: pass strings")
    if getattr(model, "pairs", None) is True and not isinstance(texts[0], tuple):
        raise RecipesError("this predictor classifies sentence pairs, and was given single texts: pass (first, "
                           "second) pairs (on the command line, --pair-column names the second sentence's column)")
    limit = CHARS_PER_TOKEN * model.maxlen
    was_cut = np.array([any(len(p) > limit for p in (t if isinstance(t, tuple) else (t,))) for t in texts])
    texts = [tuple(cut(p, model.maxlen) for p in t) if isinstance(t, tuple) else cut(t, model.maxlen)
             for t in texts]
    for i in np.flatnonzero(was_cut):  # the cut kept only characters the model cannot read: say so, read nothing
        parts = texts[i] if isinstance(texts[i], tuple) else (texts[i],)
        if any(is_blank(p) for p in parts):
            raise RecipesError(f"text {i} has nothing to read in its first {limit:,} characters (only spaces or "
                               f"invisible characters), and the model reads no further (maxlen {model.maxlen} "
                               "tokens): remove the blank run at its start")
    lengths = np.array(token_lengths(model.tokenizer, texts))
    n_long = int(((lengths > model.maxlen) | was_cut).sum())
    if n_long:
        note(f"note: {n_long} of {len(texts)} texts exceed maxlen={model.maxlen} tokens "
              "and were truncated")
    order = np.argsort(lengths, kind="stable")
    probs = np.empty((len(texts), len(model.classes)), dtype=np.float32)
    for start in range(0, len(texts), chunk):
        idx = order[start:start + chunk]
        probs[idx] = model.predict_proba([texts[i] for i in idx])
    if report:
        rows = []
        for row, n, cut_here in zip(probs, lengths, was_cut):
            rows.append({"label": model.classes[int(row.argmax())], "tokens": int(min(n, model.maxlen)),
                         "truncated": bool(n > model.maxlen or cut_here)})
            if proba:
                rows[-1]["probabilities"] = {c: float(p) for c, p in zip(model.classes, row)}
        return rows
    if proba:
        return probs
    return [model.classes[i] for i in probs.argmax(axis=1)]


def open_predictor(folder: str | os.PathLike, int8: bool = False, strict: bool = False,
                   unpickle_preproc: bool = False):
    """Load a saved predictor: ktrain's (rebuilt without its pickle), or with ``int8`` its int8 ONNX copy.

    ``unpickle_preproc``: see ``loading.load_checked_predictor``.
    """
    if int8:
        from ktrain_recipes.inference.onnx_inference import load_int8_predictor

        return load_int8_predictor(folder, strict=strict)
    from ktrain_recipes.predictor.loading import load_checked_predictor

    return load_checked_predictor(folder, strict=strict, unpickle_preproc=unpickle_preproc)
