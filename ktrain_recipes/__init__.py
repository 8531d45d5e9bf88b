"""ktrain_recipes: what ktrain lacks for fine-tuning transformer text classifiers, lifted out of the notebooks.

Import this package before TensorFlow: it sets the compatibility shims (see ``compat``).

The public names below load their module on first use, so ``import ktrain_recipes`` stays light: the int8
service and ``--help`` never import matplotlib, scikit-learn or TensorFlow.
"""

from . import compat  # noqa: F401  (first: TF_USE_LEGACY_KERAS and numpy aliases)
from .config import RecipeConfig
from .distill import DistillSettings, distill  # eager: the function shares its module's name, and a lazy
from .errors import RecipesError               # load would leave kr.distill bound to the module

__version__ = "0.2.0"

# public name -> the module that owns it
_PUBLIC = {
    "bench": ["inference_row"],
    "batching": ["bucket_batches"],
    "compare": ["compare_runs", "recommend"],
    "data": ["EMOTION_LABELS", "load_emotion", "read_texts", "sample"],
    "ethics": ["exact_match", "get_task", "load_ethics", "results_table", "run_ethics"],
    "evaluate": ["evaluate_predictor", "format_report", "report_table", "score"],
    "loading": ["load_checked_predictor"],
    "maxlen": ["choose_maxlen", "load_tokenizer", "resolve_maxlen"],
    "models": ["REGISTRY", "list_models", "resolve_model"],
    "notebook": ["ci_overrides", "runs_folder", "setup_notebook"],
    "onnx_inference": ["export_onnx"],
    "params": ["albert_arithmetic", "parameter_table"],
    "plots": ["plot_confusion_matrix", "plot_history", "plot_label_distribution", "plot_latency_vs_accuracy",
              "plot_lr_find", "plot_parameters", "plot_token_lengths", "save_figure"],
    "prediction": ["Classifier", "KtrainClassifier", "as_classifier", "check_texts", "classify", "open_predictor"],
    "recipe": ["record_run", "run_recipe"],
    "saving": ["read_manifest", "save_checked_predictor"],
    "streaming": ["predict_file"],
    "timing": ["time_inference", "timed"],
    "tokens": ["token_lengths"],
    "train": ["epoch_timer", "few_steps_note", "fit_with_checkpoint", "optimizer_steps", "set_seed"],
}
_OWNER = {name: module for module, names in _PUBLIC.items() for name in names}
__all__ = ["RecipeConfig", "RecipesError", "DistillSettings", "distill", "__version__", *_OWNER]


def __getattr__(name: str):
    if name in _OWNER:
        import importlib

        value = getattr(importlib.import_module(f".{_OWNER[name]}", __name__), name)
        globals()[name] = value  # once loaded, a plain attribute
        return value
    raise AttributeError(f"module 'ktrain_recipes' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
