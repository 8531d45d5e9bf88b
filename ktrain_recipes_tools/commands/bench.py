"""``ktrain-recipes bench``: the tutorial's recipe vs ours, ktrain's predictor vs the int8 ONNX model."""

from ktrain_recipes_tools.commands.flags import add_flags, settings_from_args
from ktrain_recipes.config import DataSettings, ModelSettings, RecipeConfig, SampleSettings

HELP = "tutorial recipe vs default recipe, ktrain predictor vs int8 ONNX"


def add_arguments(p) -> None:
    add_flags(p, RecipeConfig, (ModelSettings, DataSettings, SampleSettings), limit=400)
    p.add_argument("--epochs", type=int, default=2, help="epochs of each training row")
    p.add_argument("--predictor", help="benchmark inference on this saved predictor (default: the default recipe's); "
                                       "its ONNX files are added only if it lacks them")
    p.add_argument("--out", default="runs/bench", help="where bench.json, bench.md and the runs go")
    p.add_argument("--assets", default="assets", help="where the chart bench.png goes")
    p.add_argument("--students", nargs="*", default=[], help="distilled student predictors to add as rows")


def uses_tensorflow(args) -> bool:
    return True


def run(args) -> None:
    from ktrain_recipes_tools.studies.bench import run_bench

    run_bench(settings_from_args(args, RecipeConfig, epochs=args.epochs), predictor=args.predictor, out=args.out,
              assets=args.assets, students=args.students)
