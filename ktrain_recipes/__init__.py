"""ktrain_recipes: fine-tune transformer text classifiers on emotion with ktrain, step by step.

Import this package before TensorFlow: it sets the compatibility shims (see ``compat``).
"""

from . import compat  # noqa: F401  (first: TF_USE_LEGACY_KERAS and numpy aliases)
from .data import EMOTION_LABELS, load_emotion, sample
from .errors import RecipesError
from .evaluate import evaluate_predictor, format_report, report_table, score
from .models import REGISTRY, list_models, resolve_model
from .predictor import load_predictor, predict, save_predictor, time_inference
from .recipe import (
    build_transformer,
    find_lr,
    fit,
    get_learner,
    get_predictor,
    load_tokenizer,
    resolve_maxlen,
    run_recipe,
    set_seed,
    token_lengths,
)

__version__ = "0.1.0"
