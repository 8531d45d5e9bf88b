"""The walk of one model load through the package's modules: from the service's settings to a loaded model.

Follows the calls inside ``ktrain_recipes`` (``sys.setprofile``) while ``ServiceSettings`` is made and
``service.model.load_model`` loads the folder with its backend, as a reader following the code would: each function
is read once, at its first call (comprehensions and lambdas with the function that holds them), and the walk is the
modules of those functions in that order; a stay is each run of consecutive functions of one module. A first load,
not followed, imports the modules (their import-time code is not part of the walk). Also counts the stays in
``predictor/manifest.py`` and the times ``manifest.json`` is opened (every open, repeated calls included).

    python benchmarks/load_walk.py PREDICTOR [--backend auto|int8|ktrain]
"""

from __future__ import annotations

import argparse
import builtins
import io
import os
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "ktrain_recipes"


def walk(predictor: str, backend: str) -> dict:
    from ktrain_recipes.service.model import load_model
    from ktrain_recipes.service.settings import ServiceSettings

    stays: list[str] = []
    opens = {"n": 0}

    def room(frame) -> str | None:
        path = frame.f_code.co_filename
        return str(Path(path).relative_to(PACKAGE).with_suffix("")) if path.startswith(str(PACKAGE)) else None

    read: set = set()

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

    load_model(predictor, backend)  # imports done before the walk is followed
    builtins.open, os.open, io.open = counted(real_open), counted(real_os_open), counted(real_io_open)
    sys.setprofile(profile)
    try:
        settings = ServiceSettings(predictor=predictor, backend=backend)
        load_model(settings.predictor, settings.backend, settings.threads, settings.max_call)
    finally:
        sys.setprofile(None)
        builtins.open, os.open, io.open = real_open, real_os_open, real_io_open
    return {"stays": len(stays), "rooms": len(set(stays)), "manifest_entered": stays.count("predictor/manifest"),
            "manifest_json_opens": opens["n"], "walk": stays}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("predictor")
    parser.add_argument("--backend", default="auto")
    args = parser.parse_args(argv)
    result = walk(args.predictor, args.backend)
    print(f"{result['stays']} stays in {result['rooms']} rooms; predictor/manifest entered "
          f"{result['manifest_entered']} times; manifest.json opened {result['manifest_json_opens']} times")
    print(" -> ".join(result["walk"]))


if __name__ == "__main__":
    main()
