"""A predictor folder read once: one value for one save, made by one function with one rule for what is refused.

``read_predictor`` opens ``manifest.json`` once, checks it and every file it lists, and returns a ``SavedPredictor``:
the manifest, the sha256 of its bytes, ``metrics.json`` as checked, what the folder can be loaded as (ktrain, fp32
ONNX, int8) and a stamp of the manifest file that a later save changes. Loaders, the service, ``export`` and
``distill`` take this value instead of asking the folder again; ``loading.load_consistent`` asks the folder only
whether it is still the same save (a ``stat``, no read).

A save is read through an open handle on its folder (``FolderPin``): every file a loader reads afterwards comes from
that one folder, whatever saves rename in and out meanwhile, and is checked against the manifest read from it. (Reading
by path, a load could read one save's manifest and the next save's files, and a save brought back by a later swap
would then pass the "same manifest" check.)

The rule: refused with a one-line error are a path that is not a folder; a manifest that is missing, not a regular
file (a FIFO is never waited on), corrupt, of another format, or edited (labels, maxlen); a listed file that is
missing, not a regular file (a FIFO, a device, a link), points outside the folder, or does not match its sha256; a
file the manifest does not list. The derived ONNX files are checked when they are used (``SavedPredictor.derived``):
a bad one disables only the ONNX paths, which ``export`` repairs.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import weakref
from dataclasses import dataclass, field
from pathlib import Path

from ktrain_recipes.errors import RecipesError
from ktrain_recipes.predictor.manifest import (DERIVED, FORMAT_VERSION, MANIFEST, MAX_MANIFEST_BYTES, METRICS,
                                              ONNX_FP32, ONNX_INT8, labels_digest, read_regular,
                                              sha256_file)
from ktrain_recipes.predictor.swaps import recover
from ktrain_recipes.versions import check_versions

# what a folder can be loaded as, by the derived file each needs (ktrain needs none)
BACKEND_FILES = {"onnx-fp32": ONNX_FP32, "int8": ONNX_INT8}


class FolderPin:
    """An open handle on one folder (a directory descriptor): paths under ``path`` reach that folder's files even
    after it is renamed, and its identity (device, inode) cannot be taken by another folder while it is held."""

    def __init__(self, fd: int):
        self.fd = fd
        info = os.fstat(fd)
        self.identity = (info.st_dev, info.st_ino)
        weakref.finalize(self, os.close, fd)  # closed with the last reference to the save

    @classmethod
    def of(cls, folder: Path) -> FolderPin | None:
        """The folder pinned, or None when it is not there (or not a folder) now."""
        import errno

        try:
            return cls(os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NONBLOCK))  # a FIFO never waits
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOTDIR):
                return None
            raise RecipesError(f"cannot open '{folder}' ({exc.strerror}): check its permissions") from None

    def path(self, folder: Path) -> Path:
        """Where to read the pinned folder's files: through the descriptor on Linux, else the folder's path."""
        proc = Path(f"/proc/self/fd/{self.fd}")
        return proc if proc.is_dir() else folder

    def is_at(self, folder: Path) -> bool:
        """Whether ``folder`` names the pinned folder now (no save has swapped it out)."""
        try:
            info = os.stat(folder)
        except OSError:
            return False
        return (info.st_dev, info.st_ino) == self.identity


class SwappedWhileOpened(RecipesError):
    """The folder was missing when pinned and there when looked at again: a save swapped it in meanwhile."""


@dataclass(frozen=True)
class SavedPredictor:
    """One save of a predictor folder, read and checked once (``read_predictor``)."""

    folder: Path
    manifest: dict
    digest: str          # sha256 of manifest.json's bytes as read: names this save (the service reports it)
    metrics: dict        # metrics.json, checked against the manifest like every listed file
    stamp: tuple         # (device, inode, size, mtime) of manifest.json as read: a later save changes it
    pin: FolderPin | None = field(default=None, compare=False, repr=False)  # the folder this save was read from
    # read from the above once, when the value is made (plain fields: a loader reads them without asking again)
    source: Path = field(init=False, compare=False, repr=False)  # where its files are read (``FolderPin.path``)
    files: dict = field(init=False, compare=False, repr=False)  # every listed file's sha256, by name
    label_names: list = field(init=False, compare=False, repr=False)
    maxlen: int = field(init=False, compare=False, repr=False)
    pairs: bool | None = field(init=False, compare=False, repr=False)  # None when the save did not record it
    # what the folder lists files to be loaded as: always ktrain; onnx-fp32 and int8 after ``export`` (their files
    # are checked when loaded, ``derived``)
    backends: tuple = field(init=False, compare=False, repr=False)
    # what names this save (the service reports it, with the backend it was loaded as)
    identity: dict = field(init=False, compare=False, repr=False)

    def __post_init__(self):
        m = self.manifest
        files, labels, maxlen = m["files"], list(m["label_names"]), int(m["maxlen"])
        derived = {
            "source": self.pin.path(self.folder) if self.pin else self.folder, "files": files,
            "label_names": labels, "maxlen": maxlen, "pairs": m.get("pairs"),
            "backends": ("ktrain", *(name for name, file in BACKEND_FILES.items() if file in files)),
            "identity": {"folder": str(self.folder), "model_id": m.get("model_id"), "labels": list(labels),
                         "maxlen": maxlen, "manifest_sha256": self.digest, "save_id": m.get("save_id"),
                         "created": m.get("created")},
        }
        for name, value in derived.items():
            object.__setattr__(self, name, value)  # frozen: set once, here

    def derived(self, name: str) -> Path:
        """The path of a derived (ONNX) file, checked against the manifest; a bad one says how to repair it."""
        repair = f"`ktrain-recipes export --predictor {self.folder}` rebuilds it from the model"
        if name not in self.files:
            raise RecipesError(f"'{self.folder}' has no {name}: {repair}")
        path = self.source / name
        if not _regular(path) or sha256_file(path) != self.files[name]:
            raise RecipesError(f"'{self.folder / name}' is missing or does not match its checksum (damaged): {repair}")
        return path

    def is_current(self) -> bool:
        """Whether the folder still holds this save: the same folder (not one a save swapped in), whose
        manifest.json is the same file, unchanged (two ``stat``s)."""
        return (self.pin is None or self.pin.is_at(self.folder)) and manifest_stamp(self.folder) == self.stamp


def manifest_stamp(folder: str | os.PathLike) -> tuple | None:
    """The (device, inode, size, mtime) of a folder's manifest.json without opening it; None when it is absent.
    Every save writes a new manifest and swaps the folder by renames, so a new save always changes it."""
    try:
        info = os.stat(Path(folder) / MANIFEST)
    except OSError:
        return None
    return _stamp(info)


def _stamp(info: os.stat_result) -> tuple:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


def read_predictor(folder: str | os.PathLike, strict: bool = False, pin: FolderPin | None = None) -> SavedPredictor:
    """Read and check a predictor folder once (the module's rule); return the save as one value.

    Other minor versions of TensorFlow/transformers/ktrain warn, or with ``strict`` raise. ``pin``: the folder
    already pinned by the caller (``FolderPin.of``), who then knows which folder was read.
    """
    folder = Path(folder)
    recover(folder)
    pin = pin or FolderPin.of(folder)
    if pin is None:  # not a folder, or none there
        if folder.suffix == ".keras" and folder.exists():
            raise RecipesError(f"'{folder}' is a Keras 3 model, not a predictor: load it with keras.saving.load_model "
                               "(docs/keras3.md); predict, export and serve take the folders train saves")
        if folder.is_dir():  # gone when pinned, back now: a save swapped it in meanwhile
            raise SwappedWhileOpened(f"'{folder}' was being replaced by a save while it was opened: load it again")
        if folder.exists():
            raise RecipesError(f"'{folder}' is not a folder: pass the predictor folder (the --out of a train run)")
        raise RecipesError(f"predictor folder '{folder}' does not exist: pass the --out folder of a train run")
    base = pin.path(folder)
    manifest, digest, stamp = _read_manifest(folder, base)
    check_versions(str(folder), manifest.get("versions", {}), strict)
    listed = manifest["files"]
    unlisted = sorted({p.name for p in base.iterdir()} - {MANIFEST} - set(listed))
    if unlisted:
        raise RecipesError(f"'{folder}' holds {unlisted[0]!r}, which its manifest does not list (files may only "
                           "be added by our commands): remove it, or re-save the predictor")
    metrics_bytes = b""
    for name, file_digest in listed.items():
        if name in DERIVED:
            continue
        path = base / name
        if not path.exists() and not path.is_symlink():
            raise RecipesError(f"'{folder}' is missing {name}: the predictor is incomplete, re-run train")
        if not _regular(path):
            raise RecipesError(f"'{folder / name}' is not a regular file (a link, a FIFO or a device): a predictor "
                               "holds only the files it saved; re-run train")
        if name == METRICS:
            metrics_bytes = read_regular(path, 64 * MAX_MANIFEST_BYTES)
            seen = hashlib.sha256(metrics_bytes).hexdigest()
        else:
            seen = sha256_file(path)
        if seen != file_digest:
            raise RecipesError(f"'{folder}/{name}' does not match its checksum (corrupt or edited): re-run train")
    return SavedPredictor(folder, manifest, digest, _metrics(folder, metrics_bytes), stamp, pin)


def read_manifest(folder: str | os.PathLike, strict: bool = False) -> dict:
    """Check a predictor folder and return its manifest (``read_predictor(folder).manifest``)."""
    return read_predictor(folder, strict).manifest


def _read_manifest(folder: Path, base: Path) -> tuple[dict, str, tuple]:
    """manifest.json, opened once (from ``base``, the pinned ``folder``): the parsed manifest, the sha256 of its
    bytes and its stamp."""
    corrupt = f"'{folder}/{MANIFEST}' is corrupt: re-run train to recreate the predictor"
    path = base / MANIFEST
    try:
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            raise ValueError("a link")
        raw = read_regular(path)
        manifest = json.loads(raw)
    except FileNotFoundError:
        keras3 = sorted(p.name for p in base.glob("*.keras"))
        if keras3:
            raise RecipesError(f"'{folder}' holds a Keras 3 model ({keras3[0]}), not a predictor: load it with "
                               "keras.saving.load_model (docs/keras3.md); predict, export and serve take the "
                               "folders train saves") from None
        raise RecipesError(f"'{folder}' has no {MANIFEST}: it is not a predictor saved by ktrain_recipes") from None
    except (IsADirectoryError, ValueError):  # JSONDecodeError and UnicodeDecodeError are ValueErrors too
        raise RecipesError(corrupt + " (or it is not a regular file)") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        raise RecipesError(corrupt)
    if not manifest["files"] or not all(isinstance(v, str) for v in manifest["files"].values()):
        raise RecipesError(f"{corrupt} (its file list is empty or malformed, so nothing could be checked)")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise RecipesError(
            f"'{folder}' was saved in predictor format {manifest.get('format_version')}, this version reads "
            f"format {FORMAT_VERSION}: upgrade ktrain_recipes or re-train"
        )
    for name in manifest["files"]:  # one plain name each (links are refused where files are read: ``_regular``)
        if Path(name).is_absolute() or len(Path(name).parts) != 1 or name in (".", ".."):
            raise RecipesError(f"{corrupt} (entry {name!r} points outside the folder)")
    labels, maxlen = manifest.get("label_names"), manifest.get("maxlen")
    if manifest.get("labels_sha256") != labels_digest(labels, maxlen):
        raise RecipesError(f"{corrupt} (its label names or maxlen were edited)")
    odd = odd_values(labels, maxlen)  # a manifest re-signed by hand is signed, not right
    if odd:
        raise RecipesError(f"{corrupt} ({odd})")
    return manifest, hashlib.sha256(raw).hexdigest(), _stamp(info)


def odd_values(labels, maxlen) -> str | None:
    """What is wrong with a manifest's label names and maxlen as values, in a few words; None when they are a
    list of distinct, non-blank names (one for a ranker's score) and a whole number of tokens from 8 to 512 (what
    train saves)."""
    if isinstance(maxlen, bool) or not isinstance(maxlen, int) or not 8 <= maxlen <= 512:
        return f"maxlen {maxlen!r} is not a whole number of tokens from 8 to 512"
    if not isinstance(labels, list) or not labels:
        return f"label_names {str(labels)[:60]!r} is not a list of names"
    if not all(isinstance(n, str) and n.strip() for n in labels):
        return f"label_names holds {next(n for n in labels if not (isinstance(n, str) and n.strip()))!r}, not a name"
    if len(set(labels)) != len(labels):
        return "label_names names a label twice"
    return None


def _regular(path: Path) -> bool:
    """A regular file, not a link to one (a link could leave the folder, or change under a check)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _metrics(folder: Path, raw: bytes) -> dict:
    """metrics.json's content ({} for a save that has none listed)."""
    if not raw:
        return {}
    try:
        metrics = json.loads(raw)
    except ValueError:
        raise RecipesError(f"'{folder}/{METRICS}' is not readable JSON: re-run train to recreate it") from None
    return metrics if isinstance(metrics, dict) else {}


def label_sets_of(saved: SavedPredictor) -> tuple[bool, dict | None]:
    """Whether the save gives several labels per text, and its thresholds (checked: one per label, each in (0, 1))."""
    from ktrain_recipes.data.label_sets import threshold_vector

    manifest = saved.manifest
    if manifest.get("multilabel") is not True:
        return False, None
    try:
        threshold_vector(manifest.get("thresholds"), list(manifest["label_names"]))
    except RecipesError as exc:
        raise RecipesError(f"'{saved.folder}/manifest.json': {exc}") from None
    return True, manifest["thresholds"]


def check_temperature(value, where: str = "the temperature") -> float:
    """``value`` as a float if it is a positive finite number; RecipesError otherwise."""
    import math

    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise RecipesError(f"{where} {value!r} is not a positive finite number")
    return float(value)


def temperature_of(saved: SavedPredictor) -> float | None:
    """The temperature recorded for the save (``inference.calibration``: fitted on validation), or None; a value
    that is not a positive finite number is a corrupt folder."""
    value = saved.manifest.get("temperature")
    if value is None:
        return None
    try:
        return check_temperature(value, "its temperature")
    except RecipesError as exc:
        raise RecipesError(f"'{saved.folder}/manifest.json': {exc}: the folder is corrupt; re-run train, or "
                           "`ktrain-recipes calibrate --record --overwrite` to fit it again") from None
