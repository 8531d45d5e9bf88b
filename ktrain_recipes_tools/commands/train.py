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

    metrics = run_recipe(settings_from_args(args, RecipeConfig))
    # stopped: the best epoch is saved and the checkpoint kept, and the command still exits as a stopped run (130,
    # 143), so that a scheduler (docker stop, systemd, timeout) sees it
    if isinstance(metrics, dict) and metrics.get("interrupted"):
        from ktrain_recipes_tools.cli import SIGNALLED, Terminated

        raise Terminated() if SIGNALLED else KeyboardInterrupt()
