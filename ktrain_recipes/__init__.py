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


# public name -> the module that owns it
_PUBLIC = {
    "studies.bench": ["inference_row"],
    "training.batching": ["bucket_batches"],
    "studies.compare": ["committed_results", "compare_runs", "recommend"],
    "data.loading": ["load_data_for", "load_emotion", "sample"],
    "studies.ethics_data": ["exact_match", "get_task", "load_ethics"],
    "studies.ethics": ["committed_ethics_results", "results_table", "run_ethics"],
    "inference.evaluate": ["report_table", "score"],
    "predictor.loading": ["load_checked_predictor"],
    "data.maxlen": ["load_tokenizer", "resolve_maxlen"],
    "models": ["hub_reachable", "resolve_model"],
    "notebook": ["runs_folder", "setup_notebook"],
    "inference.onnx_inference": ["export_onnx"],
    "studies.params": ["albert_arithmetic", "parameter_table"],
    "studies.cost": ["CostSettings", "cost_table"],
    "training.precision": ["float32_output", "use_precision"],
    "studies.finetuned": ["compare_finetuned", "published_models", "published_table", "wrap_finetuned"],
    "plots": ["plot_confusion_matrix", "plot_history", "plot_label_distribution", "plot_latency_vs_accuracy",
              "plot_lr_find", "plot_parameters", "plot_token_lengths", "save_figure"],
    "inference.prediction": ["classify", "open_predictor"],
    "training.recipe": ["run_recipe", "transformer_preprocessor"],
    "training.record": ["record_run"],
    "segments": ["takes_segment_ids"],
    "keras3.one_cycle": ["OneCycle"],
    "keras3.lr_finder": ["LRFinder"],
    "keras3.presets": ["keras_hub_preset"],
    "predictor.saved": ["read_manifest"],
    "predictor.staging": ["save_checked_predictor"],
    "inference.input_files": ["read_texts"],
    "inference.timing": ["time_inference", "time_side_by_side"],
    "data.tokens": ["token_lengths"],
    "training.augment": ["augment"],
    "training.distill": ["DistillSettings", "distill", "distillation_loss", "label_accuracy", "pack_targets",
                         "ready_for_prediction", "teacher_logits_for"],
    "training.students": ["cut_layers", "pretrained_classifier"],
    "training.train": ["epoch_timer", "few_steps_note", "set_seed"],
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
