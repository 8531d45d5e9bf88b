"""What training needs beyond ktrain's ``fit_onecycle``: seeds, the few-updates note, epoch timing,
a checkpoint that survives Ctrl-C and belongs to one run, a stop on a NaN loss, and checkpoint averaging."""

from __future__ import annotations

import json
import math
import os
import random
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ktrain_recipes.errors import RecipesError, note

# MiniLM on emotion (docs/results.md): 100 updates of 32 texts reached 0.69 validation accuracy, 500 reached 0.91
FEW_STEPS = 500


def set_seed(seed: int) -> None:
    """Seed Python, numpy and TensorFlow and make TF ops deterministic (same CPU, same numbers)."""
    import tensorflow as tf

    random.seed(seed)
    np.random.seed(seed)
    tf.keras.utils.set_random_seed(seed)
    tf.config.experimental.enable_op_determinism()


def optimizer_steps(n_train: int, batch_size: int, epochs: int) -> int:
    """Return how many weight updates training makes: batches per epoch times epochs."""
    return math.ceil(n_train / batch_size) * epochs


SMALLEST_AUTO_BATCH = 8


def batch_for_updates(n_train: int, batch_size: int, epochs: int) -> int:
    """The model's default batch, halved (not below 8) until training makes ``FEW_STEPS`` weight updates.

    Weight updates, not texts, are what a fine-tune needs: on the 1,600 texts of the slice the package ships, 3
    epochs at batch 32 are 150 updates (0.7675 validation accuracy for MiniLM, docs/slice), at batch 8 600 (0.8550).
    Used only when no batch size was given."""
    while batch_size > SMALLEST_AUTO_BATCH and optimizer_steps(n_train, batch_size, epochs) < FEW_STEPS:
        batch_size = max(SMALLEST_AUTO_BATCH, batch_size // 2)
    return batch_size


def few_steps_note(n_train: int, batch_size: int, epochs: int) -> str | None:
    """Return a one-line note when training makes too few weight updates to learn the task, else None.

    Large batches on a small sample under-train silently: on 1,600 emotion texts for 2 epochs, MiniLM
    reached 0.69 at batch 32 (100 updates), 0.74 at 16 (200), 0.77 at 8 (400) and 0.81 at 6 (534).
    """
    steps = optimizer_steps(n_train, batch_size, epochs)
    if epochs < 1 or steps >= FEW_STEPS:
        return None
    return (f"note: only {steps} optimizer steps ({n_train} texts / batch {batch_size} x {epochs} epochs); "
            f"fine-tuning usually needs {FEW_STEPS}+ to get close to its best accuracy: train more epochs, "
            "on more texts, or with a smaller --batch-size")


def epoch_timer(record: dict | None = None, after_epoch=None):
    """Return a Keras callback that times each epoch (validation excluded) and records the run's history.

    Pass it to ``fit_onecycle(..., callbacks=[timer])``; ``timer.trained()`` then returns the record
    ``record_run`` takes: ``epoch_seconds``, ``train_seconds``, ``epochs_completed``, ``history``.
    ``record``: an earlier leg's record to go on from (``--resume``); ``after_epoch(record)``: called at the
    end of each epoch (the checkpoint writes it).
    """
    import tensorflow as tf

    class EpochTimer(tf.keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.record = record if record is not None else {"epochs_completed": 0, "train_seconds": 0.0,
                                                             "history": {}}
            self.seconds: list[float] = []
            self.wall = 0.0

        def on_train_begin(self, logs=None):
            self._train_start = time.perf_counter()

        def on_train_end(self, logs=None):
            self.wall += time.perf_counter() - self._train_start

        def on_epoch_begin(self, epoch, logs=None):
            self._start, self._stop = time.perf_counter(), None

        def on_test_begin(self, logs=None):
            self._stop = time.perf_counter()

        def on_epoch_end(self, epoch, logs=None):
            self.seconds.append((self._stop or time.perf_counter()) - self._start)
            self.record["epochs_completed"] += 1
            for k, v in (logs or {}).items():
                self.record["history"].setdefault(k, []).append(float(v))
            if after_epoch:
                after_epoch(self.record)

        def trained(self) -> dict:
            return {**self.record, "epoch_seconds": list(self.seconds),
                    "train_seconds": self.record["train_seconds"] + self.wall, "interrupted": False}

    return EpochTimer()


def weight_average(last: int, epochs: int):
    """Return a Keras callback that sums the weights at the end of each of the last ``last`` of ``epochs``
    epochs; ``callback.apply(model)`` then sets the model's weights to their average.

    Averaging checkpoints along the end of training lands nearer the middle of a flat region of the loss
    than any one of them (the idea behind stochastic weight averaging); it costs no extra training.
    """
    import tensorflow as tf

    class WeightAverage(tf.keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.total: list[np.ndarray] | None = None
            self.count = 0

        def on_epoch_end(self, epoch, logs=None):
            if epoch >= epochs - last:
                weights = self.model.get_weights()
                self.total = weights if self.total is None else [a + b for a, b in zip(self.total, weights)]
                self.count += 1

        def apply(self, model) -> int:
            """Set ``model``'s weights to the average; return how many epochs it averaged (0: none ended)."""
            if self.count:
                model.set_weights([w / self.count for w in self.total])
            return self.count

    return WeightAverage()


def steady_examples_per_s(n_train: int, epoch_seconds: list[float]) -> float | None:
    """Training examples/s after warm-up: epochs 2+ (the first also traces the graph for each batch shape),
    validation passes excluded."""
    steady = epoch_seconds[1:] or epoch_seconds
    return n_train * len(steady) / sum(steady) if steady else None


class Checkpoint:
    """What an interrupted run needs to go on mid-schedule, kept beside ``out`` in ``.OUT.resume/``.

    - ``backup/``: the whole training state after every epoch (weights, optimizer state, the epoch), written by
      Keras' ``BackupAndRestore``; a resumed ``fit`` restores it and starts at the next epoch;
    - ``run.json``: what the run is (``identity``: the settings that must match for ``--resume``) and its record
      (epochs completed, seconds, the per-epoch history and scores, the optimizer's step count at the start);
    - ``best.h5``: the weights of the epoch with the lowest validation loss, restored on Ctrl-C.

    The one-cycle position and the data order follow from the restored step count (``resumed_schedule``,
    ``BucketedDataset.set_epoch``), so the first resumed step uses the learning rate the uninterrupted run would
    have used. The folder is never a predictor; a finished run removes it (``clear``).
    """

    def __init__(self, out: Path, identity: dict, backup: bool = True):
        """``backup=False``: keep only the best epoch (a multi-worker run, whose state saves are collective: every
        worker would have to take part)."""
        self.keeps_state = backup
        self.folder = out.parent / f".{out.name}.resume"
        self.backup, self.info, self.weights = self.folder / "backup", self.folder / "run.json", self.folder / "best.h5"
        self.identity = identity

    def exists(self) -> bool:
        return self.folder.exists()

    def start_fresh(self) -> dict:
        """Remove a checkpoint left by another run (saying so); return the new run's record."""
        if self.exists():
            note(f"note: removed the checkpoint {self.folder.name} of an earlier run (no --resume given)")
            self.clear()
        self.folder.mkdir(parents=True)
        record = self.empty_record()
        self.write(record)
        return record

    @staticmethod
    def empty_record() -> dict:
        """The record of a run that has trained nothing yet."""
        return {"run_id": uuid.uuid4().hex, "epochs_completed": 0, "train_seconds": 0.0, "history": {},
                "per_epoch": []}

    def resume(self) -> dict:
        """Check that the checkpoint is this run's and readable; return its record (``fit`` restores the state)."""
        import tensorflow as tf

        if not self.info.is_file():
            raise RecipesError(f"nothing to resume: no checkpoint {self.folder} (a run that was cut off leaves one; "
                               "train without --resume)")
        try:
            record = json.loads(self.info.read_text())
        except (OSError, json.JSONDecodeError):
            raise RecipesError(f"the checkpoint {self.folder.name} has no readable record {self.info.name}: "
                               "train again without --resume") from None
        mine = record.get("identity", {})
        differs = [f"{k} ({mine.get(k)!r} there, {v!r} now)" for k, v in self.identity.items() if mine.get(k) != v]
        if differs:
            raise RecipesError(f"the checkpoint {self.folder.name} is from a run with other settings: "
                               f"{'; '.join(differs)}. Resume with that run's settings, or train again without "
                               "--resume")
        latest = tf.train.latest_checkpoint(str(self.backup / "chief")) or tf.train.latest_checkpoint(str(self.backup))
        if record.get("epochs_completed") and latest is None:
            raise RecipesError(f"the checkpoint {self.folder} has no saved training state: train again without "
                               "--resume")
        if latest is not None:
            try:
                tf.train.load_checkpoint(latest)
            except Exception:  # tf raises DataLossError/NotFoundError/OpError for truncated or foreign files
                raise RecipesError(f"the checkpoint {self.folder} is truncated or unreadable: train again without "
                                   "--resume") from None
        return record

    def callbacks(self, record: dict) -> list:
        """The Keras callbacks that keep the checkpoint: the whole state after every epoch, and the best epoch."""
        import tensorflow as tf

        best = tf.keras.callbacks.ModelCheckpoint(str(self.weights), monitor="val_loss", save_best_only=True,
                                                  save_weights_only=True)
        losses = record["history"].get("val_loss")
        if losses:  # a resumed run keeps the best epoch of its earlier legs
            best.best = min(losses)
        if not self.keeps_state:
            return [best]
        return [tf.keras.callbacks.BackupAndRestore(str(self.backup), delete_checkpoint=False), best]

    def write(self, record: dict) -> None:
        tmp = self.info.with_name(self.info.name + ".partial")
        tmp.write_text(json.dumps({**record, "identity": self.identity}))
        os.replace(tmp, self.info)

    def clear(self) -> None:
        import shutil

        shutil.rmtree(self.folder, ignore_errors=True)


def _resume_callback(checkpoint: Checkpoint | None, record: dict, steps_per_epoch: int, dataset):
    """A callback that, once ``BackupAndRestore`` has restored the state, reads how far the run got: it records
    the optimizer's step count at the run's very start, sets the data order's epoch, and drops any record of an
    epoch whose state was not saved."""
    import tensorflow as tf

    class Resume(tf.keras.callbacks.Callback):
        steps_done = 0

        def on_train_begin(self, logs=None):
            now = int(self.model.optimizer.iterations.numpy())
            record.setdefault("start_iterations", now)
            self.steps_done = now - record["start_iterations"]
            epochs = self.steps_done // steps_per_epoch
            if epochs < record["epochs_completed"]:  # cut off between the record and the state: the state wins
                record["epochs_completed"] = epochs
                for values in [*record["history"].values(), record["per_epoch"]]:
                    del values[epochs:]  # in place: the callbacks that append to them hold these lists
            if hasattr(dataset, "set_epoch"):
                dataset.set_epoch(epochs)
            if checkpoint:
                checkpoint.write(record)

    return Resume()


@contextmanager
def resumed_schedule(resume):
    """While training: ktrain's one-cycle callback starts at the step the run had reached (``resume.steps_done``).

    ktrain's ``fit_onecycle`` makes its own ``CyclicLR``, whose step count is not saved; this replays its
    per-step update up to that step (learning rate, momentum, the annihilation phase), so the first resumed
    step gets the rate and momentum an uninterrupted run would have had.
    """
    from ktrain.lroptimize import triangular

    original = triangular.CyclicLR

    class ResumedCyclicLR(original):
        def on_train_begin(self, logs=None):
            initial = self.base_lr
            # ktrain's on_train_begin sets orig_base_lr, which the cycle's last step reads: the replay reaches that
            # step when the run was cut after its last epoch (before the save)
            self.orig_base_lr = initial
            for _ in range(resume.steps_done):
                self.on_batch_end(None)
            super().on_train_begin(logs)
            self.orig_base_lr = initial  # as in the run that was never cut

    triangular.CyclicLR = ResumedCyclicLR
    try:
        yield
    finally:
        triangular.CyclicLR = original


def fit_with_checkpoint(learner, lr: float, epochs: int, checkpoint: Checkpoint | None = None,
                        record: dict | None = None, callbacks: list | None = None, average_last: int = 1,
                        class_weight: dict | None = None) -> dict:
    """Call ``learner.fit_onecycle(lr, epochs)``, adding what a long run needs; return the run's record.

    Adds: the few-updates note, per-epoch timing, a stop on a NaN loss, a clear message when memory runs
    out, and with ``checkpoint`` the whole training state after every epoch (a run cut off, even by
    ``kill -9``, goes on mid-schedule from its last epoch when called again with the checkpoint's record) and
    the best epoch's weights, which Ctrl-C restores. With ``average_last`` N > 1 the model ends with the
    average of its weights at the end of the last N epochs (``weight_average``). The record
    (``epochs_completed``, ``train_seconds``, ``history``, ``epoch_seconds``, ``interrupted``,
    ``averaged_epochs``, ``optimizer_steps``) counts earlier legs of a resumed run too.
    """
    import tensorflow as tf

    few = few_steps_note(learner.train_data.nsamples(), learner.batch_size, epochs)
    if few:
        note(few)
    leg_base, start = (record or {}).get("train_seconds", 0.0), time.perf_counter()

    def keep(done: dict) -> None:  # every epoch's record counts this leg's seconds so far: a cut loses none
        done["train_seconds"] = leg_base + time.perf_counter() - start
        checkpoint.write(done)

    timer = epoch_timer(record, after_epoch=keep if checkpoint else None)
    record = timer.record
    record.setdefault("per_epoch", [])
    average = weight_average(average_last, epochs)
    steps_per_epoch = math.ceil(learner.train_data.nsamples() / learner.batch_size)
    resume = _resume_callback(checkpoint, record, steps_per_epoch, learner.train_data)
    # order matters: the state is restored (BackupAndRestore) before Resume reads it, and each epoch's record
    # is written (timer) before its state is saved, so a cut between the two leaves the record ahead, which
    # Resume trims, never behind
    callbacks = list(callbacks or []) + [timer] + (checkpoint.callbacks(record) if checkpoint else []) + \
        [resume, average, tf.keras.callbacks.TerminateOnNaN()]
    interrupted = False
    try:
        with resumed_schedule(resume):
            learner.fit_onecycle(lr, epochs, callbacks=callbacks, class_weight=class_weight)
    except tf.errors.ResourceExhaustedError:
        size = learner.batch_size
        raise RecipesError(f"out of memory at batch size {size}: try --batch-size {max(1, size // 2)} "
                           "(or a smaller --maxlen)") from None
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM through the command line (which then exits 130 or 143)
        if not (checkpoint and checkpoint.weights.exists()):
            raise  # no epoch finished: nothing worth keeping
        learner.model.load_weights(str(checkpoint.weights))
        interrupted = True
        note(f"\ninterrupted: restored the best epoch so far; --resume goes on from the last finished epoch "
             f"(kept in {checkpoint.folder})")
    losses = learner.model.history.history.get("loss", []) if learner.model.history else []
    if any(not math.isfinite(v) for v in losses):
        raise RecipesError(f"training diverged (the loss became NaN at lr {lr}): try a lower --lr; nothing "
                           "was saved")
    record["train_seconds"] = leg_base + time.perf_counter() - start
    record["optimizer_steps"] = int(learner.model.optimizer.iterations.numpy()) - record.get("start_iterations", 0)
    if checkpoint:
        checkpoint.write(record)
    averaged = 0 if interrupted or average_last < 2 else average.apply(learner.model)
    return {**record, "epoch_seconds": timer.seconds, "interrupted": interrupted, "averaged_epochs": max(averaged, 1)}
