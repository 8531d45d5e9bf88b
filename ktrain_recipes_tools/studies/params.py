"""Where each registry model's parameters live: embeddings, encoder layers, pooler. No download needed.

Each model is built by transformers from its published configuration (the few values below, copied from
the models' config.json on the hub) with random weights, and its weights are counted by part. ALBERT shows
why it is small: its embeddings are factorised (V x E + E x H instead of V x H) and its 12 layers share
one set of weights.
"""

from __future__ import annotations

import re

from ktrain_recipes.errors import RecipesError
from ktrain_recipes.models import REGISTRY

# name: (config class, config values); the published totals are the registry's (models.REGISTRY)
CONFIGS = {
    "bert": ("BertConfig", dict(vocab_size=30522, hidden_size=768, num_hidden_layers=12,
                                num_attention_heads=12, intermediate_size=3072)),
    "roberta": ("RobertaConfig", dict(vocab_size=50265, hidden_size=768, num_hidden_layers=12,
                                      num_attention_heads=12, intermediate_size=3072,
                                      max_position_embeddings=514, type_vocab_size=1, pad_token_id=1)),
    "distilbert": ("DistilBertConfig", dict(vocab_size=30522, dim=768, n_layers=6, n_heads=12,
                                            hidden_dim=3072)),
    "albert": ("AlbertConfig", dict(vocab_size=30000, embedding_size=128, hidden_size=768,
                                    num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072)),
    "electra": ("ElectraConfig", dict(vocab_size=30522, embedding_size=768, hidden_size=768,
                                      num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072)),
    "tinybert": ("BertConfig", dict(vocab_size=30522, hidden_size=312, num_hidden_layers=4,
                                    num_attention_heads=12, intermediate_size=1200)),
    "minilm": ("BertConfig", dict(vocab_size=30522, hidden_size=384, num_hidden_layers=6,
                                  num_attention_heads=12, intermediate_size=1536)),
    "mpnet": ("MPNetConfig", dict(vocab_size=30527, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                                  intermediate_size=3072, max_position_embeddings=514)),
}
BYTES = {"fp32": 4, "fp16": 2, "int8": 1}


def build_random_model(name: str):
    """Build a registry model's base network (no task head) from its published configuration, random weights."""
    import transformers
    from transformers import TFAutoModel

    if name not in CONFIGS:
        raise RecipesError(f"no published configuration for '{name}': choose one of {', '.join(CONFIGS)}")
    cls, values = CONFIGS[name]
    model = TFAutoModel.from_config(getattr(transformers, cls)(**values))
    model(model.dummy_inputs, training=False)  # create the weights
    return model


def _part(weight_name: str) -> str:
    """Which part of the network a weight belongs to, from its name."""
    if "embeddings" in weight_name and "embedding_hidden_mapping" not in weight_name:
        return "embeddings"
    if "pooler" in weight_name:
        return "pooler"
    if re.search(r"(layer_\._\d+|layer_\d+|/layer/|albert_layer_groups|transformer/layer|embedding_hidden_mapping)",
                 weight_name):
        return "encoder"
    return "other"


def count_parameters(name: str) -> dict:
    """Count a registry model's parameters by part, with its size at fp32, fp16 and int8.

    Returns a dict: embeddings, encoder, pooler, other, total (all counts), published_m (the model
    card's total, in millions), and size_mb per precision.
    """
    model = build_random_model(name)
    counts = {"embeddings": 0, "encoder": 0, "pooler": 0, "other": 0}
    for weight in model.weights:
        counts[_part(weight.name)] += int(weight.shape.num_elements())
    counts["total"] = sum(counts.values())
    counts["published_m"] = float(REGISTRY[name].params.rstrip("M"))
    counts.update({f"{p}_mb": counts["total"] * b / 1e6 for p, b in BYTES.items()})
    return counts


def albert_arithmetic(vocab: int = 30000, embedding: int = 128, hidden: int = 768, layers: int = 12) -> dict:
    """The two ALBERT savings as arithmetic: factorised embeddings, and one layer's weights for all layers.

    One encoder layer: query, key, value and output projections (4 x (H x H + H)), a layer norm (2H), the
    feed-forward block (H x 4H + 4H, then 4H x H + H) and its layer norm (2H).
    """
    h = hidden
    layer = 4 * (h * h + h) + 2 * h + (h * 4 * h + 4 * h) + (4 * h * h + h) + 2 * h
    return {"bert_style_word_embeddings": vocab * h, "albert_word_embeddings": vocab * embedding + embedding * h,
            "one_layer": layer, "unshared_layers": layers * layer, "albert_shared_layers": layer}


def parameter_table(names=None):
    """The parameter counts by part of ``names`` (default: every model with a published configuration), in
    millions, with sizes: a pandas DataFrame."""
    import pandas as pd

    rows = {name: count_parameters(name) for name in (CONFIGS if names is None else names)}
    table = pd.DataFrame.from_dict(rows, orient="index")
    for col in ("embeddings", "encoder", "pooler", "other", "total"):
        table[col] = table[col] / 1e6
    return table.round(2)
