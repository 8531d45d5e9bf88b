"""Classify texts with a saved predictor: length-sorted batches, the truncation note; and the rules every reader and
writer of texts to classify follows (what counts as a text, pairs, the cut before tokenizing, one text per line),
which the CLI, the streaming reader, Ray, the service and ``kr.classify`` all apply."""

from __future__ import annotations

import os
import re
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ktrain_recipes.batch_policy import CLASSIFY_CHUNK
from ktrain_recipes.errors import RecipesError, note
from ktrain_recipes.inference.calibration import check_min_confidence, scaled, withheld
from ktrain_recipes.data.maxlen import token_lengths
from ktrain_recipes.data.readers import is_blank

_SURROGATE = re.compile("[\ud800-\udfff]")
# Characters kept per token of maxlen when a text is cut before tokenizing: a wordpiece covers at least one
# character, so the cut never changes what the model reads, except across very long runs of spaces.
CHARS_PER_TOKEN = 100


@runtime_checkable
class Classifier(Protocol):
    """What classifying needs from a loaded predictor: its labels, maxlen, tokenizer and probabilities.

    ``OnnxPredictor`` (the int8 path) satisfies it; a ktrain predictor does through ``KtrainClassifier``.
    """

    classes: list[str]
    maxlen: int
    tokenizer: Any

    def predict_proba(self, texts: list) -> np.ndarray:
        """Softmax probabilities, texts x labels (at the save's temperature, when it records one)."""


class KtrainClassifier:
    """A ktrain ``TextPredictor`` seen through the ``Classifier`` protocol."""

    def __init__(self, predictor):
        self.predictor = predictor
        self.classes = list(predictor.get_classes())
        self.maxlen = int(predictor.preproc.maxlen)
        self.tokenizer = predictor.preproc.get_tokenizer()
        self.pairs = getattr(predictor, "pairs", None)  # set by load_checked_predictor from the manifest
        self.multilabel = bool(getattr(predictor, "multilabel", False))  # several labels per text (a sigmoid each)
        self.thresholds = getattr(predictor, "thresholds", None)  # chosen on validation (inference.thresholds)
        self.temperature = getattr(predictor, "temperature", None)  # fitted on validation (inference.calibration)

    def predict_proba(self, texts: list) -> np.ndarray:
        probs = np.asarray(self.predictor.predict(list(texts), return_proba=True)).reshape(len(texts), -1)
        return probs if self.multilabel else scaled(probs, self.temperature)


def as_classifier(predictor) -> Classifier:
    """Return ``predictor`` if it is a ``Classifier``, else wrap a ktrain predictor in ``KtrainClassifier``."""
    return predictor if isinstance(predictor, Classifier) else KtrainClassifier(predictor)


def classify(predictor, texts, proba: bool = False, chunk: int = CLASSIFY_CHUNK, report: bool = False,
             min_confidence: float | None = None):
    """Return labels (or, with ``proba``, a texts x labels probability array) for texts or text pairs.

    ``report``: one dict per text instead, ``{"label", "tokens", "truncated"}`` (and ``"probabilities"`` by label
    with ``proba``): the tokens the model read of the text, and whether it was longer than maxlen and cut.
    ``min_confidence``: a text whose top probability is under it gets no label (None; in a report, ``"withheld":
    true``, its probabilities still given); choose it on validation (``calibration.choose_min_confidence``). Not
    for a predictor of several labels per text, whose thresholds already decide.

    ``predictor``: a ``Classifier`` (the int8 path) or a ktrain predictor. What this adds to ktrain's
    ``predict``: input checks, a note on stderr counting the texts longer than maxlen (they are truncated),
    and length-sorted chunks, since ktrain pads each call to its longest text.
    """
    model = as_classifier(predictor)
    if min_confidence is not None:
        check_min_confidence(min_confidence)
        if getattr(model, "multilabel", False):
            raise RecipesError("min_confidence is for a predictor of one label per text; this one gives several "
                               "labels per text, each over its own threshold chosen on validation, and a text may "
                               "already get none: leave min_confidence out")
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
    sets = label_sets(model, probs)
    held = withheld(probs, min_confidence)
    if report:
        rows = []
        for i, (row, n, cut_here) in enumerate(zip(probs, lengths, was_cut)):
            rows.append({"label": None if held[i] else model.classes[int(row.argmax())],
                         "tokens": int(min(n, model.maxlen)), "truncated": bool(n > model.maxlen or cut_here)})
            if min_confidence is not None:
                rows[-1]["withheld"] = bool(held[i])
            if sets is not None:  # the labels over their thresholds; "label" stays the most probable one
                rows[-1]["labels"] = sets[i]
            if proba:
                rows[-1]["probabilities"] = {c: float(p) for c, p in zip(model.classes, row)}
        return rows
    if proba:
        return probs
    if sets is not None:
        return sets
    return [None if held[j] else model.classes[i] for j, i in enumerate(probs.argmax(axis=1))]


def threshold_cuts(predictor) -> np.ndarray | None:
    """For a predictor of several labels per text, the probability each label needs (its threshold chosen on
    validation; 0.5 each for a predictor saved without them); None for a predictor of one label per text."""
    model = as_classifier(predictor)
    if not getattr(model, "multilabel", False):
        return None
    from ktrain_recipes.inference.thresholds import threshold_vector

    thresholds = getattr(model, "thresholds", None)
    return threshold_vector(thresholds, model.classes) if thresholds else np.full(len(model.classes), 0.5, np.float32)


def label_sets(model, probs: np.ndarray) -> list[list[str]] | None:
    """For a predictor of several labels per text, each text's labels over their thresholds (``threshold_cuts``);
    None for a predictor of one label per text."""
    from ktrain_recipes.inference.thresholds import labels_over

    cuts = threshold_cuts(model)
    return None if cuts is None else labels_over(probs, cuts, model.classes)


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


def unreadable(text: str) -> str | None:
    """Why the tokenizer cannot take ``text`` (a lone UTF-16 surrogate, which is not valid Unicode), or None."""
    found = _SURROGATE.search(text)
    return None if found is None else (f"holds a lone surrogate (U+{ord(found.group()):04X}) at character "
                                       f"{found.start()}, which is not valid Unicode: fix the text's encoding")


def problem(text: str) -> str | None:
    """Why ``text`` cannot be classified (blank, or unreadable), worded to follow its name ("text 3 ..."), or None.
    The one wording of these rules for the library, the command line and the service."""
    if is_blank(text):
        return ("is empty or only whitespace/invisible characters (or U+FFFD, or private-use characters): there is "
                "nothing to classify")
    return unreadable(text)


def cut(text: str, maxlen: int) -> str:
    """``text`` cut to ``CHARS_PER_TOKEN * maxlen`` characters before it is tokenized: the tokenizer reads a
    text in full before truncating it, so one huge line would otherwise cost memory in proportion to its size."""
    return text[: CHARS_PER_TOKEN * maxlen]


def check_texts(texts) -> list:
    """Validate prediction input: a string, or a non-empty sequence of strings (or of (text, text) pairs).

    Empty texts, and texts made only of whitespace or invisible characters, are rejected rather than
    given a meaningless label, as are texts the tokenizer cannot read (``unreadable``). Lists, tuples, pandas
    Series and numpy arrays are accepted; a DataFrame, a set (no order) or a mapping is refused.
    """
    if isinstance(texts, np.ndarray) and texts.ndim == 0:
        texts = texts.item()
    if isinstance(texts, str):
        texts = [texts]
    if type(texts).__name__ == "DataFrame":
        raise RecipesError("a DataFrame is a table, not a list of texts: pass its text column (table['text'])")
    if isinstance(texts, (set, frozenset)):
        raise RecipesError("a set has no order, so the labels could not be matched to the texts: pass a list")
    if texts is None or isinstance(texts, (bytes, dict)) or not hasattr(texts, "__iter__"):
        raise RecipesError("give at least one text to classify (a string or a list of strings)")
    texts = list(texts)
    if not texts:
        raise RecipesError("give at least one text to classify (a string or a list of strings)")
    for i, text in enumerate(texts):
        parts = list(text) if isinstance(text, tuple) and len(text) == 2 else [text]
        if isinstance(text, list) and len(text) == 2:  # a pair read back from JSON
            parts, texts[i] = list(text), tuple(text)
        for part in parts:
            if not isinstance(part, str):
                raise RecipesError(f"text {i} is a {type(part).__name__}, not a string: pass strings (or pairs "
                                   "of strings) only")
            why = problem(part)
            if why:
                raise RecipesError(f"text {i} {why}")
    if len({isinstance(t, tuple) for t in texts}) > 1:
        raise RecipesError("mix of single texts and text pairs: give one kind")
    return texts


_LINE_BREAKS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # what str.splitlines also breaks at


def escape(text: str) -> str:
    """Keep one prediction per line: tabs and newlines inside a text are written as \\t and \\n, and the other
    characters that split lines (form feed, U+0085, U+2028, ...) as \\uXXXX."""
    text = text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
    return "".join(f"\\u{ord(c):04x}" if c in _LINE_BREAKS else c for c in text)
