"""A run that survives being cut off: its checkpoint beside the output folder (the whole training state after
every epoch, the best epoch's weights, the run's record and identity), and the one-cycle schedule resumed at the step
the run had reached."""

from __future__ import annotations

import math

import json
import os
import uuid
from contextlib import contextmanager
from pathlib import Path

from ktrain_recipes.errors import RecipesError, note


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
        self.best_lost = False  # the best epoch's weights were found cut, and removed, on resuming
        self.folder = out.parent / f".{out.name}.resume"
        self.backup, self.info, self.weights = self.folder / "backup", self.folder / "run.json", self.folder / "best.h5"
        self.identity = identity

    def exists(self) -> bool:
        return self.folder.exists() or self.folder.is_symlink()

    def refuse_a_stranger(self) -> None:
        """A one-line error when the checkpoint's place holds something that is not a checkpoint folder: a file, or
        a link (never followed: removing or writing through it could reach anywhere)."""
        if self.folder.is_symlink() or (self.folder.exists() and not self.folder.is_dir()):
            kind = "a link" if self.folder.is_symlink() else "a file"
            raise RecipesError(f"'{self.folder}' is {kind}, not a checkpoint folder: it is left as it is; remove it "
                               "or choose another --out, then train again")

    def start_fresh(self) -> dict:
        """Remove a checkpoint left by another run (saying so); return the new run's record."""
        self.refuse_a_stranger()
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

        self.refuse_a_stranger()
        for part in (self.info, self.weights):  # a FIFO there would block the read for ever
            if (part.exists() or part.is_symlink()) and (part.is_symlink() or not part.is_file()):
                raise RecipesError(f"the checkpoint {self.folder.name} holds {part.name}, which is not a regular file "
                                   "(a FIFO, a device or a link): remove the checkpoint and train again without "
                                   "--resume")
        if not self.info.is_file():
            raise RecipesError(f"nothing to resume: no checkpoint {self.folder} (a run that was cut off leaves one; "
                               "train without --resume)")
        try:
            record = json.loads(self.info.read_text())
        except (OSError, json.JSONDecodeError):
            raise RecipesError(f"the checkpoint {self.folder.name} has no readable record {self.info.name}: "
                               "train again without --resume") from None
        damage = record_damage(record)
        if damage:
            raise RecipesError(f"the checkpoint {self.folder.name} has a damaged record {self.info.name} ({damage}): "
                               "train again without --resume")
        mine = record["identity"]
        differs = [f"{k} ({mine.get(k)!r} there, {v!r} now)" for k, v in self.identity.items() if mine.get(k) != v]
        if differs:
            raise RecipesError(f"the checkpoint {self.folder.name} is from a run with other settings: "
                               f"{'; '.join(differs)}. Resume with that run's settings, or train again without "
                               "--resume")
        latest = tf.train.latest_checkpoint(str(self.backup / "chief")) or tf.train.latest_checkpoint(str(self.backup))
        if record.get("epochs_completed") and latest is None:
            # cut after the first epoch's record and before its state: nothing to go on from, so the run starts
            # again from its beginning under the same record (``resume_callback`` trims it)
            note(f"note: the checkpoint {self.folder.name} records {record['epochs_completed']} epoch(s) but holds no "
                 "training state (the run was cut between the two): starting from the first epoch")
            import shutil

            shutil.rmtree(self.backup, ignore_errors=True)  # pieces of a state with no index: not restored either
        if latest is not None:
            try:  # every tensor read, not only the index: a state cut in half by a kill is found here
                reader = tf.train.load_checkpoint(latest)
                for name in reader.get_variable_to_shape_map():
                    reader.get_tensor(name)
            except Exception:  # tf raises DataLossError/NotFoundError/OpError for truncated or foreign files
                raise RecipesError(f"the checkpoint {self.folder} is truncated or unreadable: train again without "
                                   "--resume") from None
        if self.weights.exists() and not readable_h5(self.weights):
            # cut by a kill while the best epoch was written: the next epoch writes it again (``callbacks``)
            note(f"note: the best epoch's weights in {self.weights} were cut off by the kill: removed; the next "
                 "epoch's are kept instead")
            self.weights.unlink()
            self.best_lost = True
        return record

    def callbacks(self, record: dict) -> list:
        """The Keras callbacks that keep the checkpoint: the whole state after every epoch, and the best epoch."""
        losses = record["history"].get("val_loss")
        # a resumed run keeps the best epoch of its earlier legs
        best = keep_best(self.weights, min(losses) if losses and not self.best_lost else None)
        if not self.keeps_state:
            return [best]
        return [restore_or_refuse(self.backup, self.folder.name), best]

    def write(self, record: dict) -> None:
        tmp = self.info.with_name(self.info.name + ".partial")
        try:
            tmp.write_text(json.dumps({**record, "identity": self.identity}))
            os.replace(tmp, self.info)
        except OSError:  # a full disk: the record already there stays whole, and no partial copy is left
            tmp.unlink(missing_ok=True)
            raise

    def clear(self) -> None:
        import shutil

        shutil.rmtree(self.folder, ignore_errors=True)


@contextmanager
def run_lock(out: Path):
    """Held by the one run writing into ``out`` (its checkpoint and its predictor) from its checkpoint's start to
    its save: a second ``train`` into the same folder, or a second ``--resume`` of one checkpoint, is refused in one
    line instead of deleting the first one's live checkpoint. A kernel lock on ``.OUT.run-lock`` beside ``out``
    (``swaps.lock_beside``): a run killed by any means releases it."""
    from ktrain_recipes.predictor.swaps import lock_beside

    busy = (f"another run ({{holder}}) is training into '{out}' now: wait for it to finish, or choose another "
            "--out")
    # "run-lock", not "run.lock": the writers' lock of a folder named OUT.run is ``.OUT.run.lock``, and a save into
    # OUT.run would wait for the whole of OUT's training
    with lock_beside(out, "run-lock", "the run's lock", busy) as fd:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}".encode(), 0)  # named in the second run's refusal
        yield


def record_damage(record) -> str | None:
    """What is wrong with a checkpoint's run.json as read, in a few words; None when it has the record's shape
    (``Checkpoint.empty_record`` and ``identity``)."""
    if not isinstance(record, dict):
        return f"a JSON {type(record).__name__}, not an object"
    shapes = {"identity": dict, "history": dict, "per_epoch": list, "run_id": str}
    for key, kind in shapes.items():
        if not isinstance(record.get(key), kind):
            return f"{key} is {'missing' if key not in record else type(record[key]).__name__}, not a {kind.__name__}"
    done = record.get("epochs_completed")
    if not isinstance(done, int) or isinstance(done, bool) or done < 0:
        return f"epochs_completed is {done!r}, not a count of epochs"
    seconds = record.get("train_seconds")
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or seconds < 0:
        return f"train_seconds is {seconds!r}, not a number of seconds"
    if not all(isinstance(v, list) for v in record["history"].values()):
        return "a history entry is not a list of per-epoch values"
    for name, values in record["history"].items():
        odd = [v for v in values if isinstance(v, bool) or not isinstance(v, (int, float))]
        if odd:
            return f"history {name} holds {odd[0]!r}, not a number"
        # NaN and Infinity parse as floats, and the record written from them at the end is not JSON: refused
        # here, before any training (battery v7, W56: a traceback after the work)
        endless = [v for v in values if not math.isfinite(v)]
        if endless:
            return f"history {name} holds {endless[0]!r}, not a finite number (a diverged run's: train it again)"
    start = record.get("start_iterations")
    if start is not None and (not isinstance(start, int) or isinstance(start, bool) or start < 0):
        return f"start_iterations is {start!r}, not a count of steps"
    return None


def restore_or_refuse(backup: Path, name: str):
    """Keras' ``BackupAndRestore`` on ``backup``, whose restore, when the saved state does not fit the model (another
    run's state, with other labels or another model, put under this run's record), is refused in one line rather
    than failing inside ``fit`` with a traceback. The state is left as it is."""
    import tensorflow as tf

    class RestoreOrRefuse(tf.keras.callbacks.BackupAndRestore):
        def on_train_begin(self, logs=None):
            try:
                super().on_train_begin(logs)
            except (ValueError, tf.errors.OpError) as exc:  # shapes or variables that are not this model's
                found = str(exc).splitlines()[0][:160]
                raise RecipesError(f"the training state in the checkpoint {name} does not fit this run's model "
                                   f"({found}): it is another run's; train again without --resume") from None

    return RestoreOrRefuse(str(backup), delete_checkpoint=False)


def keep_best(path: Path, best_loss: float | None = None):
    """A Keras callback that writes the weights of each epoch whose validation loss is the lowest so far to ``path``:
    to a temporary file first, renamed over ``path`` once whole, so a stop during the write (1 to 5 s for a
    base-size model) leaves the previous best epoch readable instead of a cut file. (Keras' ``ModelCheckpoint``
    writes in place, and formats the path with ``str.format``, which braces in ``--out`` break.)"""
    import tensorflow as tf

    class KeepBest(tf.keras.callbacks.Callback):
        best = float("inf") if best_loss is None else best_loss

        def on_epoch_end(self, epoch, logs=None):
            loss = (logs or {}).get("val_loss")
            if loss is None or not loss < self.best:  # a NaN loss is never the best
                return
            partial = path.with_name(path.stem + ".partial" + path.suffix)  # .h5 last: Keras picks HDF5 by suffix
            self.model.save_weights(str(partial))
            os.replace(partial, path)
            self.best = float(loss)

    return KeepBest()


def readable_h5(path: Path) -> bool:
    """Whether an HDF5 weights file opens and every dataset in it reads (a kill while it was written cuts it)."""
    import h5py

    try:
        with h5py.File(path, "r") as f:
            f.visititems(lambda name, obj: obj[()] if isinstance(obj, h5py.Dataset) else None)
    except Exception:  # noqa: BLE001  (h5py raises OSError, KeyError or its own types for a cut file)
        return False
    return True


def resume_callback(checkpoint: Checkpoint | None, record: dict, steps_per_epoch: int, dataset,
                    total_epochs: int = 0):
    """A callback that, once ``BackupAndRestore`` has restored the state, reads how far the run got: it records
    the optimizer's step count at the run's very start, sets the data order's epoch, drops any record of an
    epoch whose state was not saved, and then says how far a resumed run goes on from (of ``total_epochs``)."""
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
            if epochs:  # said after the trim: an epoch whose state was lost is not announced as done
                note(f"resuming after {epochs} of {total_epochs} epoch(s), mid-schedule")

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
