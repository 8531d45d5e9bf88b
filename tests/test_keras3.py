"""The Keras 3 pieces: the one-cycle schedule gives ktrain's rates step for step, and the LR finder raises the rate,
stops at divergence and puts the model back as it was."""

import math

import numpy as np
import pytest

import ktrain_recipes as kr
from ktrain_recipes import RecipesError


def ktrain_rates(max_lr: float, steps_per_epoch: int, epochs: int) -> list[float]:
    """The rate of each step as ktrain's own CyclicLR sets it in fit_onecycle (momentum cycling off)."""
    pytest.importorskip("ktrain", reason="ktrain's schedule to compare with (not on the Keras 3 road without TF)")
    import tensorflow as tf
    from ktrain.lroptimize.triangular import CyclicLR

    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    model.compile(optimizer=tf.keras.optimizers.legacy.Adam(max_lr), loss="mse")
    clr = CyclicLR(base_lr=max_lr / 10, max_lr=max_lr, step_size=math.ceil(steps_per_epoch * epochs / 2),
                   reduce_on_plateau=0, max_momentum=None, min_momentum=None, verbose=0)
    clr.set_model(model)
    clr.on_train_begin()
    rates = []
    for batch in range(steps_per_epoch * epochs):
        rates.append(float(tf.keras.backend.get_value(model.optimizer.lr)))
        clr.on_batch_end(batch)
    return rates


@pytest.mark.parametrize("steps_per_epoch, epochs", [(10, 3), (7, 2), (500, 4), (1, 1)])
def test_one_cycle_gives_ktrains_rate_at_every_step(steps_per_epoch, epochs):
    schedule = kr.OneCycle(1e-4, steps_per_epoch, epochs)
    ours = [float(schedule(t)) for t in range(steps_per_epoch * epochs)]
    # float32 steps: equal to about 1e-5, closer than any step of the schedule to its neighbour
    assert ours == pytest.approx(ktrain_rates(1e-4, steps_per_epoch, epochs), rel=1e-4)
    assert ours[0] == pytest.approx(1e-5)
    if steps_per_epoch * epochs > 2:
        assert max(ours) == pytest.approx(1e-4, rel=1e-3)


def test_one_cycle_round_trips_through_a_keras_file(tmp_path):
    import keras

    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    model.compile(optimizer=keras.optimizers.Adam(kr.OneCycle(3e-4, 20, 2)), loss="mse")
    model.save(tmp_path / "m.keras")
    loaded = keras.saving.load_model(tmp_path / "m.keras")
    schedule = loaded.optimizer.learning_rate_schedule if hasattr(loaded.optimizer, "learning_rate_schedule") \
        else loaded.optimizer._learning_rate
    assert isinstance(schedule, kr.OneCycle) and schedule.get_config() == {"max_lr": 3e-4, "steps_per_epoch": 20,
                                                                          "epochs": 2}


def test_the_lr_finder_raises_the_rate_stops_at_divergence_and_restores_the_model():
    import keras

    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2048, 8)).astype("float32")
    y = (x[:, 0] + x[:, 1] > 0).astype("int32")
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(2)])
    model.compile(optimizer=keras.optimizers.SGD(0.01),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    before = [w.copy() for w in model.get_weights()]
    finder = kr.LRFinder(start_lr=1e-4, lr_mult=1.3, max_lr=1e4)
    model.fit(x, y, batch_size=8, epochs=1, callbacks=[finder], verbose=0)
    steps = len(finder.lrs)
    assert 10 < steps < 2048 // 8  # it stopped by itself, well before the epoch's 256 steps
    assert finder.lrs == pytest.approx([1e-4 * 1.3 ** i for i in range(steps)])
    assert min(finder.losses) < finder.losses[0] and finder.losses[-1] > 2 * min(finder.losses)  # fell, then blew up
    assert all(np.array_equal(a, b) for a, b in zip(before, model.get_weights()))  # it only looked
    assert float(model.optimizer.learning_rate) == pytest.approx(0.01)
    marks = finder.suggestions()
    # the lowest loss of the window the marks are read from: ktrain skips the first 10 and the last 5 batches
    window = finder.losses[10:len(finder.losses) - 5]
    lowest = finder.lrs[10 + int(np.argmin(window))]
    # ktrain marks the longest valley and the steepest fall, both on the falling side of the curve, before the
    # lowest loss; the tenth of the lowest point is printed, not marked
    assert 1e-4 < marks["longest valley"] <= lowest and 1e-4 < marks["steepest fall"] <= lowest
    assert marks["min_loss_over_10"] == pytest.approx(lowest / 10)
    fig = kr.plot_lr_find(finder)
    assert fig.axes[0].get_xscale() == "log"
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert [label.split(":")[0] for label in labels] == ["longest valley", "steepest fall"]


def test_the_valley_rule_is_ktrains():
    pytest.importorskip("ktrain", reason="ktrain's rule to compare with (not on the Keras 3 road without TF)")
    from ktrain.lroptimize.lrfinder import LRFinder as KtrainFinder

    rng = np.random.default_rng(0)
    losses = list(np.concatenate([np.full(20, 2.0), np.linspace(2.0, 0.5, 40), np.linspace(0.5, 3, 15)])
                  + rng.normal(0, 0.01, 75))
    finder = kr.LRFinder()
    finder.lrs, finder.losses = [1e-6 * 1.1 ** i for i in range(75)], losses
    at = KtrainFinder.valley(None, list(range(75)), losses)
    assert finder.suggestions(skip_begin=0, skip_end=0)["longest valley"] == finder.lrs[at]


def test_the_finder_refuses_settings_that_cannot_work():
    with pytest.raises(ValueError, match="lr_mult > 1"):
        kr.LRFinder(lr_mult=1.0)
    with pytest.raises(ValueError, match="max_lr > 0"):
        kr.OneCycle(0, 10, 1)


@pytest.mark.slow
def test_kerashub_reads_the_offline_minilm_trains_on_one_cycle_and_round_trips(emotion, tiny_predictor, tmp_path):
    """The path after ktrain in the same environment as ktrain: KerasHub's BertTextClassifier from the offline
    MiniLM folder (the same weights and vocabulary as the ktrain path), trained on kr.OneCycle, saved as .keras and
    reloaded; a ktrain predictor still answers in the same process."""
    import keras
    import keras_hub
    from transformers import AutoTokenizer

    from ktrain_recipes.models import minilm_source

    folder = str(minilm_source())
    keras.utils.set_random_seed(0)
    model = keras_hub.models.BertTextClassifier.from_preset(folder, num_classes=6, activation=None)
    assert model.count_params() == 22_715_526  # MiniLM's 22,713,216 and a 384 x 6 head
    model.preprocessor.sequence_length = 32
    texts = ["i feel so happy and relaxed today", "I'm terrified of what comes next!!"]
    features = model.preprocessor(texts)
    ids = np.asarray((features[0] if isinstance(features, tuple) else features)["token_ids"])
    reference = AutoTokenizer.from_pretrained(folder)(texts, padding="max_length", max_length=32)["input_ids"]
    assert ids.tolist() == reference  # the same WordPiece ids the ktrain path feeds MiniLM
    x, y = emotion.texts("train")[:128], np.asarray(emotion.label_ids(emotion.labels("train")[:128]))
    schedule = kr.OneCycle(1e-4, steps_per_epoch=8, epochs=2)
    model.compile(optimizer=keras.optimizers.Adam(schedule),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    history = model.fit(x, y, batch_size=16, epochs=2, verbose=0)
    assert int(model.optimizer.iterations) == 16 and np.isfinite(history.history["loss"]).all()
    assert float(model.optimizer.learning_rate) == pytest.approx(float(schedule(16)), rel=1e-5)
    model.save(tmp_path / "minilm.keras")
    reloaded = keras.saving.load_model(tmp_path / "minilm.keras")
    assert np.allclose(reloaded.predict(texts, verbose=0), model.predict(texts, verbose=0), atol=1e-5)
    assert len(kr.load_checked_predictor(tiny_predictor).predict(["i am fine"])) == 1  # ktrain, tf_keras: still fine
    # the commands take predictor folders: a .keras file, or a folder of one, is named as what it is
    from ktrain_recipes_tools import cli

    for given in (tmp_path / "minilm.keras", tmp_path):
        with pytest.raises(RecipesError, match="a Keras 3 model.*keras.saving.load_model"):
            kr.load_checked_predictor(given)
    assert cli.main(["predict", "--predictor", str(tmp_path / "minilm.keras"), "a text"]) == 1


def test_keras_hub_preset_gives_a_folder_every_keras_hub_reads(tmp_path, monkeypatch):
    """With no hub, MiniLM comes from the offline copy, its weights renamed once to the old names (KerasHub 0.26, as
    Colab ships it, reads no other); a folder that needs no renaming is given as is."""
    from pathlib import Path

    from safetensors import safe_open

    from ktrain_recipes.keras3.presets import MINILM_PRESET

    monkeypatch.setenv("KTRAIN_RECIPES_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr("ktrain_recipes.models.hub_reachable", lambda timeout=3.0: False)
    folder = Path(kr.keras_hub_preset(MINILM_PRESET))
    assert folder.parent == tmp_path / "cache" / "keras-hub" and (folder / "vocab.txt").is_file()
    with safe_open(folder / "model.safetensors", "np") as f:
        names = list(f.keys())
    assert len(names) > 90 and all(name.startswith("bert.") for name in names)
    assert "bert.embeddings.LayerNorm.gamma" in names and not any(name.endswith("LayerNorm.weight") for name in names)
    assert kr.keras_hub_preset(str(folder)) == str(folder)  # already under 'bert.': as it is
    other = tmp_path / "roberta"
    other.mkdir()
    (other / "config.json").write_text('{"model_type": "roberta"}')
    assert kr.keras_hub_preset(str(other)) == str(other)
    with pytest.raises(RecipesError, match="neither a folder nor a Hugging Face preset"):
        kr.keras_hub_preset("sentence-transformers/all-MiniLM-L6-v2")  # KerasHub needs hf:// before a hub id
    with pytest.raises(RecipesError, match="does not answer from here"):
        kr.keras_hub_preset("hf://FacebookAI/roberta-base")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(RecipesError, match="has no readable config.json"):
        kr.keras_hub_preset(str(empty))
    (empty / "config.json").write_text('{"model_type": "bert"}')
    (empty / "model.safetensors").write_bytes(b"not safetensors")
    with pytest.raises(RecipesError, match="cannot be read"):
        kr.keras_hub_preset(str(empty))
