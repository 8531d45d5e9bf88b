"""What training needs beyond ktrain's ``fit_onecycle``: seeds, the few-updates note, epoch timing, a stop on a
NaN loss, checkpoint averaging, and ``fit_with_checkpoint``, which trains through a run's checkpoint
(``training.checkpoint``)."""

from __future__ import annotations

import math
import os
import random
import time
from pathlib import Path

import numpy as np

from ktrain_recipes.errors import RecipesError, disk_full, note
from ktrain_recipes.training.checkpoint import Checkpoint, readable_h5, resume_callback, resumed_schedule

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


def few_steps_note(n_train: int, batch_size: int, epochs: int, notebook: bool = False) -> str | None:
    """Return a one-line note when training makes too few weight updates to learn the task, else None.

    Large batches on a small sample under-train silently: on 1,600 emotion texts for 2 epochs, MiniLM
    reached 0.69 at batch 32 (100 updates), 0.74 at 16 (200), 0.77 at 8 (400) and 0.81 at 6 (534).
    ``notebook``: give the advice in a notebook's terms (its ``epochs`` and ``batch_size``), not the command line's.
    """
    steps = optimizer_steps(n_train, batch_size, epochs)
    if epochs < 1 or steps >= FEW_STEPS:
        return None
    advice = ("raise `epochs`, add rows, or lower `batch_size` in the parameters" if notebook
              else "train more epochs, on more texts, or with a smaller --batch-size")
    return (f"note: only {steps} optimizer steps ({n_train} texts / batch {batch_size} x {epochs} epochs); "
            f"fine-tuning usually needs {FEW_STEPS}+ to get close to its best accuracy: {advice}")


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


def weight_average(last: int, epochs: int, record: dict | None = None, store: Path | None = None):
    """Return a Keras callback that sums the weights at the end of each of the last ``last`` of ``epochs``
    epochs; ``callback.apply(model)`` then sets the model's weights to their average.

    Averaging checkpoints along the end of training lands nearer the middle of a flat region of the loss
    than any one of them (the idea behind stochastic weight averaging); it costs no extra training.

    ``store``: where the sums are kept after each summed epoch (in the run's checkpoint), so that a run cut and
    resumed averages the epochs of its earlier legs too; ``record``: the run's record, whose ``epochs_completed``
    says, once the state is restored, which epochs the sums must hold.
    """
    import tensorflow as tf

    window = range(max(0, epochs - last), epochs)

    class WeightAverage(tf.keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.total: list[np.ndarray] | None = None
            self.summed: list[int] = []

        def on_train_begin(self, logs=None):
            done = (record or {}).get("epochs_completed", 0)
            if store is None or last < 2 or not done:
                return
            if store.is_file():
                with np.load(store) as kept:
                    summed = [int(e) for e in kept["epochs"]]
                    if all(e in window and e < done for e in summed):
                        self.summed, self.total = summed, [kept[f"w{i}"] for i in range(len(kept.files) - 1)]
            if done - 1 in window and done - 1 not in self.summed:
                # cut after the state of epoch done-1 was saved and before its sum was: the restored weights are
                # that epoch's
                self.add(done - 1)

        def on_epoch_end(self, epoch, logs=None):
            if epoch in window and epoch not in self.summed:
                self.add(epoch)

        def add(self, epoch: int) -> None:
            weights = self.model.get_weights()
            self.total = weights if self.total is None else [a + b for a, b in zip(self.total, weights)]
            self.summed.append(epoch)
            if store is not None:
                partial = store.with_name(store.name + ".partial.npz")
                np.savez(partial, epochs=np.array(self.summed), **{f"w{i}": w for i, w in enumerate(self.total)})
                os.replace(partial, store)

        def apply(self, model) -> int:
            """Set ``model``'s weights to the average; return how many epochs it averaged (0: none ended)."""
            if self.summed:
                model.set_weights([w / len(self.summed) for w in self.total])
            return len(self.summed)

    return WeightAverage()


def steady_examples_per_s(n_train: int, epoch_seconds: list[float]) -> float | None:
    """Training examples/s after warm-up: epochs 2+ (the first also traces the graph for each batch shape),
    validation passes excluded."""
    steady = epoch_seconds[1:] or epoch_seconds
    return n_train * len(steady) / sum(steady) if steady else None


def resources_message(exc: BaseException, batch_size: int, checkpoint: Checkpoint | None) -> str:
    """The one line for a run that ran out of disk or of memory (TensorFlow reports both as ResourceExhausted)."""
    if disk_full(exc):
        kept = (f"then run the same command with --resume: the checkpoint {checkpoint.folder} keeps every "
                "finished epoch") if checkpoint else "then train again"
        return f"the disk filled during training ({str(exc).splitlines()[0][:120]}): free some space, {kept}"
    return (f"out of memory at batch size {batch_size}: try --batch-size {max(1, batch_size // 2)} (or a smaller "
            "--maxlen)")


def restore_best(model, checkpoint: Checkpoint | None) -> bool:
    """After an interruption: load the best epoch's weights into ``model`` and say so; False when there is nothing
    to keep (no epoch finished, or the interruption came while the best epoch was being written)."""
    if not (checkpoint and checkpoint.weights.exists()):
        return False
    if not readable_h5(checkpoint.weights):
        note(f"\ninterrupted while the best epoch was saved: no predictor kept; --resume goes on from the last "
             f"finished epoch (kept in {checkpoint.folder})")
        return False
    try:
        model.load_weights(str(checkpoint.weights))
    except (OSError, KeyError, ValueError) as exc:  # whole as HDF5, yet not this model's weights
        note(f"\ninterrupted; the best epoch's weights in {checkpoint.folder} do not load ({str(exc)[:80]}): no "
             "predictor kept; --resume goes on from the last finished epoch")
        return False
    note(f"\ninterrupted: restored the best epoch so far; --resume goes on from the last finished epoch "
         f"(kept in {checkpoint.folder})")
    return True


def apply_average(average, model, wanted: int) -> int:
    """Give ``model`` the average kept by ``weight_average``'s callback; return how many epochs it averaged, saying
    so when fewer than ``wanted`` (the sums of a cut run's earlier legs lost)."""
    averaged = average.apply(model)
    if averaged and averaged < wanted:
        note(f"note: the weights of {averaged} of the last {wanted} epochs were averaged: the others' sums were lost "
             "when the run was cut")
    return averaged


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
    # the sums are kept only when there is an average to make: a run that averages nothing writes no weights more
    keep_sums = checkpoint is not None and checkpoint.keeps_state and average_last > 1
    average = weight_average(average_last, epochs, record, checkpoint.folder / "average.npz" if keep_sums else None)
    steps_per_epoch = math.ceil(learner.train_data.nsamples() / learner.batch_size)
    resume = resume_callback(checkpoint, record, steps_per_epoch, learner.train_data, epochs)
    # order matters: the state is restored (BackupAndRestore) before Resume reads it, and each epoch's record
    # is written (timer) before its state is saved, so a cut between the two leaves the record ahead, which
    # Resume trims, never behind
    callbacks = list(callbacks or []) + [timer] + (checkpoint.callbacks(record) if checkpoint else []) + \
        [resume, average, tf.keras.callbacks.TerminateOnNaN()]
    interrupted = False
    try:
        with resumed_schedule(resume):
            learner.fit_onecycle(lr, epochs, callbacks=callbacks, class_weight=class_weight)
    except (OSError, tf.errors.ResourceExhaustedError) as exc:
        if not disk_full(exc) and isinstance(exc, OSError):
            raise
        raise RecipesError(resources_message(exc, learner.batch_size, checkpoint)) from None
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM through the command line (which then exits 130 or 143)
        if not restore_best(learner.model, checkpoint):
            raise
        interrupted = True
    losses = learner.model.history.history.get("loss", []) if learner.model.history else []
    if any(not math.isfinite(v) for v in losses):
        raise RecipesError(f"training diverged (the loss became NaN at lr {lr}): try a lower --lr; nothing "
                           "was saved")
    labels = getattr(getattr(learner.model, "config", None), "num_labels", None)
    exploded = exploded_loss(record.get("history", {}), labels if isinstance(labels, int) else 2)
    if exploded:
        note(f"warning: training looks diverged at lr {lr}: {exploded}; the predictor is saved, but its scores are "
             "likely a constant answer's: try a lower --lr (a typo such as 100 for 1e-4?)")
    record["train_seconds"] = leg_base + time.perf_counter() - start
    record["optimizer_steps"] = int(learner.model.optimizer.iterations.numpy()) - record.get("start_iterations", 0)
    if checkpoint:
        checkpoint.write(record)
    wanted = min(average_last, epochs)
    averaged = 0 if interrupted or average_last < 2 else apply_average(average, learner.model, wanted)
    return {**record, "epoch_seconds": timer.seconds, "interrupted": interrupted, "averaged_epochs": max(averaged, 1)}


EXPLODED = 10.0  # a validation loss this many times a constant answer's: the run diverged


def exploded_loss(history: dict, n_labels: int) -> str | None:
    """Why a finite validation loss says the run diverged, or None. A model that answers the same uniform
    probabilities to every text scores ln(labels) (a softmax) or ln 2 per label (a sigmoid each, at most that
    with several labels); a trained one scores far below it. Battery v7, X103: ``--lr 100`` ended at a validation
    loss of 902.8 on 6 labels and was saved without a word."""
    val = [v for v in history.get("val_loss", []) if math.isfinite(v)]
    constant = math.log(max(n_labels, 2))
    if not val or val[-1] <= EXPLODED * constant:
        return None
    return (f"the validation loss ended at {val[-1]:.4g}, {val[-1] / constant:.0f} times what answering every text "
            f"alike scores ({constant:.2f})")
