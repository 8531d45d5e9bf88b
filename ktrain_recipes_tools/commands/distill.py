"""``ktrain-recipes distill``: train a smaller student from a saved predictor (the teacher)."""

from ktrain_recipes_tools.commands.flags import add_flags, settings_from_args
from ktrain_recipes.config import DataSettings, OutputSettings, RecipeConfig, SampleSettings, TrainingSettings
from ktrain_recipes_tools.training.distill import DistillSettings

HELP = "train a smaller student from a saved predictor (the teacher)"


def add_arguments(p) -> None:
    add_flags(p, DistillSettings)
    # no --maxlen: the student reads texts with the teacher's tokenizer and maxlen
    add_flags(p, RecipeConfig, (DataSettings, SampleSettings, TrainingSettings, OutputSettings),
              exclude=("maxlen", "class_weight", "lr_find", "bucketing", "distribute", "devices", "smoke"))


def uses_tensorflow(args) -> bool:
    return True


def run(args) -> None:
    from ktrain_recipes_tools.training.distill import distill

    # both are checked as they are made: a bad flag fails here, before any data or model loads
    from ktrain_recipes_tools.commands.stopping import exit_as_stopped

    settings, config = settings_from_args(args, DistillSettings), settings_from_args(args, RecipeConfig)
    exit_as_stopped(distill(config, settings))  # a stopped run exits 130 or 143, as train does
