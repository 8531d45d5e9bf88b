"""Checked saves: every writer of a predictor folder saves through ``staged_predictor``.

What ktrain's ``predictor.save`` lacks, and this adds: atomic replacement (``swaps``), a manifest of hashes
(``manifest``), and ``--overwrite`` that replaces only a predictor of ours (it has a manifest) or an empty
folder, never data.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ktrain_recipes.segments import MANIFEST_KEY as SEGMENT_KEY
from ktrain_recipes.errors import RecipesError
from ktrain_recipes.predictor.manifest import (MANIFEST, METRICS, is_predictor_manifest, unchecked_manifest,
                                              write_json_atomic, write_manifest)
from ktrain_recipes.predictor.swaps import (check_writable, recover, restage, stage_dir, swap_into_place,
                                           writers_lock)


MAX_NAME = 255  # bytes in one file name on Linux' file systems (ext4, xfs, btrfs, tmpfs)


def check_out_dir(out: str | os.PathLike, overwrite: bool = False, flag: str = "--out") -> Path:
    """Check, before any training, that ``out`` can receive a predictor; return it as a Path.

    A non-empty ``out`` is refused unless ``overwrite`` is set, and even then only when it holds a
    predictor saved by ktrain_recipes (a manifest): a data folder or a home folder is never replaced. ``flag``: the
    option that named the folder, for the messages (``export`` rewrites its ``--predictor``).
    """
    out = Path(out)
    longest = MAX_NAME - len(".resume.partial-000000")  # the longest name made beside it: the checkpoint's staging
    if len(os.fsencode(out.name)) > longest:
        raise RecipesError(f"{flag} '{out.name[:40]}...' is a name of {len(os.fsencode(out.name))} bytes; at most "
                           f"{longest} (the file system allows {MAX_NAME}, and the run's lock and checkpoint beside it "
                           "add to it): choose a shorter name")
    if out.is_symlink():  # a save renames a new folder over the link: its target would be left stale
        raise RecipesError(f"{flag} '{out}' is a symbolic link: name the folder itself ('{os.path.realpath(out)}')")
    recover(out)
    if out.exists() and not out.is_dir():
        raise RecipesError(f"{flag} '{out}' is a file: choose a folder name")
    if out.is_dir() and any(out.iterdir()):
        if not overwrite:
            raise RecipesError(f"{flag} '{out}' exists and is not empty: choose another folder or pass --overwrite")
        foreign = _not_a_predictors_files(out)
        if foreign:
            raise RecipesError(f"{flag} '{out}' is not a predictor saved by ktrain_recipes (it holds "
                               f"{', '.join(foreign[:5])}): --overwrite only replaces predictors; choose another "
                               "folder")
    check_writable(out.parent)
    return out


def _not_a_predictors_files(folder: Path) -> list[str]:
    """The entries of ``folder`` that a predictor saved by ktrain_recipes does not hold: all of them unless its
    manifest.json is ours (our keys, and every other file listed in it); none for a predictor of ours."""
    names = sorted(p.name for p in folder.iterdir())
    manifest = unchecked_manifest(folder)  # a FIFO is refused, never waited on
    if not is_predictor_manifest(manifest):
        return names
    return [n for n in names if n != MANIFEST and not (n in manifest["files"] and (folder / n).is_file())]


def check_space(out: str | os.PathLike, params: int) -> None:
    """Refuse, before training, an ``--out`` whose disk cannot hold the run's files: the best epoch's
    checkpoint and the staged predictor (float32 weights each) while the old predictor is still there.
    A disk that fills during a save makes h5py crash the process instead of raising."""
    parent = Path(out).absolute().parent
    needed = 2 * 4 * params + (2 << 20)  # checkpoint + staged weights, plus tokenizer, plots, JSON
    free = shutil.disk_usage(parent).free
    if free < needed:
        raise RecipesError(f"only {free / 1e6:.1f} MB free where --out '{out}' goes; this model needs about "
                           f"{needed / 1e6:.1f} MB there (checkpoint and staged predictor): free some space or "
                           "choose another --out")


class Stage:
    """A predictor being written: files go to ``path``; a ``commit_*`` method swaps the folder in at ``out``.

    Made by ``staged_predictor``, which removes ``path`` if the block ends without a commit.
    """

    def __init__(self, out: Path, overwrite: bool, path: Path, rewrites: str | None = None):
        self.out, self.overwrite, self.path, self.committed = out, overwrite, path, False
        self.rewrites = rewrites  # the save_id of the predictor this stage rewrites (export), or None

    def commit_predictor(self, predictor, metrics: dict) -> Path:
        """Save a ktrain predictor (``predictor.save``) with metrics.json and a manifest, and swap it in."""
        check_preproc_describes_model(predictor)
        predictor.save(str(self.path))
        classes = list(predictor.get_classes())
        # ktrain's own predictor of several labels per text says so in its preprocessor
        multilabel = bool(getattr(predictor, "multilabel", None) or getattr(predictor.preproc, "multilabel", False))
        if multilabel and not isinstance(metrics.get("thresholds"), dict):
            raise RecipesError("a predictor of several labels per text is saved with the thresholds chosen on "
                               "validation: put them in metrics['thresholds'] (choose_thresholds, "
                               "ktrain_recipes.inference.thresholds)")
        add_label_names(self.path, classes, multilabel)
        sets = {"multilabel": True, "thresholds": metrics["thresholds"]} if multilabel else {}
        return self.commit(classes, int(predictor.preproc.maxlen), metrics, kind="classifier",
                           pairs=metrics.get("pairs"), **sets,
                           **{SEGMENT_KEY: bool(getattr(predictor.preproc, "use_token_type_ids", False))})

    def commit(self, label_names: list[str], maxlen: int, metrics: dict, **extra) -> Path:
        """Write metrics.json and the manifest over the files already in ``path``, then swap it in."""
        write_json_atomic(self.path / METRICS, metrics)
        write_manifest(self.path, label_names, maxlen, metrics, **extra)
        return self.commit_manifest()

    def commit_manifest(self, manifest: dict | None = None) -> Path:
        """Swap ``path`` in at ``out`` (writing ``manifest`` first when given): the folder's last step."""
        if manifest is not None:
            write_json_atomic(self.path / MANIFEST, manifest)
        with writers_lock(self.out):
            check_out_dir(self.out, self.overwrite)  # again: something may have appeared at --out while we trained
            if self.rewrites is not None:
                check_same_save(self.out, self.rewrites)
            swap_into_place(self.path, self.out)
        self.committed = True
        return self.out


def save_id(folder: Path) -> str | None:
    """The save_id in ``folder``'s manifest.json, or None (no manifest, or not ours)."""
    return unchecked_manifest(folder).get("save_id")


def check_same_save(folder: Path, expected: str) -> None:
    """Refuse to rewrite ``folder`` when another command saved a new predictor there since this one read it."""
    if save_id(folder) != expected:
        raise RecipesError(f"'{folder}' was saved again by another command while this one ran (a train "
                           "--overwrite?), so what this command read is gone: nothing was changed; run it again on "
                           "the new predictor")


@contextmanager
def staged_predictor(out: str | os.PathLike, overwrite: bool = False, copy_of: Path | None = None,
                     skip: tuple[str, ...] = (), rewrites: str | None = None) -> Iterator[Stage]:
    """Reserve ``out``, stage a predictor beside it, and commit or clean up: every writer saves through this.

    ``with staged_predictor(out, overwrite) as stage:`` checks ``out`` (``check_out_dir``) and creates the
    staging folder ``stage.path``; the block writes its files there and ends with ``stage.commit_predictor``
    (or ``commit``). Leaving the block without a commit (an error, Ctrl-C) removes the staging folder, so no
    half-written predictor is ever left at ``out`` or beside it. ``copy_of``: start from that predictor's
    files, except ``skip`` (hard links where possible), to rewrite it through a swap (``export`` does).
    ``rewrites``: the save_id of the predictor the command read; if another save replaces it before the commit, the
    commit is refused and nothing changes (writers of one folder take ``swaps.writers_lock`` for the last step).
    """
    out = check_out_dir(out, overwrite, "--out" if copy_of is None else "--predictor")
    stage = Stage(out, overwrite, restage(copy_of, skip) if copy_of is not None else stage_dir(out), rewrites)
    try:
        if rewrites is not None:
            check_same_save(stage.path, rewrites)  # the copy is of the predictor that was read
        yield stage
    finally:
        if not stage.committed:
            shutil.rmtree(stage.path, ignore_errors=True)


def save_checked_predictor(predictor, out: str | os.PathLike, metrics: dict, overwrite: bool = False) -> Path:
    """Save a ktrain predictor with ``predictor.save``, plus metrics.json and a manifest, atomically.

    Args:
      predictor: a ktrain TextPredictor (from ``ktrain.get_predictor``).
      out: the predictor folder to create.
      metrics: what ``metrics.json`` holds (see ``recipe.run_recipe``).
      overwrite: replace ``out`` if it is a predictor saved by ktrain_recipes.
    """
    with staged_predictor(out, overwrite) as stage:
        return stage.commit_predictor(predictor, metrics)


# the shape keys of transformers' configs (BERT family; DistilBERT names them n_layers and dim)
_SHAPE_KEYS = ("num_hidden_layers", "n_layers", "hidden_size", "dim", "vocab_size")


def check_preproc_describes_model(predictor) -> None:
    """Refuse a predictor whose preprocessor's config has another shape than its model's.

    ktrain rebuilds a saved transformer from the config held by the preprocessor, then loads the weights
    by name; a model with fewer layers than that config would load with the missing layers random, and
    answer wrongly without an error.
    """
    pconfig = getattr(getattr(predictor, "preproc", None), "config", None)
    mconfig = getattr(getattr(predictor, "model", None), "config", None)
    if pconfig is None or mconfig is None:
        return
    for key in _SHAPE_KEYS:
        want, have = getattr(pconfig, key, None), getattr(mconfig, key, None)
        if want != have:
            raise RecipesError(f"the predictor's preprocessor describes a model with {key} {want}, but its model "
                               f"has {have}: give ktrain.get_predictor a preprocessor whose config is the model's")


def add_label_names(folder: Path, names: list[str], multilabel: bool = False) -> None:
    """Write id2label/label2id into config.json, so transformers' own loaders show our label names; with several
    labels per text, ``problem_type`` too, so that transformers (its pipeline, vLLM) applies a sigmoid per label,
    not a softmax."""
    path = folder / "config.json"
    if path.is_file():
        config = json.loads(path.read_text())
        config["id2label"] = {str(i): n for i, n in enumerate(names)}
        config["label2id"] = {n: i for i, n in enumerate(names)}
        if multilabel:
            config["problem_type"] = "multi_label_classification"
        path.write_text(json.dumps(config, indent=2))


def record_temperature(folder: str | os.PathLike, temperature: float, calibration: dict,
                       overwrite: bool = False) -> Path:
    """Record a temperature fitted on validation (``inference.calibration``) in a saved predictor: ``temperature``
    in its manifest (every loader then applies it) and ``calibration`` (what was measured) in its metrics.json.

    The folder is rewritten through a staging copy and a swap, as ``export`` does; a folder that records a
    temperature already is refused unless ``overwrite`` (replacing one is a choice, never a side effect), as is a
    predictor of several labels per text (its thresholds, chosen on validation, are its calibration).
    """
    import uuid

    from ktrain_recipes.predictor.manifest import sha256_file
    from ktrain_recipes.predictor.saved import check_temperature, read_predictor

    folder = Path(folder)
    temperature = check_temperature(temperature)
    read = read_predictor(folder)
    if read.manifest.get("multilabel") is True:
        raise RecipesError(f"'{folder}' gives several labels per text: a temperature is for one label per text (its "
                           "per-label thresholds, chosen on validation, already set how sure each label must be)")
    if read.manifest.get("kind") not in (None, "classifier"):
        raise RecipesError(f"'{folder}' is a {read.manifest.get('kind')}, not a classifier: a temperature is for a "
                           "classifier's probabilities")
    if "temperature" in read.manifest and not overwrite:
        raise RecipesError(f"'{folder}' records a temperature already ({read.manifest['temperature']}): pass "
                           "--overwrite to replace it, or leave it as it is")
    if not os.access(folder.parent, os.W_OK):
        raise RecipesError(f"cannot write beside '{folder}' (read-only): copy the predictor somewhere writable and "
                           "record the copy")
    with staged_predictor(folder, overwrite=True, copy_of=folder, skip=(METRICS,),
                          rewrites=read.manifest["save_id"]) as stage:
        write_json_atomic(stage.path / METRICS, {**read.metrics, "calibration": calibration})
        manifest = dict(read.manifest, temperature=temperature, save_id=uuid.uuid4().hex)  # answers change
        manifest["files"] = {**manifest["files"], METRICS: sha256_file(stage.path / METRICS)}
        stage.commit_manifest(manifest)
    return folder
