"""The manifest: what a predictor folder holds, with the sha256 of every file, checked on every load.

``manifest.json`` records the label names, maxlen, package versions and the sha256 of every file. It covers
the whole folder: a listed file that is missing, an unlisted file or an empty list is refused. The ONNX
files are *derived* (``export`` makes them from ``tf_model.h5``): a bad one disables only the int8 path,
and ``export`` repairs it.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from ktrain_recipes.errors import RecipesError
from ktrain_recipes.predictor.swaps import recover
from ktrain_recipes.versions import check_versions, package_versions

MANIFEST = "manifest.json"
METRICS = "metrics.json"
FORMAT_VERSION = 1
ONNX_FP32 = "model.onnx"
ONNX_INT8 = "model.int8.onnx"
DERIVED = (ONNX_FP32, ONNX_INT8)  # rebuilt by `export` from the model; never needed by the source model


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
    """Check a predictor folder against its manifest and return the manifest (``read_checked``)."""
    return read_checked(folder, strict)[0]


def read_checked(folder: str | os.PathLike, strict: bool = False) -> tuple[dict, str]:
    """Check a predictor folder against its manifest; return the manifest and the sha256 of its bytes as read.

    Raises RecipesError naming the problem: no such folder, a corrupt manifest, an empty file list, a
    listed file missing or edited, a file the manifest does not list. The derived ONNX files are only
    checked for being listed here; ``check_derived`` checks their hashes when the int8 path is used.
    Other minor versions of TensorFlow/transformers/ktrain warn, or with ``strict`` raise.
    The digest names this save of the folder (``load_consistent`` compares it after a load; the service reports it).
    """
    folder = Path(folder)
    recover(folder)
    if folder.exists() and not folder.is_dir():
        if folder.suffix == ".keras":
            raise RecipesError(f"'{folder}' is a Keras 3 model, not a predictor: load it with keras.saving.load_model "
                               "(docs/keras3.md); predict, export and serve take the folders train saves")
        raise RecipesError(f"'{folder}' is not a folder: pass the predictor folder (the --out of a train run)")
    if not folder.is_dir():
        raise RecipesError(f"predictor folder '{folder}' does not exist: pass the --out folder of a train run")
    manifest, digest = _load_manifest(folder)
    check_versions(str(folder), manifest.get("versions", {}), strict)
    listed = manifest["files"]
    present = {p.name for p in folder.iterdir()} - {MANIFEST}
    unlisted = sorted(present - set(listed))
    if unlisted:
        raise RecipesError(f"'{folder}' holds {unlisted[0]!r}, which its manifest does not list (files may only "
                           "be added by our commands): remove it, or re-save the predictor")
    for name, file_digest in listed.items():
        if name in DERIVED:
            continue
        if not (folder / name).is_file():
            raise RecipesError(f"'{folder}' is missing {name}: the predictor is incomplete, re-run train")
        if sha256_file(folder / name) != file_digest:
            raise RecipesError(f"'{folder}/{name}' does not match its checksum (corrupt or edited): re-run train")
    return manifest, digest


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


# a manifest lists a predictor's few files: one larger than this is not one of ours, and is not read
MAX_MANIFEST_BYTES = 1 << 20


def read_regular(path: Path, limit: int = MAX_MANIFEST_BYTES) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes, read without blocking; ValueError
    for anything else (a FIFO, which would make a plain read wait for a writer for ever, a device, a folder, a
    larger file); OSError (FileNotFoundError ...) as ``open`` raises it."""
    import stat

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            raise ValueError(f"'{path}' is not a regular file of at most {limit} bytes")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(limit + 1)
        if len(data) > limit:
            raise ValueError(f"'{path}' grew past {limit} bytes while it was read")
        return data
    finally:
        os.close(fd)


def manifest_digest(folder: str | os.PathLike) -> str | None:
    """The sha256 of a folder's manifest.json as it is now, or None when there is none (e.g. mid-swap) or it is
    not a regular file of at most ``MAX_MANIFEST_BYTES`` (``read_regular``)."""
    try:
        return hashlib.sha256(read_regular(Path(folder) / MANIFEST)).hexdigest()
    except (OSError, ValueError):
        return None


def _load_manifest(folder: Path) -> tuple[dict, str]:
    corrupt = f"'{folder}/{MANIFEST}' is corrupt: re-run train to recreate the predictor"
    try:
        raw = read_regular(folder / MANIFEST)
        manifest = json.loads(raw)
    except FileNotFoundError:
        keras3 = sorted(p.name for p in folder.glob("*.keras"))
        if keras3:
            raise RecipesError(f"'{folder}' holds a Keras 3 model ({keras3[0]}), not a predictor: load it with "
                               "keras.saving.load_model (docs/keras3.md); predict, export and serve take the "
                               "folders train saves") from None
        raise RecipesError(f"'{folder}' has no {MANIFEST}: it is not a predictor saved by ktrain_recipes") from None
    except (IsADirectoryError, ValueError):  # JSONDecodeError and UnicodeDecodeError are ValueErrors too
        raise RecipesError(corrupt) from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        raise RecipesError(corrupt)
    if not manifest["files"] or not all(isinstance(v, str) for v in manifest["files"].values()):
        raise RecipesError(f"{corrupt} (its file list is empty or malformed, so nothing could be checked)")
    digest = hashlib.sha256(raw).hexdigest()
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
    return manifest, digest


def unchecked_manifest(folder: str | os.PathLike) -> dict:
    """A folder's manifest.json as it is, without checking any hash; {} when there is none or it is not an object
    (to choose how to load a folder, or to see whether another save replaced it)."""
    try:
        manifest = json.loads(read_regular(Path(folder) / MANIFEST))  # never blocks on a FIFO
    except (OSError, ValueError):
        return {}
    return manifest if isinstance(manifest, dict) else {}


def is_predictor_manifest(manifest: dict) -> bool:
    """Whether ``manifest`` (a manifest.json as read) is a predictor's, as ``write_manifest`` writes it, not any
    other file of that name (a web app's): the one rule for "this folder is a predictor" before its hashes are read
    (writing beside one breaks its checksums; ``--overwrite`` replaces only one)."""
    return isinstance(manifest, dict) and isinstance(manifest.get("files"), dict) \
        and isinstance(manifest.get("label_names"), list) and "labels_sha256" in manifest


def listed_files(folder: str | os.PathLike) -> set[str]:
    """The file names a folder's manifest lists, read without checking any hash (to choose how to load it; the
    load itself then checks the whole folder once)."""
    files = unchecked_manifest(folder).get("files")
    return set(files) if isinstance(files, dict) else set()


def read_metrics(folder: str | os.PathLike) -> dict:
    """Return a predictor folder's metrics.json: scores, timings, what the run used (its ``settings``).

    Raises RecipesError when there is none or it is not JSON. It is not checked against the manifest here:
    ``read_manifest`` does that for a whole folder.
    """
    path = Path(folder) / METRICS
    try:
        metrics = json.loads(read_regular(path, 64 * MAX_MANIFEST_BYTES))  # never blocks on a FIFO
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


def identity(folder: Path, manifest: dict, digest: str, backend: str) -> dict:
    """What names one saved predictor: its folder, model, labels, save and backend (the service reports it)."""
    return {"folder": str(folder), "model_id": manifest.get("model_id"), "labels": list(manifest["label_names"]),
            "maxlen": int(manifest["maxlen"]), "manifest_sha256": digest,
            "save_id": manifest.get("save_id"), "created": manifest.get("created"), "backend": backend}
