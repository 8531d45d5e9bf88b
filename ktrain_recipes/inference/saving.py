"""Checked saves: a predictor is written beside its folder, then swapped in, with a manifest of hashes.

What ktrain's ``predictor.save`` lacks, and this adds:
* atomic replacement: files go to a staging folder ``.NAME.partial-HOST-PID-XXXX`` which is renamed into
  place; an old predictor is moved aside to ``.NAME.old-HOST-PID`` first. A kill between the two renames
  leaves ``NAME`` missing: the next writer or loader puts the old one back (``recover``);
* litter from dead processes (staging folders, moved-aside predictors) is removed on the next write;
* ``--overwrite`` replaces only a predictor of ours (it has a manifest) or an empty folder, never data;
* ``manifest.json``: label names, maxlen, versions and the sha256 of every file, checked on load. It
  covers the whole folder: a listed file that is missing, an unlisted file or an empty list is refused.
  The ONNX files are *derived* (``export`` makes them from ``tf_model.h5``): a bad one disables only the
  int8 path, and ``export`` repairs it.

Loading (without running the folder's pickle, and consistently while another process saves) is
``loading``'s job; this module writes and checks.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from ktrain_recipes.errors import RecipesError, note
from ktrain_recipes.versions import check_versions, package_versions

MANIFEST = "manifest.json"
METRICS = "metrics.json"
FORMAT_VERSION = 1
ONNX_FP32 = "model.onnx"
ONNX_INT8 = "model.int8.onnx"
DERIVED = (ONNX_FP32, ONNX_INT8)  # rebuilt by `export` from the model; never needed by the source model
_HOST = socket.gethostname().replace("-", "_")


def check_out_dir(out: str | os.PathLike, overwrite: bool = False) -> Path:
    """Check, before any training, that ``out`` can receive a predictor; return it as a Path.

    A non-empty ``out`` is refused unless ``overwrite`` is set, and even then only when it holds a
    predictor saved by ktrain_recipes (a manifest): a data folder or a home folder is never replaced.
    """
    out = Path(out)
    recover(out)
    if out.exists() and not out.is_dir():
        raise RecipesError(f"--out '{out}' is a file: choose a folder name")
    if out.is_dir() and any(out.iterdir()):
        if not overwrite:
            raise RecipesError(f"--out '{out}' exists and is not empty: choose another folder or pass --overwrite")
        if not (out / MANIFEST).is_file():
            some = ", ".join(sorted(p.name for p in out.iterdir())[:5])
            raise RecipesError(f"--out '{out}' is not a predictor saved by ktrain_recipes (it holds {some}): "
                               "--overwrite only replaces predictors; choose another folder")
    _check_writable(out.parent)
    return out


def _check_writable(parent: Path) -> None:
    try:
        parent.mkdir(parents=True, exist_ok=True)
        probe = tempfile.NamedTemporaryFile(dir=parent, prefix=".write-test-")
        probe.close()
    except OSError as exc:
        raise RecipesError(f"cannot write in '{parent}' ({exc.strerror or exc}): choose another --out") from None


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


def stage_dir(out: Path) -> Path:
    """Create the staging folder a predictor is written into before it is renamed to ``out``."""
    out = Path(out)
    _check_writable(out.parent)
    clean_litter(out)
    return Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-{_HOST}-{os.getpid()}-", dir=out.parent))


def restage(folder: Path, skip: tuple[str, ...] = ()) -> Path:
    """A staging folder beside ``folder`` holding its files (hard links where the file system allows, else
    copies), to rewrite a saved predictor through a swap rather than in place (``export`` does)."""
    stage = stage_dir(folder)
    try:
        for path in folder.iterdir():
            if path.is_file() and path.name not in skip:
                try:
                    os.link(path, stage / path.name)
                except OSError:
                    shutil.copy2(path, stage / path.name)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return stage


def _owner(path: Path, name: str) -> tuple[str, int] | None:
    """Return (host, pid) from a staging or moved-aside folder's name, or None."""
    for kind in (".partial-", ".old-"):
        prefix = f".{name}{kind}"
        if path.name.startswith(prefix):
            parts = path.name[len(prefix):].split("-")
            if len(parts) >= 2 and parts[1].isdigit():
                return parts[0], int(parts[1])
    return None


def _alive(host: str, pid: int) -> bool:
    if host != _HOST:
        return True  # another machine's process: we cannot tell, so leave its files alone
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def recover(out: Path) -> None:
    """Put back a predictor a killed swap left moved aside (``out`` missing, ``.NAME.old-*`` present)."""
    out = Path(out)
    if out.exists() or not out.parent.is_dir():
        return
    for old in sorted(out.parent.glob(f".{out.name}.old-*")):
        owner = _owner(old, out.name)
        if owner and not _alive(*owner):
            old.rename(out)
            note(f"note: restored the predictor at '{out}' that an interrupted save had moved aside")
            return


def clean_litter(out: Path) -> None:
    """Remove staging and moved-aside folders beside ``out`` that belong to dead processes; say so."""
    out = Path(out)
    recover(out)
    removed = []
    for path in list(out.parent.glob(f".{out.name}.partial-*")) + list(out.parent.glob(f".{out.name}.old-*")):
        owner = _owner(path, out.name)
        if owner and not _alive(*owner):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path.name)
    if removed:
        note(f"note: removed {len(removed)} folder(s) left by interrupted runs: {', '.join(removed)}")


class Stage:
    """A predictor being written: files go to ``path``; a ``commit_*`` method swaps the folder in at ``out``.

    Made by ``staged_predictor``, which removes ``path`` if the block ends without a commit.
    """

    def __init__(self, out: Path, overwrite: bool, path: Path):
        self.out, self.overwrite, self.path, self.committed = out, overwrite, path, False

    def commit_predictor(self, predictor, metrics: dict) -> Path:
        """Save a ktrain predictor (``predictor.save``) with metrics.json and a manifest, and swap it in."""
        check_preproc_describes_model(predictor)
        predictor.save(str(self.path))
        classes = list(predictor.get_classes())
        _add_label_names(self.path, classes)
        return self.commit(classes, int(predictor.preproc.maxlen), metrics, kind="classifier",
                           pairs=metrics.get("pairs"))

    def commit(self, label_names: list[str], maxlen: int, metrics: dict, **extra) -> Path:
        """Write metrics.json and the manifest over the files already in ``path``, then swap it in."""
        write_json_atomic(self.path / METRICS, metrics)
        write_manifest(self.path, label_names, maxlen, metrics, **extra)
        return self.commit_manifest()

    def commit_manifest(self, manifest: dict | None = None) -> Path:
        """Swap ``path`` in at ``out`` (writing ``manifest`` first when given): the folder's last step."""
        if manifest is not None:
            write_json_atomic(self.path / MANIFEST, manifest)
        check_out_dir(self.out, self.overwrite)  # again: something may have appeared at --out while we trained
        swap_into_place(self.path, self.out)
        self.committed = True
        return self.out


@contextmanager
def staged_predictor(out: str | os.PathLike, overwrite: bool = False, copy_of: Path | None = None,
                     skip: tuple[str, ...] = ()) -> Iterator[Stage]:
    """Reserve ``out``, stage a predictor beside it, and commit or clean up: every writer saves through this.

    ``with staged_predictor(out, overwrite) as stage:`` checks ``out`` (``check_out_dir``) and creates the
    staging folder ``stage.path``; the block writes its files there and ends with ``stage.commit_predictor``
    (or ``commit``). Leaving the block without a commit (an error, Ctrl-C) removes the staging folder, so no
    half-written predictor is ever left at ``out`` or beside it. ``copy_of``: start from that predictor's
    files, except ``skip`` (hard links where possible), to rewrite it through a swap (``export`` does).
    """
    out = check_out_dir(out, overwrite)
    stage = Stage(out, overwrite, restage(copy_of, skip) if copy_of is not None else stage_dir(out))
    try:
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


def _add_label_names(folder: Path, names: list[str]) -> None:
    """Write id2label/label2id into config.json, so transformers' own loaders show our label names."""
    path = folder / "config.json"
    if path.is_file():
        config = json.loads(path.read_text())
        config["id2label"] = {str(i): n for i, n in enumerate(names)}
        config["label2id"] = {n: i for i, n in enumerate(names)}
        path.write_text(json.dumps(config, indent=2))


def swap_into_place(stage: Path, out: Path) -> None:
    """Rename a complete staging folder to ``out``, moving an old ``out`` aside first and removing it after."""
    os.chmod(stage, 0o755)  # mkdtemp makes 0700 folders
    if not out.exists():
        stage.rename(out)
        return
    old = out.with_name(f".{out.name}.old-{_HOST}-{os.getpid()}")
    out.rename(old)
    try:
        stage.rename(out)
    except BaseException:
        old.rename(out)  # put the previous predictor back
        raise
    shutil.rmtree(old, ignore_errors=True)


def _labels_digest(label_names: list[str], maxlen: int) -> str:
    return hashlib.sha256(json.dumps([label_names, maxlen]).encode()).hexdigest()


def write_manifest(folder: Path, label_names: list[str], maxlen: int, metrics: dict, **extra) -> None:
    """Write manifest.json: labels, maxlen, versions, headline metrics and the sha256 of every file.

    ``extra`` adds keys (``kind``, ``pairs``, ``onnx_inputs``). Every save gets a fresh ``save_id``, so two
    saves never have the same manifest (a loader compares manifests to see that no save happened meanwhile).
    """
    files = {p.name: sha256_file(p) for p in sorted(folder.iterdir()) if p.is_file() and p.name != MANIFEST}
    manifest = {
        "format_version": FORMAT_VERSION,
        "save_id": uuid.uuid4().hex,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "label_names": label_names,
        "maxlen": maxlen,
        "labels_sha256": _labels_digest(label_names, maxlen),
        "model_id": metrics.get("model_id"),
        "versions": package_versions(),
        "metrics": {k: metrics.get(k) for k in ("accuracy", "macro_f1", "n")},
        "files": files,
        **extra,
    }
    write_json_atomic(folder / MANIFEST, manifest)


def write_json_atomic(path: Path, content) -> None:
    """Write JSON through a temporary file and a rename, so the file is never half-written."""
    tmp = path.with_name(f".{path.name}.partial")
    tmp.write_text(json.dumps(content, indent=2, default=_jsonable, allow_nan=False))
    os.replace(tmp, path)


def sha256_file(path: Path) -> str:
    """Return the hex sha256 of a file, read in 1 MB blocks (predictor weights are ~100 MB)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _jsonable(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)


def read_manifest(folder: str | os.PathLike, strict: bool = False) -> dict:
    """Check a predictor folder against its manifest and return the manifest.

    Raises RecipesError naming the problem: no such folder, a corrupt manifest, an empty file list, a
    listed file missing or edited, a file the manifest does not list. The derived ONNX files are only
    checked for being listed here; ``check_derived`` checks their hashes when the int8 path is used.
    Other minor versions of TensorFlow/transformers/ktrain warn, or with ``strict`` raise.
    The returned dict holds ``_digest``, the sha256 of the manifest's bytes as read.
    """
    folder = Path(folder)
    recover(folder)
    if folder.exists() and not folder.is_dir():
        raise RecipesError(f"'{folder}' is not a folder: pass the predictor folder (the --out of a train run)")
    if not folder.is_dir():
        raise RecipesError(f"predictor folder '{folder}' does not exist: pass the --out folder of a train run")
    manifest = _load_manifest(folder)
    check_versions(str(folder), manifest.get("versions", {}), strict)
    listed = manifest["files"]
    present = {p.name for p in folder.iterdir()} - {MANIFEST}
    unlisted = sorted(present - set(listed))
    if unlisted:
        raise RecipesError(f"'{folder}' holds {unlisted[0]!r}, which its manifest does not list (files may only "
                           "be added by our commands): remove it, or re-save the predictor")
    for name, digest in listed.items():
        if name in DERIVED:
            continue
        if not (folder / name).is_file():
            raise RecipesError(f"'{folder}' is missing {name}: the predictor is incomplete, re-run train")
        if sha256_file(folder / name) != digest:
            raise RecipesError(f"'{folder}/{name}' does not match its checksum (corrupt or edited): re-run train")
    return manifest


def check_derived(folder: str | os.PathLike, manifest: dict, name: str) -> Path:
    """Check one derived (ONNX) file against the manifest; return its path. A bad one says how to repair it."""
    folder = Path(folder)
    repair = f"`ktrain-recipes export --predictor {folder}` rebuilds it from the model"
    if name not in manifest["files"]:
        raise RecipesError(f"'{folder}' has no {name}: {repair}")
    path = folder / name
    if not path.is_file() or sha256_file(path) != manifest["files"][name]:
        raise RecipesError(f"'{path}' is missing or does not match its checksum (damaged): {repair}")
    return path


def manifest_digest(folder: str | os.PathLike) -> str | None:
    """The sha256 of a folder's manifest.json as it is now, or None when there is none (e.g. mid-swap)."""
    try:
        return hashlib.sha256((Path(folder) / MANIFEST).read_bytes()).hexdigest()
    except OSError:
        return None


def swap_in_progress(out: str | os.PathLike) -> bool:
    """True while another live process is between the two renames of a swap (``out`` moved aside)."""
    out = Path(out)
    for old in out.parent.glob(f".{out.name}.old-*"):
        owner = _owner(old, out.name)
        if owner and _alive(*owner):
            return True
    return False


def _load_manifest(folder: Path) -> dict:
    corrupt = f"'{folder}/{MANIFEST}' is corrupt: re-run train to recreate the predictor"
    try:
        raw = (folder / MANIFEST).read_bytes()
        manifest = json.loads(raw)
    except FileNotFoundError:
        raise RecipesError(f"'{folder}' has no {MANIFEST}: it is not a predictor saved by ktrain_recipes") from None
    except IsADirectoryError:
        raise RecipesError(corrupt) from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise RecipesError(corrupt) from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        raise RecipesError(corrupt)
    if not manifest["files"] or not all(isinstance(v, str) for v in manifest["files"].values()):
        raise RecipesError(f"{corrupt} (its file list is empty or malformed, so nothing could be checked)")
    manifest["_digest"] = hashlib.sha256(raw).hexdigest()
    if manifest.get("format_version") != FORMAT_VERSION:
        raise RecipesError(
            f"'{folder}' was saved in predictor format {manifest.get('format_version')}, this version reads "
            f"format {FORMAT_VERSION}: upgrade ktrain_recipes or re-train"
        )
    root = folder.resolve()
    for name in manifest["files"]:
        inside = (folder / name).resolve()
        if Path(name).is_absolute() or ".." in Path(name).parts or inside.parent != root:
            raise RecipesError(f"{corrupt} (entry {name!r} points outside the folder)")
    labels, maxlen = manifest.get("label_names"), manifest.get("maxlen")
    if manifest.get("labels_sha256") != _labels_digest(labels, maxlen):
        raise RecipesError(f"{corrupt} (its label names or maxlen were edited)")
    return manifest


def read_metrics(folder: str | os.PathLike) -> dict:
    """Return a predictor folder's metrics.json: scores, timings, what the run used (its ``settings``).

    Raises RecipesError when there is none or it is not JSON. It is not checked against the manifest here:
    ``read_manifest`` does that for a whole folder.
    """
    path = Path(folder) / METRICS
    try:
        metrics = json.loads(path.read_text())
    except FileNotFoundError:
        raise RecipesError(f"'{folder}' has no {METRICS}: pass a predictor folder written by train") from None
    except (OSError, ValueError) as exc:
        raise RecipesError(f"'{path}' is not readable JSON ({exc}): re-run train to recreate it") from None
    if not isinstance(metrics, dict):
        raise RecipesError(f"'{path}' is not a metrics.json of ktrain_recipes: re-run train to recreate it")
    return metrics


def folder_size_mb(folder: str | os.PathLike, pattern: str = "*") -> float:
    """Return the size of the files in a folder matching pattern, in MB."""
    return sum(p.stat().st_size for p in Path(folder).glob(pattern) if p.is_file()) / 1e6
