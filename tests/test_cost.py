"""The cost table (notebook 03): each figure the median of its rounds, with the training rate's spread."""

import pytest

import ktrain_recipes_tools as krt
from ktrain_recipes_tools.studies import cost


def test_each_row_is_the_median_of_its_rounds_with_the_spread_between_them(monkeypatch):
    rates = iter([10.0, 100.0, 30.0, 200.0, 20.0, 150.0])  # minilm, distilbert, minilm, ... in turn

    def measured(name, settings):
        return {"layers": 1, "parameters_m": 1.0, "per_token_m": 0.5, "train_examples_per_s": next(rates),
                "train_gflop_per_s": 1.0, "single_text_ms_p50": 2.0, "batch_texts_per_s": 3.0}

    monkeypatch.setattr(cost, "measure_cost", measured)
    table = krt.cost_table(krt.CostSettings(architectures=("minilm", "distilbert"), rounds=3, layers=1))
    assert table.loc["minilm", "train_examples_per_s"] == 20.0  # the median of 10, 30, 20: not the mean, not the last
    assert table.loc["distilbert", "train_examples_per_s"] == 150.0
    assert table.loc["minilm", "train_spread_pct"] == 100.0  # (30 - 10) / 20
    assert table.loc["distilbert", "train_spread_pct"] == pytest.approx(67.0)  # (200 - 100) / 150, rounded


@pytest.mark.slow
def test_a_real_one_layer_model_is_measured_in_two_rounds():
    table = krt.cost_table(krt.CostSettings(architectures=("minilm",), layers=1, steps=1, calls=2, rounds=2))
    row = table.loc["minilm"]
    assert row["layers"] == 1 and row["train_examples_per_s"] > 0 and row["batch_texts_per_s"] > 0
    assert row["train_spread_pct"] >= 0
