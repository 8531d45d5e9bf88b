"""The model a service holds: a loaded predictor (int8 ONNX or ktrain), what names it, and its scores."""

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ktrain_recipes.batch_policy import MODEL_BATCH
from ktrain_recipes.errors import RecipesError, note
from ktrain_recipes.inference.prediction import as_classifier
from ktrain_recipes.predictor.saved import SavedPredictor


@dataclass
class LoadedModel:
    """One loaded predictor: the classifier, what names it, its manifest digest, and the stamp of the manifest file
    it was read from (``stamp``: what the reloader compares, by the loaders' own rule, to notice a new save)."""

    classifier: Any
    identity: dict
    pairs: bool | None
    digest: str
    metrics: dict
    counter: Any = None  # a copy of the tokenizer for counting tokens on the event loop: the Rust tokenizer
    # refuses to be used from two threads at once, and the model's own copy belongs to the batcher's worker
    stamp: tuple | None = None


def load_model(folder: str | Path, backend: str = "auto", threads: int | None = None,
               batch_size: int = MODEL_BATCH) -> LoadedModel:
    """Load a saved predictor for serving: the int8 ONNX copy (``int8``), ktrain's (``ktrain``), or with
    ``auto`` the int8 copy when the folder lists one. ``batch_size``: texts per model call (the service's
    ``--max-call``), so that each batch the service forms is one call. The folder is read once
    (``saved.read_predictor``): the backend is chosen from, and every part loaded from, that one save."""
    from ktrain_recipes.predictor.loading import load_consistent

    return load_consistent(folder, lambda saved: load_saved(saved, backend, threads, batch_size))


def serving_model(settings, backend: str | None = None) -> LoadedModel:
    """The model a service holds for ``settings`` (a ``ServiceSettings``): its folder, backend, threads, and
    ``--max-call`` texts per model call. The one place the service, its reloader and Ray Serve load a model from."""
    return load_model(settings.predictor, backend or settings.backend, settings.threads, settings.max_call)


def load_saved(saved: SavedPredictor, backend: str = "auto", threads: int | None = None,
               batch_size: int = MODEL_BATCH) -> LoadedModel:
    """``load_model`` for a save already read (inside ``load_consistent``)."""
    chosen = ("int8" if "int8" in saved.backends else "ktrain") if backend == "auto" else backend
    classifier = None
    if chosen == "int8":
        from ktrain_recipes.inference.onnx_inference import OnnxPredictor

        try:
            classifier = OnnxPredictor(saved, int8=True, threads=threads, batch_size=batch_size)
        except RecipesError as exc:  # a damaged ONNX file disables only the int8 path
            if backend != "auto":
                raise
            note(f"warning: serving with ktrain's predictor: the int8 model cannot be used ({exc})")
            chosen = "ktrain"
    if classifier is None:
        from ktrain_recipes.predictor.loading import predictor_from

        classifier = as_classifier(predictor_from(saved, batch_size))
    scores = {k: saved.metrics.get(k) for k in ("accuracy", "macro_f1", "n", "split", "exact_match")
              if k in saved.metrics}
    tokenizer = getattr(classifier, "tokenizer", None)
    counter = copy.deepcopy(tokenizer) if tokenizer is not None else None
    return LoadedModel(classifier, {**saved.identity, "backend": chosen}, saved.pairs, saved.digest, scores, counter,
                       saved.stamp)
