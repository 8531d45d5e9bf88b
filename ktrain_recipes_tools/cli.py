"""``python -m ktrain_recipes`` / ``ktrain-recipes``: each command (``commands/``) parses flags and calls one
library function."""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
import threading

from ktrain_recipes import compat  # noqa: F401
from ktrain_recipes_tools.commands.flags import ShowDefaults
from ktrain_recipes_tools.commands.stopping import Terminated, terminate
from ktrain_recipes.errors import RecipesError

# command name -> its module in ktrain_recipes_tools.commands, in the order --help lists them
COMMANDS = {"train": "train", "evaluate": "evaluate", "predict": "predict", "calibrate": "calibrate",
            "export": "export", "models": "models",
            "compare": "compare", "ethics": "ethics", "distill": "distill", "serve": "serve",
            "serve-bench": "serve_bench", "scale-bench": "scale_bench", "bench": "bench"}


def command(name: str):
    """The module of a command (``add_arguments``, ``uses_tensorflow``, ``run``)."""
    return importlib.import_module(f"ktrain_recipes_tools.commands.{COMMANDS[name]}")


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser for all commands."""
    from ktrain_recipes.versions import __version__

    parser = argparse.ArgumentParser(prog="ktrain-recipes", description=__doc__, formatter_class=ShowDefaults)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        module = command(name)
        module.add_arguments(sub.add_parser(name, help=module.HELP, formatter_class=ShowDefaults))
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; user errors print one line and return 1, Ctrl-C returns 130 and SIGTERM 143."""
    args = build_parser().parse_args(argv)
    compat.quiet()
    module = command(args.command)
    if module.uses_tensorflow(args):
        compat.import_tensorflow_quietly()
    # SIGTERM (a container stopping, `kill`) ends a command as Ctrl-C does, so its partial files are removed
    previous = signal.signal(signal.SIGTERM, terminate) if threading.current_thread() is threading.main_thread() \
        else None
    try:
        module.run(args)
    except RecipesError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except ModuleNotFoundError as exc:
        extra = EXTRAS.get((exc.name or "").split(".")[0])
        if extra is None:
            raise
        # advice that can only install this checkout's own extra: the project publishes no package on any index, so
        # a package name there could install whatever a stranger publishes under it (battery v7, X9)
        print(f"error: `{args.command}` needs {exc.name}, which this installation lacks: from your clone of "
              f"ktrain-recipes, pip install -e \".[{extra}]\" (the extra's pins: pyproject.toml)", file=sys.stderr)
        return 1
    except Terminated:
        print("stopped (SIGTERM)", file=sys.stderr)
        return 143  # 128 + SIGTERM, as a shell reports a process SIGTERM ended
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return 0


# the tools' own install extras (pyproject.toml): a command that needs one, where it is missing, says which
EXTRAS = {"fastapi": "serve", "uvicorn": "serve", "starlette": "serve", "httptools": "serve",
          "prometheus_client": "serve", "fastapi_offline": "serve", "ray": "scale"}
