"""Where KerasHub loads a model from: a local folder of a Hugging Face checkpoint, made once.

``keras_hub.models.BertTextClassifier.from_preset`` reads a Hugging Face folder (config.json, model.safetensors,
vocab.txt) or an ``hf://`` preset. Two things stand in the way for all-MiniLM-L6-v2 and other sentence-transformers
BERTs: with no hub, the weights must come from the offline copy the ktrain path uses; and KerasHub as Colab ships it
(0.26) reads a BERT's weights only under the old names (``bert.``-prefixed, LayerNorm ``gamma``/``beta``), which
sentence-transformers' saves lack (KerasHub 0.32 reads both). ``keras_hub_preset`` gives a folder that every
version reads.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from ktrain_recipes.errors import RecipesError

MINILM_PRESET = "hf://sentence-transformers/all-MiniLM-L6-v2"


def keras_hub_preset(model: str) -> str:
    """A local folder to give ``from_preset`` for ``model``: a folder of a Hugging Face checkpoint, or an
    ``hf://owner/name`` preset (fetched once when the hub answers; all-MiniLM-L6-v2 with no hub comes from the
    offline copy, its files checked). A BERT saved under the new names gets a copy under the old ones, once."""
    from ktrain_recipes.models import ST_FILES, check_minilm, hub_reachable, minilm_source

    if Path(model).is_dir():
        folder = Path(model)
    elif not model.startswith("hf://"):
        raise RecipesError(f"'{model}' is neither a folder nor a Hugging Face preset: give a local folder "
                           f"(config.json, model.safetensors, vocab.txt) or a preset such as {MINILM_PRESET}")
    elif hub_reachable():
        from huggingface_hub import snapshot_download

        folder = Path(snapshot_download(model.removeprefix("hf://"), allow_patterns=ST_FILES))
    elif model == MINILM_PRESET:
        folder = check_minilm(minilm_source())
    else:
        raise RecipesError(f"{model} is on the Hugging Face hub, which does not answer from here: give a local "
                           f"folder of its files, or {MINILM_PRESET} (installed offline)")
    return str(bert_names(folder))


def old_name(name: str) -> str:
    """A BERT weight's name as KerasHub 0.26 reads it: ``bert.``-prefixed, LayerNorm as ``gamma`` and ``beta``."""
    name = name if name.startswith(("bert.", "classifier.")) else f"bert.{name}"
    if ".LayerNorm." in name:
        name = name.removesuffix(".weight") + ".gamma" if name.endswith(".weight") else name
        name = name.removesuffix(".bias") + ".beta" if name.endswith(".bias") else name
    return name


def bert_names(folder: Path) -> Path:
    """``folder`` itself, or for a BERT saved under the new weight names (as sentence-transformers saves), a copy
    under the old ones (``old_name``), made once in the cache."""
    from safetensors.numpy import load_file, save_file

    from ktrain_recipes.model_cache import entry_name, folder_digests, seal, usable
    from ktrain_recipes.model_safety import read_config_file
    from ktrain_recipes.models import ST_FILES, cache_dir

    try:
        config = read_config_file(folder / "config.json")  # a regular file only: a FIFO is refused at once
    except RecipesError as exc:
        raise RecipesError(f"'{folder}' has no readable config.json ({exc}): give the folder of a Hugging Face "
                           "checkpoint (config.json, model.safetensors, vocab.txt)") from None
    except (OSError, ValueError) as exc:
        raise RecipesError(f"'{folder}' has no readable config.json ({type(exc).__name__}): give the folder of a "
                           "Hugging Face checkpoint (config.json, model.safetensors, vocab.txt)") from None
    weights = folder / "model.safetensors"
    if not isinstance(config, dict) or config.get("model_type") != "bert" or not weights.is_file():
        return folder
    out = cache_dir() / "keras-hub" / entry_name(folder)
    source = folder_digests(folder, ST_FILES)
    if usable(out, source):  # a renamed copy of exactly these files: no need to read the weights again
        return out
    try:
        tensors = load_file(str(weights))
    except Exception as exc:  # noqa: BLE001  (safetensors raises its own error types for a damaged file)
        raise RecipesError(f"'{weights}' cannot be read ({str(exc).splitlines()[0][:120]}): download the "
                           "checkpoint again") from None
    if not (folder / "tokenizer.json").is_file():
        # battery v7, X81: the road reads a BERT's ids with Hugging Face tokenizers (Tokenizer.from_file), which
        # failed on the next line for older checkpoints that ship vocab.txt alone
        raise RecipesError(f"'{folder}' has no tokenizer.json, which the Keras 3 road reads a BERT's ids with "
                           "(Hugging Face tokenizers): make one with transformers, AutoTokenizer.from_pretrained("
                           "FOLDER).save_pretrained(FOLDER), or give a folder that has it")
    if all(old_name(name) == name for name in tensors):
        return folder
    staging = out.with_name(out.name + ".partial")  # a kill part-way leaves no half-written folder behind
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    save_file({old_name(name): value for name, value in tensors.items()}, str(staging / "model.safetensors"))
    for name in ST_FILES:
        if name != "model.safetensors" and (folder / name).is_file():
            shutil.copyfile(folder / name, staging / name)
    seal(staging, source)
    shutil.rmtree(out, ignore_errors=True)
    staging.rename(out)
    return out
