"""A run cut off by ``kill -9`` goes on mid-schedule with ``--resume``: the same weight updates, the same learning
rates, the same data order, and the figures of the run that was never cut."""

import json
import re
import subprocess
import sys

from pathlib import Path

import pytest

# Run the CLI with two test hooks: every training step's learning rate appended to $LR_LOG, and with $KILL_AT
# ("EPOCH:BATCH", 0-based) a SIGKILL after that batch, as a lost runtime would stop the process.
SCRIPT = """
import json, os, signal, sys
import tensorflow as tf
from ktrain_recipes_tools import cli
from ktrain_recipes.training import recipe

fit = recipe.fit_with_checkpoint


class Hooks(tf.keras.callbacks.Callback):
    epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_begin(self, batch, logs=None):
        with open(os.environ["LR_LOG"], "a") as f:
            f.write(json.dumps([self.epoch, batch, float(tf.keras.backend.get_value(self.model.optimizer.lr)),
                                float(tf.keras.backend.get_value(self.model.optimizer.beta_1))]) + "\\n")

    def on_train_batch_end(self, batch, logs=None):
        if os.environ.get("KILL_AT") == f"{self.epoch}:{batch}":
            os.kill(os.getpid(), signal.SIGKILL)
        if os.environ.get("TERM_AT") == f"{self.epoch}:{batch}":
            os.kill(os.getpid(), signal.SIGTERM)


def hooked(*args, callbacks=None, **kwargs):
    record = fit(*args, callbacks=(callbacks or []) + [Hooks()], **kwargs)
    if os.environ.get("KILL_AT") == "after-fit":  # every epoch done: killed in the final validation and save
        os.kill(os.getpid(), signal.SIGKILL)
    return record


recipe.fit_with_checkpoint = hooked
sys.exit(cli.main(sys.argv[1:]))
"""


def train(args, lr_log, kill_at=None, term_at=None):
    import os

    env = {**os.environ, "LR_LOG": str(lr_log), **({"KILL_AT": kill_at} if kill_at else {}),
           **({"TERM_AT": term_at} if term_at else {})}
    return subprocess.run([sys.executable, "-c", SCRIPT, "train", *args], env=env, capture_output=True, text=True)


def steps(lr_log):
    return [json.loads(line) for line in lr_log.read_text().splitlines()]


@pytest.mark.slow
def test_a_run_killed_in_epoch_2_resumes_mid_schedule_as_if_never_cut(tiny_models, small_data, tmp_path):
    common = ["--model", tiny_models["bert"], "--data", str(small_data), "--epochs", "3", "--batch-size", "16",
              "--lr", "1e-3", "--seed", "11"]
    whole = train(common + ["--out", str(tmp_path / "whole")], tmp_path / "whole.lr")
    assert whole.returncode == 0, whole.stderr[-2000:]

    out = ["--out", str(tmp_path / "cut")]
    cut = train(common + out, tmp_path / "cut.lr", kill_at="1:4")
    assert cut.returncode == -9  # killed, as a lost runtime is: no handler ran
    assert not (tmp_path / "cut").exists() and (tmp_path / ".cut.resume" / "run.json").is_file()
    first_leg = json.loads((tmp_path / ".cut.resume" / "run.json").read_text())["train_seconds"]
    assert first_leg > 0  # the epoch that finished before the kill is counted
    before = steps(tmp_path / "cut.lr")
    resumed = train(common + out + ["--resume"], tmp_path / "resumed.lr")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "resuming after 1 of 3 epoch(s)" in resumed.stderr

    reference, after = steps(tmp_path / "whole.lr"), steps(tmp_path / "resumed.lr")
    per_epoch = len(reference) // 3
    assert before[-1][:2] == [1, 4] and len(before) == per_epoch + 5
    # the resumed leg starts at epoch 2's first step, with the rate and momentum the whole run used there
    assert [s[:2] for s in after] == [s[:2] for s in reference[per_epoch:]]
    assert after[0][2:] == pytest.approx(reference[per_epoch][2:], rel=1e-6)
    assert [v for s in after for v in s[2:]] == pytest.approx([v for s in reference[per_epoch:] for v in s[2:]],
                                                              rel=1e-6)

    a, b = (json.loads((tmp_path / name / "metrics.json").read_text()) for name in ("whole", "cut"))
    assert a["optimizer_steps"] == b["optimizer_steps"] == len(reference)
    assert b["epochs_completed"] == 3 and len(b["history"]["loss"]) == 3 and b["train_seconds"] > first_leg
    # the same model: the resumed predictor's validation probabilities are the uncut one's, to float noise (a
    # resumed leg starts from the checkpoint, not from memory, so its sums need not be bit-identical; on 60
    # validation texts one text at a class boundary is 1.7 points, so accuracy alone cannot say "within 0.5")
    import numpy as np

    import ktrain_recipes as kr
    from ktrain_recipes.data.loading import load_data

    texts = load_data(str(small_data)).texts("validation")
    p_whole, p_cut = (np.asarray(kr.load_checked_predictor(tmp_path / name).predict(texts, return_proba=True))
                      for name in ("whole", "cut"))
    noise = float(np.abs(p_whole - p_cut).max())
    assert noise < 0.01
    # the same label for every text whose two top probabilities are further apart than that noise could move them;
    # a tiny model's probabilities sit near 1/6, so texts within the noise may turn (accuracy moved 4 of 60 texts
    # under two test workers): accuracy differs by at most their share
    top = np.sort(p_whole, axis=1)
    clear = top[:, -1] - top[:, -2] > 2 * noise
    assert (p_whole.argmax(axis=1) == p_cut.argmax(axis=1))[clear].all()
    assert abs(a["accuracy"] - b["accuracy"]) <= (~clear).sum() / len(texts) + 1e-9, (a["accuracy"], b["accuracy"])
    assert not (tmp_path / ".cut.resume").exists()  # a finished run removes its checkpoint


@pytest.mark.slow
def test_a_run_killed_after_its_last_epoch_resumes_and_finishes_the_save(tiny_models, small_data, tmp_path):
    common = ["--model", tiny_models["bert"], "--data", str(small_data), "--epochs", "2", "--batch-size", "16",
              "--lr", "1e-3", "--seed", "5"]
    whole = train(common + ["--out", str(tmp_path / "whole")], tmp_path / "whole.lr")
    assert whole.returncode == 0, whole.stderr[-2000:]
    out = ["--out", str(tmp_path / "cut")]
    cut = train(common + out, tmp_path / "cut.lr", kill_at="after-fit")
    assert cut.returncode == -9 and not (tmp_path / "cut").exists()
    resumed = train(common + out + ["--resume"], tmp_path / "resumed.lr")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "orig_base_lr" not in resumed.stderr and "Traceback" not in resumed.stderr
    assert not (tmp_path / "resumed.lr").exists() or steps(tmp_path / "resumed.lr") == []  # nothing trained again
    a, b = (json.loads((tmp_path / name / "metrics.json").read_text()) for name in ("whole", "cut"))
    assert b["epochs_completed"] == 2 and b["optimizer_steps"] == a["optimizer_steps"]
    assert abs(a["accuracy"] - b["accuracy"]) <= 1 / b["n"] + 1e-9


@pytest.fixture(scope="module")
def cut_run(tiny_models, small_data, tmp_path_factory):
    """One run killed in its second epoch (its first finished: a training state and a best epoch kept): its
    arguments without --out, and its checkpoint, which each test copies beside its own --out."""
    where = tmp_path_factory.mktemp("cut")
    common = ["--model", tiny_models["bert"], "--data", str(small_data), "--epochs", "3", "--batch-size", "16",
              "--lr", "1e-3", "--seed", "3", "--average-last", "3"]
    assert train(common + ["--out", str(where / "cut")], where / "cut.lr", kill_at="1:4").returncode == -9
    return common, where / ".cut.resume"


def resumable(cut_run, folder) -> list[str]:
    """A copy of ``cut_run``'s checkpoint for ``--out folder``; the arguments that resume it."""
    import shutil

    common, checkpoint = cut_run
    shutil.copytree(checkpoint, folder.with_name(f".{folder.name}.resume"))
    return common + ["--out", str(folder), "--resume"]


@pytest.mark.slow
def test_a_state_cut_in_half_is_refused(cut_run, tmp_path):
    """A kill while the training state is written leaves it half written: the readability check read only its
    index, and the resumed run failed later with a traceback."""
    args = resumable(cut_run, tmp_path / "half")
    data = sorted((tmp_path / ".half.resume").rglob("*.data-*"))
    assert data, sorted(p.name for p in (tmp_path / ".half.resume").rglob("*"))
    data[0].write_bytes(data[0].read_bytes()[: data[0].stat().st_size // 2])
    half = train(args, tmp_path / "half.lr")
    assert half.returncode == 1 and "truncated or unreadable: train again without --resume" in half.stderr
    assert "Traceback" not in half.stderr


@pytest.mark.slow
def test_a_record_ahead_of_a_lost_state_starts_over(cut_run, tmp_path):
    """A kill between an epoch's record and its state was refused, though nothing is lost by starting over, and a
    resume announced epochs whose state it did not have."""
    import shutil

    args = resumable(cut_run, tmp_path / "lost")
    for path in (tmp_path / ".lost.resume").iterdir():  # the record of epoch 1 stays; its training state is gone
        if path.is_dir():
            shutil.rmtree(path)
    resumed = train(args, tmp_path / "resumed.lr")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "holds no training state (the run was cut between the two): starting from the first epoch" in resumed.stderr
    assert "resuming after" not in resumed.stderr
    assert steps(tmp_path / "resumed.lr")[0][:2] == [0, 0]  # epoch 1 trained again, from its first step
    assert json.loads((tmp_path / "lost" / "metrics.json").read_text())["epochs_completed"] == 3


@pytest.mark.slow
def test_another_runs_training_state_under_this_record_is_refused_in_one_line(cut_run, small_data, tmp_path):
    """The training state of a run on 3 labels put under this run's record (6 labels): the restore inside fit
    failed with a traceback. Refused in one line; the checkpoint is left as it was."""
    import shutil

    three = tmp_path / "three"
    three.mkdir()
    for name in ("train.txt", "val.txt"):
        lines = (small_data / name).read_text().splitlines()
        keep = sorted({line.rsplit(";", 1)[1] for line in lines})[:3]
        (three / name).write_text("".join(f"{line}\n" for line in lines if line.rsplit(";", 1)[1] in keep))
    other = [*cut_run[0], "--out", str(tmp_path / "other")]
    other[other.index("--data") + 1] = str(three)
    assert train(other, tmp_path / "other.lr", kill_at="1:0").returncode == -9
    args = resumable(cut_run, tmp_path / "mine")
    state = tmp_path / ".mine.resume" / "backup"
    shutil.rmtree(state)
    shutil.copytree(tmp_path / ".other.resume" / "backup", state)
    before = sorted((p.relative_to(state), p.read_bytes()) for p in state.rglob("*") if p.is_file())
    resumed = train(args, tmp_path / "resumed.lr")
    assert resumed.returncode == 1, resumed.stderr[-2000:]
    assert "Traceback" not in resumed.stderr, resumed.stderr[-3000:]
    last = resumed.stderr.strip().splitlines()[-1]
    assert "training state" in last and "does not fit this run's model" in last and "without --resume" in last, last
    assert sorted((p.relative_to(state), p.read_bytes()) for p in state.rglob("*") if p.is_file()) == before
    assert not (tmp_path / "mine").exists()


@pytest.mark.slow
def test_a_best_epoch_cut_by_a_kill_then_a_stop_in_the_resumed_leg_keeps_the_next_best(cut_run, tmp_path):
    """best.h5 cut by the kill, then SIGTERM in the resumed leg: loading the cut file failed; now it is removed on
    resuming, the resumed leg's epoch is kept as the best, and the stop saves it (exit 143)."""
    args = resumable(cut_run, tmp_path / "out")
    best = tmp_path / ".out.resume" / "best.h5"
    best.write_bytes(best.read_bytes()[:2000])
    stopped = train(args, tmp_path / "resumed.lr", term_at="2:2")
    assert stopped.returncode == 143, stopped.stderr[-2000:]
    assert "best epoch's weights in" in stopped.stderr and "were cut off by the kill: removed" in stopped.stderr
    assert "Traceback" not in stopped.stderr
    assert json.loads((tmp_path / "out" / "metrics.json").read_text())["interrupted"] is True


@pytest.mark.slow
def test_average_last_keeps_the_sums_of_a_cut_runs_earlier_legs(cut_run, small_data, tmp_path):
    """--average-last 3 cut in epoch 2 ended as a 2-epoch average: the killed leg's sums were lost."""
    import numpy as np

    import ktrain_recipes as kr
    from ktrain_recipes.data.loading import load_data

    whole = train(cut_run[0] + ["--out", str(tmp_path / "whole")], tmp_path / "whole.lr")
    assert whole.returncode == 0, whole.stderr[-2000:]
    resumed = train(resumable(cut_run, tmp_path / "cut"), tmp_path / "resumed.lr")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "were lost" not in resumed.stderr
    a, b = (json.loads((tmp_path / name / "metrics.json").read_text()) for name in ("whole", "cut"))
    assert a["averaged_epochs"] == b["averaged_epochs"] == 3
    # the average of the same three epochs: the uncut run's probabilities, to float noise (a 2-epoch average of
    # this tiny model differs from the 3-epoch one by far more than that)
    texts = load_data(str(small_data)).texts("validation")
    p_whole, p_cut = (np.asarray(kr.load_checked_predictor(tmp_path / name).predict(texts, return_proba=True))
                      for name in ("whole", "cut"))
    assert float(np.abs(p_whole - p_cut).max()) < 0.01


@pytest.mark.slow
def test_sigterm_in_epoch_2_saves_the_best_epoch_keeps_the_checkpoint_and_exits_143(tiny_models, small_data,
                                                                                    tmp_path):
    args = ["--model", tiny_models["bert"], "--data", str(small_data), "--epochs", "3", "--batch-size", "16",
            "--lr", "1e-3", "--seed", "5", "--out", str(tmp_path / "out")]
    stopped = train(args, tmp_path / "lr.log", term_at="1:2")
    assert stopped.returncode == 143, stopped.stderr[-2000:]  # a scheduler sees a stopped run, not a success
    assert "stopped (SIGTERM)" in stopped.stderr and "--resume goes on" in stopped.stderr
    saved = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert saved["interrupted"] is True
    assert (tmp_path / ".out.resume" / "run.json").is_file()  # what --resume goes on from


def test_the_data_order_depends_on_the_epoch_only(tiny_models, small_data):
    import ktrain_recipes as kr
    from conftest import build_learner

    ds = kr.load_emotion(small_data)
    _, learner = build_learner(tiny_models["bert"], ds, 16, seed=3)
    data = learner.train_data
    orders = [[b.tolist() for b in data.batch_indices(train=True)] for _ in range(3)]
    data.set_epoch(1)
    assert [b.tolist() for b in data.batch_indices(train=True)] == orders[1]
    assert orders[0] != orders[1]


def small_keras_model():
    from ktrain_recipes import compat  # noqa: F401  (tf.keras is tf_keras, as in training)
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
    model.build((None, 3))
    return model


def test_braces_in_the_output_path_reach_the_checkpoint_as_written(tmp_path):
    """Keras' ModelCheckpoint formats its path with str.format: '--out solo{1}' or a Drive folder 'dir{a}/m' killed
    every training at the end of its first epoch (KeyError, IndexError). The best epoch is written where named."""
    from ktrain_recipes.training.checkpoint import Checkpoint

    model = small_keras_model()
    for name in ("solo{1}", "dir{a}", "{}", "x{epoch}"):
        out = tmp_path / name / "m"
        checkpoint = Checkpoint(out, {"model": "m"})
        checkpoint.folder.mkdir(parents=True)
        best = checkpoint.callbacks({"history": {}})[-1]
        best.set_model(model)
        best.on_epoch_end(0, {"val_loss": 0.5})
        assert [p.name for p in checkpoint.folder.iterdir()] == ["best.h5"]


def test_a_stop_while_the_best_epoch_is_written_leaves_the_previous_best_whole(tmp_path, monkeypatch):
    """Battery v6 W47: SIGTERM while best.h5 was written left a cut file that still opened as HDF5, and restoring
    it ended in a traceback. The weights go to a temporary file renamed over best.h5 once whole."""
    from ktrain_recipes.training.checkpoint import Checkpoint, readable_h5
    from ktrain_recipes.training.train import restore_best

    model = small_keras_model()
    checkpoint = Checkpoint(tmp_path / "out", {"model": "m"})
    checkpoint.folder.mkdir()
    best = checkpoint.callbacks({"history": {}})[-1]
    best.set_model(model)
    best.on_epoch_end(0, {"val_loss": 0.5})
    first = [w.copy() for w in model.get_weights()]
    model.set_weights([w + 1 for w in first])
    whole = model.save_weights

    def cut_by_a_stop(path, *args, **kwargs):
        whole(path, *args, **kwargs)
        Path(path).write_bytes(Path(path).read_bytes()[:300])  # what a kill mid-write leaves
        raise KeyboardInterrupt

    monkeypatch.setattr(model, "save_weights", cut_by_a_stop)
    with pytest.raises(KeyboardInterrupt):
        best.on_epoch_end(1, {"val_loss": 0.4})
    assert readable_h5(checkpoint.weights)
    assert restore_best(model, checkpoint)
    assert all((a == b).all() for a, b in zip(model.get_weights(), first))
    # a best.h5 whole as HDF5 but not this model's: one line, nothing kept, no traceback
    other = tmp_path / "other"
    import tensorflow as tf

    tf.keras.Sequential([tf.keras.layers.Dense(4, input_shape=(5,))]).save_weights(str(other) + ".h5")
    Path(str(other) + ".h5").replace(checkpoint.weights)
    assert restore_best(model, checkpoint) is False


def checkpoint_with(tmp_path, record: dict | None = None):
    """A checkpoint folder for --out tmp_path/out holding ``record`` as its run.json (None: no run.json)."""
    from ktrain_recipes.training.checkpoint import Checkpoint

    checkpoint = Checkpoint(tmp_path / "out", {"lr": 0.001})
    checkpoint.folder.mkdir()
    if record is not None:
        checkpoint.write(record)
    return checkpoint


def fine_record(**changes) -> dict:
    from ktrain_recipes.training.checkpoint import Checkpoint

    return {**Checkpoint.empty_record(), "epochs_completed": 1, "history": {"val_loss": [0.5]},
            "per_epoch": [{}], **changes}


@pytest.mark.parametrize("part", ["run.json", "best.h5"])
def test_a_fifo_in_a_checkpoint_is_refused_in_one_line_instead_of_blocking_or_called_missing(tmp_path, part):
    """Battery v6 W58 (best.h5 a FIFO: --resume blocked in h5py's open) and W59 (run.json a FIFO: "nothing to
    resume", though there is a checkpoint)."""
    import os

    from blocking import outcome_within

    checkpoint = checkpoint_with(tmp_path, fine_record() if part == "best.h5" else None)
    os.mkfifo(checkpoint.folder / part)
    outcome = outcome_within(checkpoint.resume, 60)
    assert outcome, "it blocked on the FIFO"
    assert f"holds {part}, which is not a regular file" in outcome[0] and "nothing to resume" not in outcome[0]


@pytest.mark.parametrize("changes, said", [
    ({"history": {"val_loss": ["x", "y"]}}, "history val_loss holds 'x', not a number"),
    ({"history": {"val_loss": [True]}}, "history val_loss holds True, not a number"),
    ({"start_iterations": "abc"}, "start_iterations is 'abc', not a count of steps"),
])
def test_a_record_with_values_of_the_wrong_kind_is_a_damaged_record(tmp_path, changes, said):
    """W56: the kinds of the record's keys were checked, not of their values (a numpy or TypeError traceback)."""
    from ktrain_recipes import RecipesError

    checkpoint = checkpoint_with(tmp_path, fine_record(identity={"lr": 0.001}, **changes))
    with pytest.raises(RecipesError, match=f"damaged record run.json \\({re.escape(said)}\\)"):
        checkpoint.resume()


def test_pieces_of_a_state_without_its_index_are_dropped_with_the_note_that_says_so(tmp_path, capsys):
    """W60: "starting from the first epoch", then "the training state ... does not fit": the pieces left without an
    index were restored anyway. Now the note holds: they are removed, and nothing contradicts it."""
    checkpoint = checkpoint_with(tmp_path, fine_record(identity={"lr": 0.001}))
    checkpoint.backup.mkdir()
    (checkpoint.backup / "ckpt-1.data-00000-of-00001").write_bytes(b"half of a state")
    checkpoint.resume()
    assert "starting from the first epoch" in capsys.readouterr().err
    assert not checkpoint.backup.exists()


def test_a_disk_that_fills_during_training_is_one_line_and_the_checkpoint_stays(tiny_models, small_data, tmp_path,
                                                                                monkeypatch, capsys):
    """Battery v6 W61: the disk filled in epoch 2 and the epoch's record write ended in an OSError traceback, with
    run.json.partial left. Now one line says to free space and --resume; the record of epoch 1 stays whole."""
    import errno

    from ktrain_recipes.training.checkpoint import Checkpoint
    from ktrain_recipes_tools import cli

    real = Checkpoint.write

    def fills_at_epoch_2(self, record):
        if record.get("epochs_completed") == 2:
            self.info.with_name("run.json.partial").write_text("{")  # what a write cut by the full disk leaves
            real_open = Path.write_text
            monkeypatch.setattr(Path, "write_text", lambda *a, **k: (_ for _ in ()).throw(
                OSError(errno.ENOSPC, "No space left on device", str(self.info))))
            try:
                return real(self, record)
            finally:
                monkeypatch.setattr(Path, "write_text", real_open)
        return real(self, record)

    monkeypatch.setattr(Checkpoint, "write", fills_at_epoch_2)
    args = ["train", "--model", tiny_models["bert"], "--data", str(small_data), "--epochs", "2", "--batch-size", "16",
            "--lr", "1e-3", "--out", str(tmp_path / "out")]
    assert cli.main(args) == 1
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("error: the disk filled during training") and "--resume" in err, err
    folder = tmp_path / ".out.resume"
    assert json.loads((folder / "run.json").read_text())["epochs_completed"] == 1
    assert not (folder / "run.json.partial").exists() and not (tmp_path / "out").exists()


def test_tensorflows_full_disk_is_not_called_out_of_memory():
    """TensorFlow maps ENOSPC to ResourceExhaustedError, the class of an out-of-memory error."""
    import tensorflow as tf

    from ktrain_recipes.errors import disk_full

    assert disk_full(tf.errors.ResourceExhaustedError(None, None, "/x/backup/ckpt-2.data; No space left on device"))
    assert not disk_full(tf.errors.ResourceExhaustedError(None, None, "OOM when allocating tensor with shape"))
