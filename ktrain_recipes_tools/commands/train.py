"""``ktrain-recipes train``: fine-tune a model and save a predictor."""

from ktrain_recipes_tools.commands.flags import add_flags, settings_from_args
from ktrain_recipes.config import GROUPS, RecipeConfig

HELP = "fine-tune a model and save a predictor"


def add_arguments(p) -> None:
    add_flags(p, RecipeConfig, GROUPS, required=("out",))


def uses_tensorflow(args) -> bool:
    return True


def run(args) -> None:
    from ktrain_recipes.training.recipe import run_recipe

    from ktrain_recipes_tools.commands.stopping import exit_as_stopped

    exit_as_stopped(run_recipe(settings_from_args(args, RecipeConfig)))  # a stopped run exits 130 or 143
