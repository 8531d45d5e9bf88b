import dataclasses
import math
import json
import subprocess
import sys

import numpy as np
import pytest

import ktrain_recipes as kr
from ktrain_recipes.data.loading import EMOTION_LABELS
from ktrain_recipes.training.train import fit_with_checkpoint
from conftest import build_learner
from ktrain_recipes import RecipeConfig, RecipesError
from ktrain_recipes.data.maxlen import choose_maxlen, resolve_maxlen
from ktrain_recipes.training.recipe import checkpoint_identity
from tiny_models import FAMILIES


def test_choose_maxlen_rounds_quantile_up_to_multiple_of_8():
    assert choose_maxlen([10] * 999 + [60]) == 16
    assert choose_maxlen(list(range(1, 1001)), cap=2000) == 1000 and choose_maxlen([900], cap=512) == 512
    with pytest.raises(RecipesError):
        choose_maxlen([])


def test_resolve_maxlen_reports_truncation(tiny_models, capsys):
    tok = kr.load_tokenizer(tiny_models["bert"])
    texts = ["short text", "a much longer text " * 20]
    assert resolve_maxlen(16, tok, texts) == 16
    assert "1 of 2 training texts are longer" in capsys.readouterr().err
    with pytest.raises(RecipesError, match="maxlen must be"):
        resolve_maxlen(4, tok, texts)


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_trains_saves_loads_and_predicts(family, tiny_models, small_data, tmp_path):
    out = tmp_path / family
    config = RecipeConfig(tiny_models[family], data=str(small_data), out=str(out), epochs=1, batch_size=16, lr=1e-3,
                          seed=1, lr_find=family == "bert")
    metrics = kr.run_recipe(config)
    saved = json.loads((out / "metrics.json").read_text())
    for key in ["accuracy", "macro_f1", "report", "confusion_matrix", "train_seconds", "inference_ms_per_text",
                "maxlen", "model_id", "versions", "settings"]:
        assert key in saved, key
    # every setting of the one settings object is recorded, 'auto' precision as what it chose on this machine
    from ktrain_recipes.training.precision import choose_precision

    assert saved["settings"] == {**config.settings(), "precision": choose_precision("auto")[0]}
    # once: only under settings (the top-level maxlen is the one resolved from 'auto', a measurement)
    assert not (set(config.settings()) - {"maxlen"}) & set(saved)
    assert saved["n"] == 60 and saved["accuracy"] == metrics["accuracy"]
    assert saved["optimizer_steps"] == 10  # 150 texts in batches of 16, one epoch
    assert sum(map(sum, saved["confusion_matrix"])) == 60
    assert (out / "confusion_matrix.png").stat().st_size > 1000
    assert (out / "lr_find.png").exists() == (family == "bert")
    predictor = kr.load_checked_predictor(out)
    labels = kr.classify(predictor, ["i feel wonderful today", "i am scared"])
    assert len(labels) == 2 and set(labels) <= set(EMOTION_LABELS)
    proba = kr.classify(predictor, ["i feel wonderful today"], proba=True)
    assert proba.shape == (1, 6) and abs(proba.sum() - 1) < 1e-4
    assert not list(tmp_path.glob(".*partial*"))  # no staging folder left behind


@pytest.mark.slow
def test_same_seed_same_metrics_in_separate_runs(tiny_models, small_data, tmp_path):
    def run(i, seed):
        subprocess.run([sys.executable, "-m", "ktrain_recipes", "train", "--model", tiny_models["distilbert"],
                        "--data", str(small_data), "--out", str(tmp_path / str(i)), "--epochs", "1",
                        "--batch-size", "16", "--lr", "1e-3", "--seed", str(seed)], check=True, capture_output=True)
        return json.loads((tmp_path / str(i) / "metrics.json").read_text())

    first, second, other = run(0, 7), run(1, 7), run(2, 8)
    for key in ["history", "confusion_matrix", "accuracy", "macro_f1"]:
        assert first[key] == second[key], key
    assert first["history"]["loss"] != other["history"]["loss"]  # the seed does matter


def test_refuses_non_empty_out_before_training(tmp_path, small_data):
    (tmp_path / "keep.txt").write_text("precious")
    with pytest.raises(RecipesError, match="not empty.*--overwrite"):
        kr.run_recipe(RecipeConfig("minilm", data=str(small_data), out=str(tmp_path)))
    assert (tmp_path / "keep.txt").read_text() == "precious"


def test_overwrite_never_replaces_a_data_folder(small_data, tmp_path):
    import shutil

    data = tmp_path / "data"
    shutil.copytree(small_data, data)
    before = sorted(p.name for p in data.iterdir())
    with pytest.raises(RecipesError, match="not a predictor saved by ktrain_recipes.*train.txt"):
        kr.run_recipe(RecipeConfig("minilm", data=str(data), out=str(data), overwrite=True))
    assert sorted(p.name for p in data.iterdir()) == before


def _ctrl_c_in_second_epoch():
    import tensorflow as tf

    class CtrlCInSecondEpoch(tf.keras.callbacks.Callback):
        epoch = 0

        def on_epoch_begin(self, epoch, logs=None):
            self.epoch = epoch

        def on_epoch_end(self, epoch, logs=None):
            self.best = [w.copy() for w in self.model.get_weights()]  # one epoch: it is the best

        def on_train_batch_end(self, batch, logs=None):
            if self.epoch == 1 and batch == 2:
                raise KeyboardInterrupt

    return CtrlCInSecondEpoch()


def test_ctrl_c_keeps_the_best_epoch_and_resume_of_the_same_run_finishes_it(tiny_models, small_data, tmp_path,
                                                                           capsys):
    import numpy as np

    from ktrain_recipes.training.checkpoint import Checkpoint
    from ktrain_recipes.training.precision import choose_precision
    from ktrain_recipes.training.recipe import start_run

    ds = kr.load_emotion(small_data)
    model = tiny_models["electra"]
    t, learner = build_learner(model, ds, 16, seed=42)
    out = tmp_path / "run"
    config = RecipeConfig(model, data=str(small_data), out=str(out), batch_size=16, lr=1e-3, epochs=3, seed=42)
    checkpoint = Checkpoint(out, checkpoint_identity(start_run(config), t.maxlen))
    ctrl_c = _ctrl_c_in_second_epoch()
    trained = fit_with_checkpoint(learner, 1e-3, 3, checkpoint, checkpoint.start_fresh(), callbacks=[ctrl_c])
    assert trained["interrupted"] and len(trained["history"]["loss"]) == 1 and trained["epochs_completed"] == 1
    # the weights are those at the end of epoch 1, not the half-trained ones of epoch 2
    assert all(np.array_equal(a, b) for a, b in zip(ctrl_c.best, learner.model.get_weights()))

    with pytest.raises(RecipesError, match="nothing to resume"):
        kr.run_recipe(RecipeConfig(model, data=str(small_data), out=str(tmp_path / "other"), resume=True))
    # the run trained in what auto chose here; a checkpoint of it does not go on in another precision
    other_precision = "float32" if choose_precision("auto")[0] != "float32" else "bfloat16"
    for change, named in [({"seed": 5}, "seed"), ({"lr": 2e-3}, "lr"), ({"epochs": 4}, "epochs"),
                          ({"batch_size": 8}, "batch_size"), ({"limit": 100}, "data"),
                          ({"eval_limit": 50}, "validation"), ({"average_last": 2}, "average_last"),
                          ({"precision": other_precision}, "precision")]:
        with pytest.raises(RecipesError, match=f"other settings:.*\\b{named} \\("):
            kr.run_recipe(RecipeConfig(**{**config.settings(), "resume": True, **change}))
    capsys.readouterr()
    metrics = kr.run_recipe(RecipeConfig(**{**config.settings(), "resume": True}))
    assert "resuming after 1 of 3 epoch(s), mid-schedule" in capsys.readouterr().err
    # the whole run is recorded: the interrupted leg's epoch and the two it went on with
    assert metrics["epochs_completed"] == 3 and len(metrics["history"]["loss"]) == 3
    assert metrics["optimizer_steps"] == 3 * math.ceil(150 / 16)  # no epoch trained twice, none skipped
    assert metrics["train_seconds"] > trained["train_seconds"] and kr.load_checked_predictor(out)
    assert not checkpoint.exists()  # a completed save clears it
    with pytest.raises(RecipesError, match="holds a finished run .3 epochs.: nothing to resume"):
        kr.run_recipe(RecipeConfig(**{**config.settings(), "resume": True}))


def test_a_stale_checkpoint_is_removed_by_a_fresh_run_never_restored(tiny_models, small_data, tmp_path, capsys):
    out = tmp_path / "run"
    stale = tmp_path / ".run.resume"
    stale.mkdir()
    (stale / "run.json").write_text("{}")
    kr.run_recipe(RecipeConfig(tiny_models["bert"], data=str(small_data), out=str(out), epochs=1, batch_size=16,
                               lr=1e-3))
    assert "removed the checkpoint .run.resume of an earlier run" in capsys.readouterr().err
    assert not stale.exists()


def test_a_truncated_checkpoint_gets_one_line(tiny_models, small_data, tmp_path):
    from ktrain_recipes.training.recipe import start_run
    from ktrain_recipes.training.checkpoint import Checkpoint

    ds = kr.load_emotion(small_data)
    model = tiny_models["bert"]
    maxlen = resolve_maxlen("auto", kr.load_tokenizer(model), ds.texts("train"), verbose=False)
    config = RecipeConfig(model, data=str(small_data), out=str(tmp_path / "run"), epochs=2, resume=True)
    checkpoint = Checkpoint(tmp_path / "run", checkpoint_identity(start_run(dataclasses.replace(config, resume=False)),
                                                                  maxlen))
    checkpoint.start_fresh()
    checkpoint.write({"run_id": "x", "epochs_completed": 1, "train_seconds": 1.0, "history": {}, "per_epoch": []})
    (checkpoint.backup / "chief").mkdir(parents=True)
    (checkpoint.backup / "chief" / "checkpoint").write_text('model_checkpoint_path: "ckpt-1"\n')
    (checkpoint.backup / "chief" / "ckpt-1.index").write_bytes(b"truncated")
    with pytest.raises(RecipesError, match="truncated or unreadable"):
        kr.run_recipe(config)


def test_out_of_memory_suggests_a_smaller_batch(capsys):
    import tensorflow as tf

    class Data:
        def nsamples(self):
            return 640

    class Learner:
        batch_size, train_data = 64, Data()

        def fit_onecycle(self, *args, **kwargs):
            raise tf.errors.ResourceExhaustedError(None, None, "OOM when allocating tensor")

    with pytest.raises(RecipesError, match="out of memory at batch size 64: try --batch-size 32"):
        fit_with_checkpoint(Learner(), 1e-4, 1)
    assert "only 10 optimizer steps" in capsys.readouterr().err  # the note comes before training starts


def test_a_nan_loss_stops_training_and_saves_nothing(tiny_models, small_data, tmp_path):
    ds = kr.load_emotion(small_data)
    _, learner = build_learner(tiny_models["bert"], ds, 16)
    with pytest.raises(RecipesError, match="loss became NaN.*lower --lr"):
        fit_with_checkpoint(learner, 1e12, 1)


def test_few_optimizer_steps_get_a_note_saying_what_to_do():
    from ktrain_recipes.training.train import few_steps_note, optimizer_steps

    assert optimizer_steps(400, 32, 2) == 26 and optimizer_steps(16000, 32, 4) == 2000
    note = few_steps_note(400, 32, 2)
    assert "only 26 optimizer steps" in note and "--batch-size" in note and "\n" not in note
    assert few_steps_note(16000, 32, 4) is None and few_steps_note(400, 32, 0) is None


def test_the_default_batch_shrinks_on_small_data_so_that_training_makes_enough_updates():
    from ktrain_recipes.training.train import batch_for_updates, optimizer_steps

    assert batch_for_updates(16000, 32, 3) == 32  # all of emotion: 1,500 updates at the model's batch
    assert batch_for_updates(1600, 32, 3) == 8 and optimizer_steps(1600, 8, 3) == 600  # the shipped slice
    assert batch_for_updates(4000, 32, 3) == 16  # 750 updates: halved once, no further
    assert batch_for_updates(50, 32, 1) == 8  # never below 8, however few the texts


def test_a_run_without_a_batch_size_on_small_data_trains_at_the_smaller_batch(tiny_models, small_data, tmp_path,
                                                                               capsys):
    from ktrain_recipes.training.recipe import start_run

    run = start_run(kr.RecipeConfig(tiny_models["bert"], data=str(small_data), out=str(tmp_path / "a"), epochs=1))
    assert run.config.batch_size == 8  # 150 texts: the model's 32 would make 5 updates
    assert "batch 8 instead of the model's 32" in capsys.readouterr().err
    given = start_run(kr.RecipeConfig(tiny_models["bert"], data=str(small_data), out=str(tmp_path / "b"), epochs=1,
                                      batch_size=32))
    assert given.config.batch_size == 32  # a batch size given is kept


def test_weight_average_is_the_mean_of_the_last_epochs_weights():
    import numpy as np
    import tensorflow as tf

    from ktrain_recipes.training.train import weight_average

    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
    model.compile(optimizer=tf.keras.optimizers.legacy.SGD(0.1), loss="mse")
    seen = []
    keep = tf.keras.callbacks.LambdaCallback(on_epoch_end=lambda e, logs: seen.append(model.get_weights()))
    average = weight_average(2, 3)
    x, y = np.random.rand(32, 3), np.random.rand(32, 2)
    model.fit(x, y, epochs=3, verbose=0, callbacks=[keep, average])
    assert average.apply(model) == 2
    for w, a, b in zip(model.get_weights(), seen[1], seen[2]):
        assert np.allclose(w, (a + b) / 2) and not np.allclose(a, b)


def test_weight_decay_through_ktrains_learner_is_decoupled(tiny_models, small_data):
    # rows of the position table beyond maxlen get no gradient, so Adam leaves them alone: only a
    # decoupled decay (w -= lr * wd * w at every step) moves them, and only when it is on
    ds = kr.load_emotion(small_data)
    shrink = {}
    for wd in (0.0, 0.1):
        _, learner = build_learner(tiny_models["bert"], ds, 16, maxlen=32, seed=0)
        if wd:
            learner.set_weight_decay(wd)
        table = next(w for w in learner.model.weights if "position_embeddings" in w.name)
        before = table.numpy()[100:].copy()
        fit_with_checkpoint(learner, 1e-2, 1)
        shrink[wd] = float(np.abs(table.numpy()[100:]).sum() / np.abs(before).sum())
    assert shrink[0.0] == 1.0 and shrink[0.1] < 0.999


def test_train_with_weight_decay_and_averaging_records_both(tiny_models, small_data, tmp_path):
    out = tmp_path / "avg"
    config = RecipeConfig(tiny_models["bert"], data=str(small_data), out=str(out), epochs=2, batch_size=16, lr=1e-3,
                          weight_decay=0.01, average_last=2)
    metrics = kr.run_recipe(config)
    assert metrics["averaged_epochs"] == 2 and metrics["optimizer"] == "AdamWeightDecay"
    assert kr.classify(kr.load_checked_predictor(out), ["i am happy"])  # the averaged weights saved and load
    with pytest.raises(RecipesError, match="--average-last 3 needs at least that many --epochs"):
        RecipeConfig(tiny_models["bert"], epochs=2, average_last=3).with_defaults()
    with pytest.raises(RecipesError, match="--weight-decay must be"):
        RecipeConfig(tiny_models["bert"], weight_decay=-0.1).with_defaults()


@pytest.mark.parametrize("damage, named", [
    ([1, 2], "a JSON list"),
    ({"identity": [], "history": {}, "per_epoch": [], "run_id": "x", "epochs_completed": 0, "train_seconds": 0},
     "identity is list"),
    ({"identity": {}, "per_epoch": [], "run_id": "x", "epochs_completed": 1, "train_seconds": 0},
     "history is missing"),
    ({"identity": {}, "history": {}, "per_epoch": [], "run_id": "x", "epochs_completed": "two", "train_seconds": 0},
     "epochs_completed is 'two'"),
    ({"identity": {}, "history": {"loss": 0.5}, "per_epoch": [], "run_id": "x", "epochs_completed": 1,
      "train_seconds": 3.0}, "a history entry is not a list"),
])
def test_a_damaged_checkpoint_record_gets_one_line(tmp_path, damage, named):
    from ktrain_recipes.training.checkpoint import Checkpoint

    checkpoint = Checkpoint(tmp_path / "run", {"seed": 42})
    checkpoint.folder.mkdir()
    checkpoint.info.write_text(json.dumps(damage))
    with pytest.raises(RecipesError, match=f"damaged record run.json \\({named}"):
        checkpoint.resume()


@pytest.mark.parametrize("kind", ["file", "link"])
def test_a_file_or_link_in_the_checkpoints_place_is_refused_and_left_alone(tmp_path, kind, capsys):
    from ktrain_recipes.training.checkpoint import Checkpoint

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("not ours")
    checkpoint = Checkpoint(tmp_path / "run", {"seed": 42})
    if kind == "file":
        checkpoint.folder.write_text("not a checkpoint")
    else:
        checkpoint.folder.symlink_to(elsewhere)
    for step in (checkpoint.start_fresh, checkpoint.resume):
        with pytest.raises(RecipesError, match=f"is a {kind}, not a checkpoint folder"):
            step()
    assert "removed the checkpoint" not in capsys.readouterr().err  # no false note
    assert (elsewhere / "keep.txt").read_text() == "not ours" and (checkpoint.folder.is_symlink() or
                                                                  checkpoint.folder.read_text() == "not a checkpoint")


def test_a_second_run_into_the_same_out_is_refused_and_destroys_nothing(tiny_models, small_data, tmp_path):
    from ktrain_recipes.training.checkpoint import run_lock

    out = tmp_path / "run"
    config = RecipeConfig(tiny_models["bert"], data=str(small_data), out=str(out), epochs=1, batch_size=16, lr=1e-3,
                          limit=64)
    live = tmp_path / ".run.resume"  # the first run's live checkpoint
    live.mkdir()
    (live / "run.json").write_text('{"being": "written"}')
    with run_lock(out):  # the first run, training
        for second in (config, dataclasses.replace(config, resume=True)):
            with pytest.raises(RecipesError, match=r"another run \(pid \d+\) is training into .*choose another --out"):
                kr.run_recipe(second)
        assert (live / "run.json").read_text() == '{"being": "written"}' and not out.exists()
    assert not (tmp_path / ".run.run-lock").exists()  # the lock leaves no file behind
    assert kr.run_recipe(config)["epochs_completed"] == 1  # once the first run is done, the folder is free
    assert not (tmp_path / ".run.run-lock").exists() and not live.exists()


def test_the_test_split_is_scored_once_after_training_and_kept_in_the_record(tiny_models, small_data, tmp_path):
    """A data folder with a test file: run_recipe scores it once, after the model is chosen on validation, and
    metrics.json keeps its accuracy, macro-F1 and size beside validation's, with the CPU the run used."""
    import json
    import shutil

    import ktrain_recipes as kr

    data = tmp_path / "with-test"
    shutil.copytree(small_data, data)
    lines = (small_data / "val.txt").read_text().splitlines()[:24]
    (data / "test.txt").write_text("\n".join(lines) + "\n")
    out = tmp_path / "m"
    metrics = kr.run_recipe(kr.RecipeConfig(tiny_models["bert"], data=str(data), out=str(out), limit=64, epochs=1,
                                            batch_size=16, lr=1e-3))
    saved = json.loads((out / "metrics.json").read_text())
    assert saved["test"]["n"] == 24 and 0 <= saved["test"]["accuracy"] <= 1 and "macro_f1" in saved["test"]
    expected = kr.score([ln.rsplit(";", 1)[1] for ln in lines], kr.load_checked_predictor(out).predict(
        [ln.rsplit(";", 1)[0] for ln in lines]), metrics["label_names"])
    assert saved["test"]["accuracy"] == pytest.approx(expected["accuracy"])
    assert saved["cpu"] and isinstance(saved["cpu_features"], list)
    # and without a test file, no test figure
    plain = kr.run_recipe(kr.RecipeConfig(tiny_models["bert"], data=str(small_data), out=str(tmp_path / "p"),
                                          limit=64, epochs=1, batch_size=16, lr=1e-3))
    assert "test" not in plain
