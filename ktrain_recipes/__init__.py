"""ktrain_recipes: what ktrain lacks for fine-tuning transformer text classifiers, lifted out of the notebooks.

Import this package before TensorFlow: it sets the compatibility shims (see ``compat``).

The public names below load their module on first use, so ``import ktrain_recipes`` stays light: the int8
service and ``--help`` never import matplotlib, scikit-learn or TensorFlow.
"""

import sys as _sys

from ktrain_recipes import compat  # noqa: F401  (first: TF_USE_LEGACY_KERAS and numpy aliases)
from ktrain_recipes.config import RecipeConfig
from ktrain_recipes.errors import RecipesError
from ktrain_recipes.versions import __version__

if "ipykernel" in _sys.modules:  # in a notebook, TensorFlow's C++ start-up lines would land in the cell's output
    compat.import_tensorflow_quietly()


# The public names, by the module that owns each, with why it is here: every one is used in a notebook, for something
# ktrain does not do (tests/test_imports.py holds both). What serves only the commands, the service, the studies' own
# scripts or the tests is imported from its module, not from ``kr``.
_PUBLIC = {
    "notebook": {
        "setup_notebook": "a notebook's first cell: quiet library logs, one plot style, a table of the runtime",
        "runs_folder": "where runs are kept, in Google Drive on Colab so that later notebooks find them",
    },
    "models": {
        "resolve_model": "short names and the offline MiniLM/MPNet folders for text.Transformer, which takes hub ids",
        "hub_reachable": "whether the hub answers, so that a cell can skip a download instead of hanging on it",
    },
    "data.loading": {
        "load_emotion": "emotion from a folder, the hub or the shipped slice: ktrain reads only files it is given",
        "load_data_for": "any CSV/TSV/folder/hub dataset named by DataSettings, checked, with its label words",
        "sample": "a stratified, seeded subset: ktrain has no sampler",
    },
    "data.maxlen": {
        "load_tokenizer": "the model's tokenizer, to look at lengths before text.Transformer is made",
        "resolve_maxlen": "maxlen chosen from the texts' token lengths (ktrain takes a fixed number)",
    },
    "data.tokens": {"token_lengths": "tokens per text or pair before truncation, to choose maxlen"},
    "segments": {
        "takes_segment_ids": "whether a model reads segment ids: ktrain's own check is False on transformers 4.2x+",
    },
    "training.recipe": {
        "run_recipe": "notebook 01's ktrain steps in one call, with checkpoint, resume and a checked save",
        "transformer_preprocessor": "text.Transformer told from the model whether it reads segment ids",
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
        "float32_output": "a Keras 3 classifier's output in float32 under mixed precision",
    },
    "training.augment": {"augment": "altered copies of texts for distillation's transfer data"},
    "training.distill": {
        "DistillSettings": "distillation's settings (teacher, layers, temperature, alpha, copies): ktrain has none",
        "distill": "a student trained from a saved teacher's logits through ktrain's learner",
        "distillation_loss": "the loss on labels and the teacher's softened probabilities",
        "pack_targets": "the teacher's logits beside each label in ktrain's dataset",
        "teacher_logits_for": "a teacher's logits for texts read with its own tokenizer",
        "label_accuracy": "accuracy on the label half of packed targets",
        "ready_for_prediction": "the student recompiled for ktrain.get_predictor",
    },
    "training.students": {
        "pretrained_classifier": "a pretrained checkpoint with a fresh head, to cut into a student",
        "cut_layers": "a student keeping every other encoder layer of a BERT-family model",
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
    "predictor.saved": {"read_manifest": "a saved predictor's manifest, checked"},
    "plots": {
        "plot_label_distribution": "examples per label",
        "plot_token_lengths": "token lengths with maxlen marked",
        "plot_history": "loss and accuracy per epoch (learner.plot draws one curve at a time)",
        "plot_confusion_matrix": "the confusion matrix as a heatmap",
        "plot_lr_find": "a rate finder's curve with ktrain's two suggested rates, for the Keras 3 path",
        "plot_latency_vs_accuracy": "models as bubbles: latency against accuracy, area by size",
        "plot_parameters": "each model's parameters by part",
        "save_figure": "a figure written as PNG beside a run",
    },
    "studies.compare": {
        "compare_runs": "saved runs side by side from their metrics.json",
        "committed_results": "the course's committed reference runs, to set a learner's run beside",
        "recommend": "a model for accuracy, latency and memory, argued from the figures",
    },
    "studies.bench": {"inference_row": "one saved predictor scored and timed: a row of the comparison"},
    "studies.params": {
        "parameter_table": "parameters by part from each model's configuration",
        "albert_arithmetic": "ALBERT's two savings as arithmetic",
    },
    "studies.cost": {
        "CostSettings": "what cost_table measures",
        "cost_table": "training and inference cost of each architecture at its real size",
    },
    "studies.finetuned": {
        "published_models": "the public fine-tuned emotion models and their cards' figures",
        "published_table": "those figures as a table",
        "wrap_finetuned": "ktrain's tutorial A3 wrap of a fine-tuned classifier, with its label order checked",
        "compare_finetuned": "those models scored on the same split as ours",
    },
    "studies.ethics_data": {
        "get_task": "an ETHICS task by name: its files, columns and groups",
        "load_ethics": "an ETHICS task with whole groups held out for validation",
        "exact_match": "ETHICS' score: groups whose rows are all right",
    },
    "studies.ethics": {
        "run_ethics": "a task trained and scored, the ranker for utilitarianism",
        "committed_ethics_results": "our committed full ETHICS runs, per model",
        "results_table": "our runs beside the published leaderboard",
    },
    "keras3.one_cycle": {"OneCycle": "ktrain's one-cycle schedule for Keras 3, which ktrain does not run on"},
    "keras3.lr_finder": {"LRFinder": "ktrain's rate finder for Keras 3"},
    "keras3.presets": {"keras_hub_preset": "a KerasHub preset from a local Hugging Face folder, offline"},
}
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
