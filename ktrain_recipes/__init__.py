"""ktrain_recipes: what ktrain lacks for fine-tuning transformer text classifiers, lifted out of the notebooks.

Import this package before TensorFlow: it sets the compatibility shims (see ``compat``).

The public names below load their module on first use, so ``import ktrain_recipes`` stays light: the int8
service and ``--help`` never import matplotlib, scikit-learn or TensorFlow.
"""

import sys as _sys
from typing import TYPE_CHECKING as _TYPE_CHECKING

from ktrain_recipes import compat  # noqa: F401  (first: TF_USE_LEGACY_KERAS and numpy aliases)
from ktrain_recipes.config import RecipeConfig
from ktrain_recipes.errors import RecipesError
from ktrain_recipes.versions import __version__

if "ipykernel" in _sys.modules:  # in a notebook, TensorFlow's C++ start-up lines would land in the cell's output
    compat.import_tensorflow_quietly()


# The public names, by the module that owns each, with why it is here: every one is used in a learner's notebook, for
# something ktrain does not do (tests/test_imports.py holds both, and holds the face to at most 40 names). What serves
# only the commands, the service, the studies, distillation or the tests lives in the tools package beside this one
# (``ktrain_recipes_tools``), or is imported from its module, not from ``kr``.
_PUBLIC = {
    "notebook": {
        "setup_notebook": "a notebook's first cell: quiet library logs, one plot style, a table of the runtime",
        "runs_folder": "where runs are kept, in Google Drive on Colab so that later notebooks find them",
    },
    "models": {
        "resolve_model": "short names and the offline MiniLM/MPNet folders for text.Transformer, which takes hub ids",
    },
    "data.loading": {
        "load_emotion": "emotion from a folder, the hub or the shipped slice: ktrain reads only files it is given",
        "load_data_for": "any CSV/TSV/folder/hub dataset named by DataSettings, checked, with its label words",
        "sample": "a stratified, seeded subset: ktrain has no sampler",
    },
    "data.maxlen": {
        "load_tokenizer": "the model's tokenizer, to look at lengths before text.Transformer is made",
        "resolve_maxlen": "maxlen chosen from the texts' token lengths (ktrain takes a fixed number)",
        "token_lengths": "tokens per text or pair before truncation, to choose maxlen",
    },
    "segments": {
        "takes_segment_ids": "whether a model reads segment ids: ktrain's own check is False on transformers 4.2x+",
    },
    "training.recipe": {
        "run_recipe": "notebook 01's ktrain steps in one call, with checkpoint, resume and a checked save",
    },
    "training.batching": {
        "bucket_batches": "batches of similar length, padded to their longest text: ktrain pads to maxlen",
    },
    "training.train": {
        "set_seed": "Python, numpy and TensorFlow seeded, TF ops deterministic: ktrain seeds nothing",
        "epoch_timer": "seconds per epoch and the history in a callback (ktrain prints only)",
        "few_steps_note": "a warning when a small dataset gives too few weight updates to learn",
    },
    "training.record": {"record_run": "what a run used and measured, as metrics.json (ktrain keeps no record)"},
    "training.precision": {
        "use_precision": "mixed precision chosen from the hardware, and said why",
    },
    "inference.evaluate": {
        "score": "accuracy, macro-F1, the report and the confusion matrix as values (learner.validate prints)",
        "report_table": "the per-label report as a table",
    },
    "inference.prediction": {
        "classify": "labels or probabilities for texts or pairs from any of our predictors",
        "open_predictor": "a saved predictor as ktrain's, rebuilt without its pickle, or its int8 ONNX copy",
    },
    "inference.timing": {
        "time_inference": "throughput and single-text latency (p50/p95) of a predictor",
        "time_side_by_side": "several predictors timed in alternation, fair on a shared machine",
    },
    "inference.onnx_inference": {"export_onnx": "ONNX and int8 copies of a saved predictor, checked and recorded"},
    "inference.input_files": {"read_texts": "texts from a CSV, TSV, JSONL or text file, with their other columns"},
    "predictor.staging": {
        "save_checked_predictor": "predictor.save with metrics, a manifest of digests, and an atomic swap",
    },
    "predictor.loading": {
        "load_checked_predictor": "ktrain.load_predictor's result, checked against the manifest, without its pickle",
    },
    "records": {
        "committed_results": "the course's committed reference runs, to set a learner's run beside",
    },
    "plots": {
        "plot_label_distribution": "examples per label",
        "plot_token_lengths": "token lengths with maxlen marked",
        "plot_history": "loss and accuracy per epoch (learner.plot draws one curve at a time)",
        "plot_confusion_matrix": "the confusion matrix as a heatmap",
        "plot_lr_find": "a rate finder's curve with ktrain's two suggested rates, for the Keras 3 path",
    },
    "keras3.one_cycle": {"OneCycle": "ktrain's one-cycle schedule for Keras 3, which ktrain does not run on"},
    "keras3.lr_finder": {"LRFinder": "ktrain's rate finder for Keras 3"},
    "keras3.presets": {"keras_hub_preset": "a KerasHub preset from a local Hugging Face folder, offline"},
}
if _TYPE_CHECKING:  # what editors and type checkers follow to each name's definition; never run, so no cost
    from ktrain_recipes.notebook import setup_notebook, runs_folder
    from ktrain_recipes.models import resolve_model
    from ktrain_recipes.data.loading import load_emotion, load_data_for, sample
    from ktrain_recipes.data.maxlen import load_tokenizer, resolve_maxlen, token_lengths
    from ktrain_recipes.segments import takes_segment_ids
    from ktrain_recipes.training.recipe import run_recipe
    from ktrain_recipes.training.batching import bucket_batches
    from ktrain_recipes.training.train import set_seed, epoch_timer, few_steps_note
    from ktrain_recipes.training.record import record_run
    from ktrain_recipes.training.precision import use_precision
    from ktrain_recipes.inference.evaluate import score, report_table
    from ktrain_recipes.inference.prediction import classify, open_predictor
    from ktrain_recipes.inference.timing import time_inference, time_side_by_side
    from ktrain_recipes.inference.onnx_inference import export_onnx
    from ktrain_recipes.inference.input_files import read_texts
    from ktrain_recipes.predictor.staging import save_checked_predictor
    from ktrain_recipes.predictor.loading import load_checked_predictor
    from ktrain_recipes.records import committed_results
    from ktrain_recipes.plots import (
        plot_label_distribution,
        plot_token_lengths,
        plot_history,
        plot_confusion_matrix,
        plot_lr_find,
    )
    from ktrain_recipes.keras3.one_cycle import OneCycle
    from ktrain_recipes.keras3.lr_finder import LRFinder
    from ktrain_recipes.keras3.presets import keras_hub_preset

_OWNER = {name: module for module, names in _PUBLIC.items() for name in names}
__all__ = ["RecipeConfig", "RecipesError", "__version__", *_OWNER]


def __getattr__(name: str):
    if name in _OWNER:
        import importlib

        value = getattr(importlib.import_module(f"{__name__}.{_OWNER[name]}"), name)
        globals()[name] = value  # once loaded, a plain attribute
        return value
    raise AttributeError(f"module 'ktrain_recipes' has no attribute {name!r}")


def __dir__():
    # the public surface: the names above, not the submodules an import leaves as attributes
    return sorted(set(__all__) | {n for n in globals() if n.startswith("_")})
