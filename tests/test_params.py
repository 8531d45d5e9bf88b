"""Parameter counts by part, built from the published configurations, match the published totals."""

import pytest

from ktrain_recipes_tools.studies.params import CONFIGS, albert_arithmetic, count_parameters


@pytest.fixture(scope="module")
def counts():
    return {name: count_parameters(name) for name in CONFIGS}


# the parameter counts of the published checkpoints (transformers' TF*Model.count_params(), with the pooler
# where the model has one), known independently of our per-part arithmetic
PUBLISHED_COUNTS = {"bert": 109_482_240, "roberta": 124_645_632, "distilbert": 66_362_880, "albert": 11_683_584,
                    "electra": 108_891_648, "tinybert": 14_350_248, "minilm": 22_713_216,
                    # counted in all-mpnet-base-v2's own weights (model.safetensors, 437,971,872 bytes)
                    "mpnet": 109_486_464}


@pytest.mark.parametrize("name", list(CONFIGS))
def test_totals_match_the_published_checkpoints(name, counts):
    c = counts[name]
    assert c["total"] == PUBLISHED_COUNTS[name]
    assert c["embeddings"] + c["encoder"] + c["pooler"] == PUBLISHED_COUNTS[name]  # the parts cover it all
    assert c["fp32_mb"] == pytest.approx(PUBLISHED_COUNTS[name] * 4 / 1e6)


def test_berts_embeddings_by_hand(counts):
    # (30,522 wordpieces + 512 positions + 2 token types) x 768, plus LayerNorm's scale and shift
    assert counts["bert"]["embeddings"] == (30_522 + 512 + 2) * 768 + 2 * 768
    # one layer: Q, K, V and output projections with biases, the 768 -> 3072 -> 768 feed-forward, two LayerNorms
    layer = 4 * (768 * 768 + 768) + (768 * 3072 + 3072) + (3072 * 768 + 768) + 2 * 2 * 768
    assert counts["bert"]["encoder"] == 12 * layer


def test_albert_factorises_its_embeddings_and_shares_its_layers(counts):
    arithmetic = albert_arithmetic()
    mapping = 128 * 768 + 768  # the E x H projection from the small embeddings up to the hidden size
    assert counts["albert"]["encoder"] == arithmetic["albert_shared_layers"] + mapping  # 12 layers stored once
    bert_layers = counts["bert"]["encoder"]
    assert bert_layers == arithmetic["unshared_layers"]  # BERT-base stores all 12
    assert arithmetic["albert_word_embeddings"] < arithmetic["bert_style_word_embeddings"] / 5
