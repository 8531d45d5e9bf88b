"""The runtime a run or a saved predictor depends on: the package versions (and the check made when loading one),
and the CPU, named beside every figure."""

from __future__ import annotations

import sys
import warnings
from importlib.metadata import PackageNotFoundError, version

from ktrain_recipes.errors import RecipesError

__version__ = "0.2.0"  # pyproject.toml's version; a test checks that they agree

VERSIONED = ["ktrain", "transformers", "tensorflow", "tf_keras", "numpy"]
CHECKED = ["transformers", "tensorflow", "ktrain"]  # the ones whose minor version changes saved files


def package_versions() -> dict[str, str]:
    """Return the versions of Python and of the packages a saved predictor depends on."""
    out = {"python": sys.version.split()[0]}
    for name in VERSIONED + ["ktrain_recipes"]:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "missing"
    return out


def check_versions(folder: str, saved: dict, strict: bool = False) -> None:
    """Warn in one line (or with ``strict`` refuse) when a predictor was saved under other minor versions.

    Args:
      folder: the predictor folder, for the message.  saved: the manifest's ``versions``.
      strict: raise RecipesError instead of warning.
    """
    now = package_versions()
    for name in CHECKED:
        if saved.get(name, "").split(".")[:2] != now[name].split(".")[:2]:
            message = (f"'{folder}' was saved with {name} {saved.get(name)}, this environment has {now[name]}: "
                       "it usually loads; if it does not, install the pinned requirements or re-train")
            if strict:
                raise RecipesError(message.split(": it usually")[0] + ": install the pinned requirements "
                                   "or re-train (or load without --strict)")
            warnings.warn(message, stacklevel=3)


def cpu_model() -> str:
    """This machine's CPU model name (from /proc/cpuinfo where there is one), for figure captions."""
    import platform
    from pathlib import Path

    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "CPU"


def cpu_features() -> list[str]:
    """The vector extensions of this CPU that decide int8 and bfloat16 speed (from /proc/cpuinfo on Linux; empty
    elsewhere): AVX2 alone, or AVX-512 with VNNI, change the figures more than the clock does."""
    from pathlib import Path

    wanted = {"avx2", "avx512f", "avx512_vnni", "avx512vnni", "avx_vnni", "avx512_bf16", "amx_int8", "amx_bf16"}
    try:
        flags = next(line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags"))
    except (OSError, StopIteration):
        return []
    return sorted(set(flags.split(":", 1)[1].split()) & wanted)
