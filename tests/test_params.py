"""Parameter counts by part, built from the published configurations, match the published totals."""

import pytest

from ktrain_recipes.studies.params import CONFIGS, albert_arithmetic, count_parameters


@pytest.fixture(scope="module")
def counts():
    return {name: count_parameters(name) for name in CONFIGS}


@pytest.mark.parametrize("name", list(CONFIGS))
def test_totals_match_the_published_figures(name, counts):
    c = counts[name]
    assert c["total"] == c["embeddings"] + c["encoder"] + c["pooler"] + c["other"] and c["other"] == 0
    assert c["total"] / 1e6 == pytest.approx(c["published_m"], rel=0.03), c["total"]
    assert c["int8_mb"] == pytest.approx(c["fp32_mb"] / 4) and c["fp16_mb"] == pytest.approx(c["fp32_mb"] / 2)


def test_albert_factorises_its_embeddings_and_shares_its_layers(counts):
    arithmetic = albert_arithmetic()
    mapping = 128 * 768 + 768  # the E x H projection from the small embeddings up to the hidden size
    assert counts["albert"]["encoder"] == arithmetic["albert_shared_layers"] + mapping  # 12 layers stored once
    bert_layers = counts["bert"]["encoder"]
    assert bert_layers == arithmetic["unshared_layers"]  # BERT-base stores all 12
    assert arithmetic["albert_word_embeddings"] < arithmetic["bert_style_word_embeddings"] / 5
