"""benchmarks/frozen_rung.py: the frozen-embedding rung's record (docs/frozen/frozen.json)."""

import json
import shutil

import numpy as np

from conftest import benchmark_module

frozen = benchmark_module("frozen_rung")


def test_each_draw_takes_16_texts_of_every_label_and_seeds_differ():
    labels = ["joy"] * 40 + ["fear"] * 30 + ["love"] * 20
    draws = [frozen.per_label_indices(labels, 16, seed) for seed in (0, 1)]
    for index in draws:
        assert len(set(index)) == 48 and all(sum(labels[i] == name for i in index) == 16 for name in set(labels))
    assert draws[0] != draws[1]


def test_the_logistic_regression_scores_each_split_it_is_given():
    rng = np.random.default_rng(0)
    x = np.vstack([rng.normal(-3, 1, (50, 4)), rng.normal(3, 1, (50, 4))])
    y = ["a"] * 50 + ["b"] * 50
    flipped = ["b" if v == "a" else "a" for v in y]
    row = frozen.fit_and_score(x, y, {"same": (x, y), "flipped": (x, flipped)})
    assert row["same"] == {"accuracy": 1.0, "macro_f1": 1.0, "n": 100} and row["flipped"]["accuracy"] == 0.0
    assert row["n_train"] == 100


def test_the_record_holds_the_whole_run_and_every_draw(tiny_models, tmp_path):
    from ktrain_recipes.data.loading import EMOTION_SLICE

    data = tmp_path / "emotion"
    shutil.copytree(EMOTION_SLICE, data)
    lines = (data / "val.txt").read_text().splitlines(keepends=True)
    (data / "val.txt").write_text("".join(lines[:200]))
    (data / "test.txt").write_text("".join(lines[200:]))
    out = tmp_path / "frozen.json"
    frozen.main([str(data), str(out), "--model", tiny_models["bert"], "--draws", "2"])
    record = json.loads(out.read_text())
    whole = record["all_training_texts"]
    assert whole["n_train"] == 1600 and whole["validation"]["n"] == 200 and whole["test"]["n"] == len(lines) - 200
    assert [d["seed"] for d in record["per_label_16"]] == [0, 1]
    assert all(d["n_train"] == 16 * 6 for d in record["per_label_16"])
    assert record["texts_embedded"] == 1600 + len(lines) and record["machine"].endswith("no GPU")
