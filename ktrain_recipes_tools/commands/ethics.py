"""``ktrain-recipes ethics``: train and score a model on one task of the ETHICS benchmark."""

from ktrain_recipes_tools.commands.flags import add_flags, check_writable_file, settings_from_args
from ktrain_recipes.config import ModelSettings, OutputSettings, RecipeConfig, SampleSettings, TrainingSettings
from ktrain_recipes_tools.studies.ethics_data import TASKS

HELP = "train and score a model on one task of the ETHICS benchmark"


def add_arguments(p) -> None:
    p.add_argument("--task", required=True, choices=list(TASKS), help="the ETHICS task")
    p.add_argument("--split", default="test", choices=["test", "test_hard"], help="the test file to score")
    p.add_argument("--json", help="also write accuracy, exact_match and n to this JSON file")
    # ethics' own --data and --out, and no settings that its runner does not read
    add_flags(p, RecipeConfig, (ModelSettings, SampleSettings, TrainingSettings, OutputSettings),
              exclude=("bucketing", "distribute", "devices", "out", "smoke"))
    p.add_argument("--val-fraction", type=float, default=RecipeConfig.val_fraction,
                   help="the share of training groups held out for validation (whole groups)")
    p.add_argument("--data", help="a folder laid out like the ETHICS archive (justice/justice_train.csv, ...) or "
                                  "like the hub's parquet copy (justice/train-*.parquet, ...); default: the hub's "
                                  "EleutherAI/hendrycks_ethics")
    p.add_argument("--out", help="predictor folder (default: runs/ethics-TASK)")


def uses_tensorflow(args) -> bool:
    return True


def run(args) -> None:
    from ktrain_recipes_tools.studies.ethics import run_ethics, write_result

    if args.json:
        check_writable_file(args.json, (args.data,))
    config = settings_from_args(args, RecipeConfig, data=args.data, out=args.out or f"runs/ethics-{args.task}",
                                val_fraction=args.val_fraction)
    from ktrain_recipes.errors import note
    from ktrain_recipes_tools.commands.stopping import exit_as_stopped

    result = run_ethics(args.task, config, args.split)
    if result.get("interrupted"):  # stopped mid-run: no result file would say what the run did not do
        note(f"stopped after {result['epochs_completed']} of {result['epochs']} epoch(s): no result written"
             f"{' to ' + args.json if args.json else ''}; run the same command with --resume to go on")
        exit_as_stopped(result)
    print(" ".join(f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}" for k, v in result.items()))
    if args.json:
        write_result(result, args.json)
