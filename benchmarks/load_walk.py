"""The walk of one call through this checkout's modules: a model load from the service's settings, or a whole
training run from its ``RecipeConfig``.

Follows the calls inside ``ktrain_recipes`` and ``ktrain_recipes_tools`` (``sys.setprofile``), as a reader following
the code would: each function is read once, at its first call (comprehensions and lambdas with the function that
holds them), and the walk is the modules of those functions in that order; a stay is each run of consecutive
functions of one module. A first call, not followed, imports the modules (their import-time code is not part of the
walk). The load walk also counts the stays in ``predictor/manifest.py`` and the opens of ``manifest.json``.

    python benchmarks/load_walk.py PREDICTOR [--backend auto|int8|ktrain]     # the service's load
    python benchmarks/load_walk.py --recipe MODEL [--data DIR]                 # run_recipe(config), one short epoch

It measures this checkout, whatever Python would import otherwise (an installed copy of the package): the checkout
goes first on ``sys.path``, and the walk stops with a message if the package still comes from elsewhere.
"""

from __future__ import annotations

import argparse
import builtins
import io
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout, not an installed copy
PACKAGES = [ROOT / "ktrain_recipes", ROOT / "ktrain_recipes_tools"]


def check_checkout() -> None:
    import ktrain_recipes
    import ktrain_recipes_tools

    for module, folder in [(ktrain_recipes, PACKAGES[0]), (ktrain_recipes_tools, PACKAGES[1])]:
        if Path(module.__file__).resolve().parent != folder:
            raise SystemExit(f"{module.__name__} is imported from {Path(module.__file__).parent}, not this checkout "
                             f"({folder}): run this script with this checkout's Python environment")


def follow(call) -> tuple[list[str], int]:
    """The stays of ``call()`` and the opens of manifest.json it made."""
    stays: list[str] = []
    opens = {"n": 0}
    read: set = set()

    def room(frame) -> str | None:
        path = Path(frame.f_code.co_filename)
        for package in PACKAGES:
            if path.is_relative_to(package):
                name = str(path.relative_to(package).with_suffix(""))
                return name if package is PACKAGES[0] else f"tools:{name}"
        return None

    def profile(frame, event, arg):
        # comprehensions and lambdas are read with the function that holds them
        if event == "call" and frame.f_code not in read and not frame.f_code.co_name.startswith("<"):
            read.add(frame.f_code)
            here = room(frame)
            if here and os.environ.get("WALK_FUNCTIONS"):
                print(f"  {here}.{frame.f_code.co_name}")
            if here and (not stays or stays[-1] != here):
                stays.append(here)

    real_open, real_os_open, real_io_open = builtins.open, os.open, io.open

    def counted(opener):
        def open_(file, *args, **kwargs):
            if str(file).endswith("manifest.json"):
                opens["n"] += 1
            return opener(file, *args, **kwargs)
        return open_

    builtins.open, os.open, io.open = counted(real_open), counted(real_os_open), counted(real_io_open)
    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
        builtins.open, os.open, io.open = real_open, real_os_open, real_io_open
    return stays, opens["n"]


def walk(predictor: str, backend: str) -> dict:
    check_checkout()
    from ktrain_recipes_tools.service.model import serving_model
    from ktrain_recipes_tools.service.settings import ServiceSettings

    serving_model(ServiceSettings(predictor=predictor, backend=backend))  # imports done before the walk is followed
    stays, opens = follow(lambda: serving_model(ServiceSettings(predictor=predictor, backend=backend)))
    return {"stays": len(stays), "rooms": len(set(stays)), "manifest_entered": stays.count("predictor/manifest"),
            "manifest_json_opens": opens, "walk": stays}


def recipe_walk(model: str, data: str | None) -> dict:
    """The stays of ``run_recipe(config)``: a short run (64 texts, one epoch) of ``model`` on ``data`` (default: the
    slice the package ships), after a first run that imports what it needs."""
    check_checkout()
    import ktrain_recipes as kr
    from ktrain_recipes.data.loading import EMOTION_SLICE

    with tempfile.TemporaryDirectory() as work:
        def run(out: str):
            config = kr.RecipeConfig(model, data=data or str(EMOTION_SLICE), out=out, limit=64, eval_limit=32,
                                     epochs=1, batch_size=16, lr=1e-4, overwrite=True)
            kr.run_recipe(config)

        run(f"{work}/first")
        stays, _ = follow(lambda: run(f"{work}/walked"))
    helper = [s for s in stays if not s.startswith("tools:")]
    return {"stays": len(stays), "rooms": len(set(stays)), "helper_only": len(helper) == len(stays), "walk": stays}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("predictor", nargs="?")
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--recipe", metavar="MODEL", help="walk run_recipe(config) with this model instead")
    parser.add_argument("--data", help="the recipe walk's data (default: the slice the package ships)")
    args = parser.parse_args(argv)
    if args.recipe:
        result = recipe_walk(args.recipe, args.data)
        print(f"run_recipe: {result['stays']} stays in {result['rooms']} rooms"
              f"{'' if result['helper_only'] else ' (some in the tools package)'}")
    elif args.predictor:
        result = walk(args.predictor, args.backend)
        print(f"{result['stays']} stays in {result['rooms']} rooms; predictor/manifest entered "
              f"{result['manifest_entered']} times; manifest.json opened {result['manifest_json_opens']} times")
    else:
        parser.error("name a PREDICTOR folder, or --recipe MODEL")
    print(" -> ".join(result["walk"]))


if __name__ == "__main__":
    main()
