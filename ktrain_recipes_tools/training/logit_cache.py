"""A teacher's logits kept per text, so that the runs of one teacher compute each text's logits once.

Distilling with several seeds (or several numbers of altered copies) asks the same teacher for the logits of the same
16,000 training texts and the same validation texts every time; only the altered copies change. For a base-size
teacher on a CPU that is most of a run's time outside training. ``--logits-cache DIR`` keeps them in ``DIR``: one
``.npz`` per teacher save (named by its manifest's ``save_id``, which every save draws anew, so a teacher trained or
saved again never reads another's logits), holding the sha256 of each text and its logits.

A text found there is not computed again. Its logits are those of the run that computed it, in the batch it fell in
then: another batch pads it to another length, which moves a logit by float rounding only (the padding is masked).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Callable

import numpy as np

from ktrain_recipes.errors import RecipesError, note


def text_keys(texts: list) -> np.ndarray:
    """The sha256 of each text, as 64 hex characters: of its UTF-8 bytes, or for a sentence pair of its parts as a
    JSON list (marked apart, so that no single text shares a pair's key)."""
    def key(t) -> bytes:
        return t.encode("utf-8") if isinstance(t, str) else b"pair:" + json.dumps(list(t)).encode("utf-8")
    return np.array([hashlib.sha256(key(t)).hexdigest() for t in texts], dtype="U64")


def cache_file(folder: str | Path, save_id: str) -> Path:
    """Where the logits of the teacher save ``save_id`` are kept in ``folder``."""
    if not save_id or not save_id.isalnum():
        raise RecipesError(f"the teacher's manifest has no usable save_id ({save_id!r}): save it again with this "
                           "version, or leave --logits-cache out")
    return Path(folder) / f"teacher-{save_id}.npz"


def check_cache_folder(folder: str | Path, out: str | Path | None, teacher: str | Path) -> None:
    """Refuse, before any logits are computed, a cache that could not keep them or would damage a folder: a file,
    a folder inside the student's ``--out`` or the teacher's predictor (neither may hold anything their manifest
    does not list), or one this process cannot write."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise RecipesError(f"--logits-cache '{folder}' is a file, not a folder: name a folder (it is made if missing)")
    where = folder.resolve()
    for name, owner in (("--out", out), ("the teacher's folder", teacher)):
        if owner and (where == Path(owner).resolve() or Path(owner).resolve() in where.parents):
            raise RecipesError(f"--logits-cache '{folder}' is inside {name} '{owner}', which holds a predictor and "
                               "nothing else: keep the cache in a folder of its own")
    existing = next((p for p in [where, *where.parents] if p.exists()), None)
    if existing is not None and not os.access(existing, os.W_OK | os.X_OK):
        raise RecipesError(f"--logits-cache '{folder}' cannot be written ('{existing}' is read-only to you): choose "
                           "another folder, or leave --logits-cache out")


def read_kept(path: Path, num_labels: int) -> dict[str, np.ndarray]:
    """The logits kept in ``path`` by text key; empty when there are none. A file that is not a cache of this
    teacher's shape (cut by a crash, written by something else) is set aside with a note, never trusted; anything
    but a regular file there (a FIFO would block the read for ever) is refused."""
    import stat

    try:
        mode = os.stat(path, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return {}
    if not stat.S_ISREG(mode):
        raise RecipesError(f"the logits cache '{path}' is not a regular file (a FIFO, a device or a link): remove "
                           "it, or leave --logits-cache out")
    try:
        with np.load(path, allow_pickle=False) as f:
            keys, logits = f["keys"], f["logits"]
        if logits.ndim != 2 or logits.shape != (len(keys), num_labels) or not np.isfinite(logits).all():
            raise ValueError(f"logits of shape {logits.shape} for {len(keys)} texts and {num_labels} labels")
    except Exception as e:  # noqa: BLE001 - any unreadable file is set aside the same way
        aside = path.with_name(path.name + ".unreadable")
        os.replace(path, aside)
        note(f"note: the logits cache '{path}' could not be read ({type(e).__name__}: {e}); moved to '{aside.name}', "
             "computing the logits again")
        return {}
    return dict(zip(keys.tolist(), logits))


def write_kept(path: Path, kept: dict[str, np.ndarray]) -> None:
    """Write ``kept`` to ``path`` whole, through a file beside it: a reader sees the old cache or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial.npz")
    keys = np.array(list(kept), dtype="U64")
    np.savez(partial, keys=keys, logits=np.stack([kept[k] for k in keys.tolist()]).astype(np.float32))
    os.replace(partial, path)


def cached_logits(folder: str | Path, save_id: str, texts: list, num_labels: int,
                  compute: Callable[[list[int]], np.ndarray]) -> np.ndarray:
    """The teacher's logits for ``texts``, in their order: those kept in ``folder`` for this save are read, and
    ``compute(indices)`` is called once for the texts missing (it returns their logits in the order of
    ``indices``), which are then kept. Two runs filling one cache at once each keep what they found and computed."""
    path = cache_file(folder, save_id)
    keys = text_keys(texts).tolist()
    kept = read_kept(path, num_labels)
    found = sum(k in kept for k in keys)
    first = {}
    for i, k in enumerate(keys):
        first.setdefault(k, i)
    missing = [i for k, i in first.items() if k not in kept]  # each missing text once, in the order given
    if missing:
        new = np.asarray(compute(missing), dtype=np.float32)
        if new.shape != (len(missing), num_labels):
            raise ValueError(f"compute returned logits of shape {new.shape} for {len(missing)} texts")
        kept = {**read_kept(path, num_labels), **kept, **{keys[i]: z for i, z in zip(missing, new)}}
        try:
            write_kept(path, kept)
        except OSError as exc:  # a full or read-only disk: the logits are computed, the run goes on without keeping
            partial = path.with_name(f".{path.name}.{os.getpid()}.partial.npz")
            partial.unlink(missing_ok=True)
            note(f"note: the teacher's logits could not be kept in '{path.parent}' ({exc.strerror}): the run goes on; "
                 "the next run computes them again")
    note(f"teacher logits: {found} of {len(texts)} texts read from '{path}', {len(missing)} computed")
    return np.stack([kept[k] for k in keys])
