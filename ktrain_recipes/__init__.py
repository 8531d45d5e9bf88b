"""ktrain_recipes: fine-tune transformer text classifiers on emotion with ktrain, step by step.

Import this package before TensorFlow: it sets the compatibility shims (see ``compat``).
"""

from . import compat  # noqa: F401  (first: TF_USE_LEGACY_KERAS and numpy aliases)
from .bench import compare_runs, recommend
from .data import EMOTION_LABELS, load_emotion, read_texts, sample
from .errors import RecipesError
from .evaluate import evaluate_predictor, format_report, report_table, score
from .models import REGISTRY, list_models, resolve_model
from .notebook import setup_notebook, timed
from .plots import (
    plot_confusion_matrix,
    plot_history,
    plot_label_distribution,
    plot_latency_vs_accuracy,
    plot_lr_find,
    plot_token_lengths,
    save_figure,
)
from .predictor import load_predictor, predict, save_predictor, time_inference, token_lengths
from .recipe import (
    build_transformer,
    find_lr,
    fit,
    get_learner,
    get_predictor,
    load_tokenizer,
    record_run,
    resolve_maxlen,
    run_recipe,
    set_seed,
)
from .tiny import smoke_mode, tiny_model

__version__ = "0.1.0"
