"""Save, load, check and time ktrain predictors; predict with clear input rules."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from . import compat  # noqa: F401
from .errors import RecipesError

MANIFEST = "manifest.json"
METRICS = "metrics.json"
FORMAT_VERSION = 1
_VERSIONED = ["ktrain", "transformers", "tensorflow", "tf_keras", "numpy"]


def package_versions() -> dict[str, str]:
    """Return the versions of the packages a saved predictor depends on."""
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": sys.version.split()[0]}
    for name in _VERSIONED + ["ktrain_recipes"]:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            from . import __version__

            out[name] = __version__ if name == "ktrain_recipes" else "missing"
    return out


def check_out_dir(out: str | os.PathLike, overwrite: bool = False) -> Path:
    """Refuse an existing non-empty output folder unless overwrite is set (checked before training)."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise RecipesError(f"--out '{out}' is a file: choose a folder name")
    if out.is_dir() and any(out.iterdir()) and not overwrite:
        raise RecipesError(f"--out '{out}' exists and is not empty: choose another folder or pass --overwrite")
    return out


def stage_dir(out: Path) -> Path:
    """Create the temporary sibling folder a predictor is written into before it is renamed."""
    out.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))


def save_predictor(predictor, out: str | os.PathLike, metrics: dict, stage: Path | None = None,
                   overwrite: bool = False) -> Path:
    """Save a predictor with its metrics and a manifest, atomically.

    Everything is written into a temporary sibling folder which then replaces ``out`` by
    rename, so a failed or interrupted save never leaves a half-written predictor and never
    destroys the previous one.

    Args:
      predictor: a ktrain TextPredictor.
      out: the predictor folder to create.
      metrics: what ``metrics.json`` holds (see ``recipe.run_recipe``).
      stage: a staging folder already holding extra files (plots); created if None.
      overwrite: replace an existing non-empty ``out``.
    """
    out = check_out_dir(out, overwrite)
    stage = stage or stage_dir(out)
    try:
        predictor.save(str(stage))
        (stage / METRICS).write_text(json.dumps(metrics, indent=2, default=_jsonable))
        _write_manifest(stage, predictor, metrics)
        _swap_into_place(stage, out)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return out


def _swap_into_place(stage: Path, out: Path) -> None:
    os.chmod(stage, 0o755)  # mkdtemp makes 0700 folders
    if not out.exists():
        stage.rename(out)
        return
    old = out.with_name(f".{out.name}.old-{os.getpid()}")
    out.rename(old)
    try:
        stage.rename(out)
    except BaseException:
        old.rename(out)  # put the previous predictor back
        raise
    shutil.rmtree(old, ignore_errors=True)


def _write_manifest(folder: Path, predictor, metrics: dict) -> None:
    files = {p.name: sha256_file(p) for p in sorted(folder.iterdir()) if p.is_file() and p.name != MANIFEST}
    manifest = {
        "format_version": FORMAT_VERSION,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "label_names": list(predictor.get_classes()),
        "maxlen": int(predictor.preproc.maxlen),
        "model_id": metrics.get("model_id"),
        "versions": package_versions(),
        "metrics": {k: metrics.get(k) for k in ("accuracy", "macro_f1", "n")},
        "files": files,
    }
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2))


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


def read_manifest(folder: str | os.PathLike) -> dict:
    """Check a predictor folder against its manifest and return the manifest.

    Raises RecipesError naming the problem: no such folder, missing or corrupt files, or a
    predictor written by an incompatible version.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise RecipesError(f"predictor folder '{folder}' does not exist: pass the --out folder of a train run")
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
    except FileNotFoundError:
        raise RecipesError(f"'{folder}' has no {MANIFEST}: it is not a predictor saved by ktrain_recipes") from None
    except json.JSONDecodeError:
        raise RecipesError(f"'{folder}/{MANIFEST}' is corrupt: re-run train to recreate the predictor") from None
    if manifest.get("format_version") != FORMAT_VERSION:
        raise RecipesError(
            f"'{folder}' was saved in predictor format {manifest.get('format_version')}, this version reads "
            f"format {FORMAT_VERSION}: upgrade ktrain_recipes or re-train"
        )
    _check_versions(folder, manifest.get("versions", {}))
    for name, digest in manifest["files"].items():
        if not (folder / name).is_file():
            raise RecipesError(f"'{folder}' is missing {name}: the predictor is incomplete, re-run train")
        if sha256_file(folder / name) != digest:
            raise RecipesError(f"'{folder}/{name}' does not match its checksum (corrupt or edited): re-run train")
    return manifest


def _check_versions(folder: Path, saved: dict) -> None:
    now = package_versions()
    for name in ("transformers", "tensorflow", "ktrain"):
        if saved.get(name, "").split(".")[:2] != now[name].split(".")[:2]:
            raise RecipesError(
                f"'{folder}' was saved with {name} {saved.get(name)}, this environment has {now[name]}: "
                "install the pinned requirements.txt or re-train"
            )


def load_predictor(folder: str | os.PathLike, batch_size: int = 32):
    """Load a saved predictor after checking its manifest (see ``read_manifest``)."""
    read_manifest(folder)
    import ktrain

    predictor = ktrain.load_predictor(str(folder), batch_size=batch_size)
    predictor.preproc.model_name = str(folder)  # tokenizer files live beside the weights
    return predictor


def load_any_predictor(folder: str | os.PathLike, fast: bool = False):
    """Load the ktrain predictor, or with ``fast`` its int8 ONNX copy (same predict interface)."""
    if fast:
        from .fast import load_fast_predictor

        return load_fast_predictor(folder)
    return load_predictor(folder)


def check_texts(texts) -> list[str]:
    """Validate prediction input: a non-empty list of non-blank strings.

    Empty or whitespace-only texts are rejected rather than given a meaningless label.
    """
    if isinstance(texts, str):
        texts = [texts]
    if not isinstance(texts, (list, tuple)) or not texts:
        raise RecipesError("give at least one text to classify (a string or a list of strings)")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise RecipesError(f"text {i} is a {type(text).__name__}, not a string: pass strings only")
        if not text.strip():
            raise RecipesError(f"text {i} is empty or only whitespace: there is nothing to classify")
    return list(texts)


def token_lengths(tokenizer, texts: list[str]) -> list[int]:
    """Return the number of tokens (with special tokens) of each text, before truncation."""
    return [len(ids) for ids in tokenizer(list(texts), truncation=False)["input_ids"]]


def predict(predictor, texts, proba: bool = False, chunk: int = 256):
    """Predict labels (or, with ``proba``, a texts x labels probability array) for texts.

    Texts are predicted in chunks of similar length, since ktrain pads each call to its longest
    text. Texts longer than the predictor's maxlen are truncated; a note says how many.
    """
    texts = check_texts(texts)
    lengths = np.array(token_lengths(predictor.preproc.get_tokenizer(), texts))
    n_long = int((lengths > predictor.preproc.maxlen).sum())
    if n_long:
        print(f"note: {n_long} of {len(texts)} texts exceed maxlen={predictor.preproc.maxlen} tokens "
              "and were truncated", file=sys.stderr)
    order = np.argsort(lengths, kind="stable")
    probs = np.empty((len(texts), len(predictor.get_classes())), dtype=np.float32)
    for start in range(0, len(texts), chunk):
        idx = order[start:start + chunk]
        probs[idx] = np.asarray(predictor.predict([texts[i] for i in idx], return_proba=True)).reshape(len(idx), -1)
    if proba:
        return probs
    return [predictor.get_classes()[i] for i in probs.argmax(axis=1)]


def time_inference(predict_fn, texts: list[str], n_single: int = 50, warmup: int = 3) -> dict:
    """Time batch throughput and single-text latency (p50/p95 after warm-up).

    Args:
      predict_fn: a function from a list of texts to predictions.
      texts: texts to classify; all of them for throughput, the first n_single one by one.
    """
    for text in texts[:warmup]:
        predict_fn([text])
    start = time.perf_counter()
    predict_fn(texts)
    batch_s = time.perf_counter() - start
    single = []
    for text in texts[:n_single]:
        t0 = time.perf_counter()
        predict_fn([text])
        single.append((time.perf_counter() - t0) * 1000)
    return {
        "n": len(texts),
        "throughput_per_s": len(texts) / batch_s,
        "ms_per_text": batch_s * 1000 / len(texts),
        "latency_p50_ms": float(np.percentile(single, 50)),
        "latency_p95_ms": float(np.percentile(single, 95)),
    }


def folder_size_mb(folder: str | os.PathLike, pattern: str = "*") -> float:
    """Return the size of the files in a folder matching pattern, in MB."""
    return sum(p.stat().st_size for p in Path(folder).glob(pattern) if p.is_file()) / 1e6
