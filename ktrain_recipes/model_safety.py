"""Refuse a model whose configuration asks transformers to fetch and run code from elsewhere.

transformers 4.57.6, the last line with TensorFlow classes (our pin), is affected by CVE-2026-4372: a crafted
``config.json`` (``_attn_implementation_internal``, or an ``attn_implementation`` naming a hub repository such as
``org/kernel@rev:fn``) makes PyTorch's ``from_pretrained`` download and run a "kernel" from the hub, past
``trust_remote_code=False``. The path needs the optional package ``kernels``; the fix is only in 5.3.0 and later,
which have no TensorFlow. CVE-2026-5241 works through a ``trust_remote_code`` key in ``config.json``; by the advisory
database (github/advisory-database #8818) it does not reach 4.x, and the refusal stays because it costs nothing.
CVE-2026-9856 (fixed in 5.10, no 4.x release): a tokenizer file naming a chat template ``../../x`` makes saving the
tokenizer write outside its folder. docs/pins.md tells the whole story. Every model folder or hub model is checked
here before transformers reads it: a configuration that names a kernel repository or remote code (``auto_map``) is
refused in one line, and so is a ``trust_remote_code`` key anywhere in it (any value but false), a chat template
whose name is not a plain file name, and a Python environment where ``kernels`` can be imported.
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
# CVE-2026-9856: ``save_pretrained`` writes each named chat template to ``<folder>/<name>.jinja`` unchecked, so a
# name like ``../../x`` in one of these files writes outside the folder (ktrain's ``TextPredictor.save`` saves the
# tokenizer). Their names must be plain file names.
TEMPLATE_FILES = ("tokenizer_config.json", "chat_template.json")
MAX_TOKENIZER_BYTES = 32 << 20  # a tokenizer_config.json with many added tokens runs to a few MB


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


# the encoders the recipes fine-tune as classifiers (text.Transformer's sequence classifiers on a [CLS]-like token);
# a decoder (gpt2, llama) or another kind of model fails deep inside TensorFlow instead (battery v7, X56)
ENCODERS = {"bert", "roberta", "distilbert", "albert", "electra", "mpnet", "xlm-roberta", "camembert", "deberta",
            "deberta-v2", "mobilebert", "convbert", "funnel", "longformer", "flaubert", "xlm", "layoutlm", "rembert",
            "roformer", "tapas", "esm"}


def check_config(config: dict, where: str) -> None:
    """Refuse ``config`` (a parsed config.json) when it names a kernel repository or remote code, or a model type
    the recipes do not train."""
    if not isinstance(config, dict):
        raise RecipesError(f"{where}: config.json is not a JSON object: point at a Hugging Face model folder")
    kind = config.get("model_type")
    if isinstance(kind, str) and kind not in ENCODERS:
        raise RecipesError(f"{where}: its config.json says model_type {kind!r}, which the recipes do not fine-tune: "
                           f"give an encoder ({', '.join(sorted(ENCODERS)[:8])}, ...; `ktrain-recipes models` lists "
                           "the registry)")
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


def link_root(folder: Path) -> Path:
    """The folder a model folder's links may point into: the folder itself, or for a snapshot in the Hugging Face
    cache (``.../models--ORG--NAME/snapshots/REV``) that model's cache folder, whose ``blobs/`` holds the files every
    snapshot links to."""
    if folder.parent.name == "snapshots" and folder.parent.parent.name.startswith(("models--", "datasets--")):
        return folder.parent.parent
    return folder


def followed(path: Path, shown: Path) -> Path:
    """``path`` itself, or the regular file a link there names when that file lies inside the model folder (or, in
    the hub's cache, inside that model's cache folder: ``link_root``). A link that leaves it is refused."""
    if not path.is_symlink():
        return path
    target = Path(os.path.realpath(path))
    root = Path(os.path.realpath(link_root(path.parent)))
    if not target.is_relative_to(root):
        raise RecipesError(f"'{shown}' is a link to '{target}', outside the model folder '{root}': a model folder's "
                           "files may link only inside it (the hub's cache links into its own blobs/); copy the "
                           "file into the folder instead")
    return target


def template_names(config: dict) -> list:
    """The chat-template names a tokenizer file (``TEMPLATE_FILES``) gives: the legacy list of
    ``{"name", "template"}`` dicts, or a ``{name: template}`` mapping."""
    template = config.get("chat_template") if isinstance(config, dict) else None
    if isinstance(template, list):
        return [item.get("name") for item in template if isinstance(item, dict)]
    if isinstance(template, dict):
        return list(template)
    return []


def plain_file_name(name) -> bool:
    """Whether ``name`` names a file inside a folder and nothing else: no separator, no '..', not empty."""
    return isinstance(name, str) and name.strip() not in ("", ".", "..") and not any(c in name for c in "/\\\0") \
        and ".." not in name


def check_tokenizer_file(config: dict, where: str) -> None:
    """Refuse a tokenizer file whose chat-template names are not plain file names (CVE-2026-9856)."""
    bad = [name for name in template_names(config) if not plain_file_name(name)]
    if bad:
        raise RecipesError(f"{where}: a chat template is named {bad[0]!r}, which saving the tokenizer would write "
                           "outside its folder (CVE-2026-9856, docs/pins.md): refusing to load it; rename the template "
                           "to a plain name (letters, digits, '_', '-') or remove it")


def read_config_file(path: Path, shown_as: Path | None = None, limit: int = MAX_CONFIG_BYTES) -> dict:
    """A config.json's content, read only if it is a regular file of at most 1 MB (never a FIFO or a device).
    A link is followed only inside the model folder or its hub cache folder (``followed``).
    ``shown_as``: its name in messages (default ``path``)."""
    import stat

    shown = shown_as or path
    try:
        fd = os.open(followed(path, shown), os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        raise RecipesError(f"cannot read '{shown}' ({exc.strerror}): point at a Hugging Face model folder") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            raise RecipesError(f"'{shown}' is not a regular file of at most {limit >> 20} MB: point at a Hugging Face "
                               "model folder")
        raw = os.read(fd, limit + 1)
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
    for name in TEMPLATE_FILES:
        path = Path(folder) / name
        if path.exists() or path.is_symlink():
            shown = Path(shown_as or folder) / name
            check_tokenizer_file(read_config_file(path, shown, MAX_TOKENIZER_BYTES), f"'{shown}'")
