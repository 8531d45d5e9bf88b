"""The manifest: what a predictor folder holds, with the sha256 of every file, written here at every save and
checked on every load (``saved.read_predictor``, the one reader of a whole folder).

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

from ktrain_recipes.digests import sha256_file
from ktrain_recipes.errors import RecipesError
from ktrain_recipes.versions import package_versions

MANIFEST = "manifest.json"
METRICS = "metrics.json"
FORMAT_VERSION = 1
ONNX_FP32 = "model.onnx"
ONNX_INT8 = "model.int8.onnx"
DERIVED = (ONNX_FP32, ONNX_INT8)  # rebuilt by `export` from the model; never needed by the source model


def labels_digest(label_names: list[str], maxlen: int) -> str:
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
        "labels_sha256": labels_digest(label_names, maxlen),
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


def _jsonable(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)


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


def read_metrics(folder: str | os.PathLike) -> dict:
    """Return a predictor folder's metrics.json: scores, timings, what the run used (its ``settings``).

    Raises RecipesError when there is none or it is not JSON. It is not checked against the manifest here:
    ``saved.read_predictor`` does that for a whole folder.
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
