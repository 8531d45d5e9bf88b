"""ktrain_recipes: what ktrain lacks for fine-tuning transformer text classifiers, lifted out of the notebooks.

Import this package before TensorFlow: it sets the compatibility shims (see ``compat``).
"""

from . import compat  # noqa: F401  (first: TF_USE_LEGACY_KERAS and numpy aliases)
from .compare import compare_runs, recommend
from .config import RecipeConfig
from .data import EMOTION_LABELS, load_emotion, read_texts, sample
from .errors import RecipesError
from .bench import inference_row
from .distill import DistillSettings, distill
from .ethics import exact_match, get_task, load_ethics, results_table, run_ethics
from .evaluate import evaluate_predictor, format_report, report_table, score
from .maxlen import choose_maxlen, load_tokenizer, resolve_maxlen
from .models import REGISTRY, list_models, resolve_model
from .notebook import ci_overrides, runs_folder, setup_notebook
from .params import albert_arithmetic, parameter_table
from .plots import (
    plot_confusion_matrix,
    plot_history,
    plot_label_distribution,
    plot_latency_vs_accuracy,
    plot_lr_find,
    plot_parameters,
    plot_token_lengths,
    save_figure,
)
from .onnx_inference import export_onnx
from .prediction import Classifier, KtrainClassifier, as_classifier, check_texts, classify, open_predictor
from .tokens import token_lengths
from .recipe import record_run, run_recipe
from .loading import load_checked_predictor
from .saving import read_manifest, save_checked_predictor
from .timing import time_inference, timed
from .train import epoch_timer, few_steps_note, fit_with_checkpoint, optimizer_steps, set_seed

__version__ = "0.2.0"


def __getattr__(name: str):
    # bucket_batches imports TensorFlow and ktrain: only when a notebook asks for it, not for `--help`
    if name == "bucket_batches":
        from .batching import bucket_batches

        return bucket_batches
    raise AttributeError(f"module 'ktrain_recipes' has no attribute {name!r}")
