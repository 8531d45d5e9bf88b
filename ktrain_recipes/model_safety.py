"""Refuse a model whose configuration asks transformers to fetch and run code from elsewhere.

transformers 4.57.6, the last line with TensorFlow classes (our pin), is affected by CVE-2026-4372: a crafted
``config.json`` (``_attn_implementation_internal``, or an ``attn_implementation`` naming a hub repository such as
``org/kernel@rev:fn``) makes PyTorch's ``from_pretrained`` download and run a "kernel" from the hub, past
``trust_remote_code=False``. The path needs the optional package ``kernels``; the fix is only in 5.3.0 and later,
which have no TensorFlow. CVE-2026-5241 works through a ``trust_remote_code`` key in ``config.json`` (fixed in 5.x
by PR #44395, with no 4.x backport). docs/pins.md tells the whole story. Every model folder or hub model is checked
here before transformers reads it: a configuration that names a kernel repository or remote code (``auto_map``) is
refused in one line, and so is a ``trust_remote_code`` key anywhere in it (any value but false), and a Python
environment where ``kernels`` can be imported.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ktrain_recipes.errors import RecipesError

# the attention implementations transformers ships; anything else is a hub reference to fetched code
KNOWN_ATTENTION = {None, "eager", "sdpa", "flash_attention_2", "flash_attention_3", "flex_attention",
                   "paged_attention", "sdpa_paged", "eager_paged", "flash_paged"}
ATTENTION_KEYS = ("attn_implementation", "_attn_implementation", "_attn_implementation_internal")
REMOTE_CODE_KEYS = ("auto_map", "custom_pipelines")
TRUST_KEYS = ("trust_remote_code",)  # CVE-2026-5241: any value but false or null is refused
ADVISORY = "CVE-2026-4372, CVE-2026-5241 (docs/pins.md)"
MAX_CONFIG_BYTES = 1 << 20


def unsafe_keys(config: dict, prefix: str = "") -> list[str]:
    """The keys of a model configuration (nested ones too) that would make transformers run code from elsewhere."""
    found = []
    for key, value in config.items():
        where = f"{prefix}{key}"
        if key in ATTENTION_KEYS and not (value is None or isinstance(value, str) and value in KNOWN_ATTENTION):
            found.append(f"{where}={value!r}")
        elif key in REMOTE_CODE_KEYS and value:
            found.append(where)
        elif key in TRUST_KEYS and value is not None and value is not False:
            found.append(f"{where}={value!r}")
        elif isinstance(value, dict):
            found.extend(unsafe_keys(value, where + "."))
        elif isinstance(value, list):  # a list of sub-configurations: each is read as one
            for i, item in enumerate(value):
                if isinstance(item, dict):
                    found.extend(unsafe_keys(item, f"{where}[{i}]."))
    return found


def check_config(config: dict, where: str) -> None:
    """Refuse ``config`` (a parsed config.json) when it names a kernel repository or remote code."""
    if not isinstance(config, dict):
        raise RecipesError(f"{where}: config.json is not a JSON object: point at a Hugging Face model folder")
    found = unsafe_keys(config)
    if found:
        raise RecipesError(f"{where}: its config.json asks transformers to fetch or run code from elsewhere "
                           f"({', '.join(found)}; {ADVISORY}): refusing to load it; use a model whose "
                           "configuration names no kernel repository, no auto_map and no trust_remote_code")


def check_no_kernels() -> None:
    """Refuse to load models while the package ``kernels`` is importable: it is what CVE-2026-4372 runs through."""
    # the installed distribution, as transformers asks (importlib.metadata), not find_spec: a project's own
    # kernels/ folder or kernels.py in the working folder is not the package and must not block every training
    from importlib.metadata import PackageNotFoundError, version

    try:
        version("kernels")
    except PackageNotFoundError:
        return
    raise RecipesError(f"the package 'kernels' is installed: with it, transformers 4.57.6 can fetch and run code "
                       f"from the hub when a model loads ({ADVISORY}); uninstall it (pip uninstall kernels)")


def read_config_file(path: Path, shown_as: Path | None = None) -> dict:
    """A config.json's content, read only if it is a regular file of at most 1 MB (never a FIFO or a device).
    ``shown_as``: its name in messages (default ``path``)."""
    import stat

    shown = shown_as or path
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        raise RecipesError(f"cannot read '{shown}' ({exc.strerror}): point at a Hugging Face model folder") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_CONFIG_BYTES:
            raise RecipesError(f"'{shown}' is not a regular file of at most 1 MB: point at a Hugging Face model "
                               "folder")
        raw = os.read(fd, MAX_CONFIG_BYTES + 1)
    finally:
        os.close(fd)
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise RecipesError(f"'{shown}' is not valid UTF-8 JSON: point at a Hugging Face model folder") from None


def check_model_folder(folder: str | os.PathLike, shown_as: str | os.PathLike | None = None) -> None:
    """Check a local model (or predictor) folder's config.json, and the environment, before transformers reads it.
    ``shown_as``: the folder's name in messages, when it is read through another path (a pinned predictor)."""
    check_no_kernels()
    check_config(read_config_file(Path(folder) / "config.json", shown_as and Path(shown_as) / "config.json"),
                 f"'{shown_as or folder}'")
