"""The model a service holds: a loaded predictor (int8 ONNX or ktrain), what names it, and its scores."""

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ktrain_recipes.batch_policy import MODEL_BATCH
from ktrain_recipes.errors import RecipesError, note
from ktrain_recipes.inference.prediction import as_classifier
from ktrain_recipes.predictor.manifest import ONNX_INT8, listed_files, read_metrics


@dataclass
class LoadedModel:
    """One loaded predictor: the classifier, what names it, and its manifest digest (to notice a new save)."""

    classifier: Any
    identity: dict
    pairs: bool | None
    digest: str
    metrics: dict
    counter: Any = None  # a copy of the tokenizer for counting tokens on the event loop: the Rust tokenizer
    # refuses to be used from two threads at once, and the model's own copy belongs to the batcher's worker

    def __post_init__(self):
        if self.counter is None and getattr(self.classifier, "tokenizer", None) is not None:
            import copy

            self.counter = copy.deepcopy(self.classifier.tokenizer)


def load_model(folder: str | Path, backend: str = "auto", threads: int | None = None,
               batch_size: int = MODEL_BATCH) -> LoadedModel:
    """Load a saved predictor for serving: the int8 ONNX copy (``int8``), ktrain's (``ktrain``), or with
    ``auto`` the int8 copy when the folder lists one. ``batch_size``: texts per model call (the service's
    ``--max-batch``), so that each batch the service forms is one call."""
    folder = Path(folder)
    if backend == "auto" and ONNX_INT8 in listed_files(folder):  # the load checks the hashes, once
        try:
            return load_model(folder, "int8", threads, batch_size)
        except RecipesError as exc:  # a damaged ONNX file disables only the int8 path
            note(f"warning: serving with ktrain's predictor: the int8 model cannot be used ({exc})")
            backend = "ktrain"
    elif backend == "auto":
        backend = "ktrain"
    if backend == "int8":
        from ktrain_recipes.inference.onnx_inference import load_int8_predictor

        model = load_int8_predictor(folder, threads=threads, batch_size=batch_size)
        identity, pairs = model.identity, model.pairs
    else:
        from ktrain_recipes.predictor.loading import load_consistent, predictor_from
        from ktrain_recipes.predictor.manifest import identity as make_identity

        def load(folder: Path, manifest: dict, digest: str):  # the folder is checked once, by this load_consistent
            return (predictor_from(folder, manifest, batch_size), make_identity(folder, manifest, digest, "ktrain"),
                    manifest.get("pairs"))

        predictor, identity, pairs = load_consistent(folder, load)
        model = as_classifier(predictor)
    return LoadedModel(model, identity, pairs, identity["manifest_sha256"], read_scores(folder))


def read_scores(folder: Path) -> dict:
    try:
        metrics = read_metrics(folder)
    except RecipesError:
        return {}
    return {k: metrics.get(k) for k in ("accuracy", "macro_f1", "n", "split", "exact_match") if k in metrics}
