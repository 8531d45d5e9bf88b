"""Converted-model caches that know their source.

A conversion (a safetensors folder made into a TF checkpoint, a BERT renamed for KerasHub) is kept in the cache and
used again only when it still is what it claims: its record, ``made_from.json``, names the sha256 of every file it was
made from and of every file it holds. A local model whose weights changed, two folders whose paths end alike, an entry
whose files were swapped or cut: each is made again, with a one-line note, instead of being trained on.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

from ktrain_recipes.digests import sha256_file
from ktrain_recipes.errors import note

RECORD = "made_from.json"


def folder_digests(folder: Path, names: list[str] | None = None) -> dict[str, str]:
    """The sha256 of each regular file of ``folder`` (or of those of ``names`` it has), by file name."""
    paths = [folder / n for n in names] if names is not None else sorted(folder.iterdir())
    # a hub snapshot's files are links into its blob store: the digest is of the file a link names
    return {p.name: sha256_file(p.resolve()) for p in paths if p.is_file() and p.name != RECORD}


def entry_name(path: Path) -> str:
    """A cache entry's name for the folder ``path``: its last 60 characters, readable, and a digest of its whole
    absolute path, so that two folders whose paths end alike never share an entry."""
    full = str(path.resolve())
    return full.strip("/").replace("/", "_")[-60:] + "-" + hashlib.sha256(full.encode()).hexdigest()[:12]


def seal(staging: Path, source: dict[str, str]) -> None:
    """Write the record of a conversion just made in ``staging``: what it was made from and what it holds."""
    (staging / RECORD).write_text(json.dumps({"source": source, "files": folder_digests(staging)}, indent=1))


def usable(entry: Path, source: dict[str, str]) -> bool:
    """True when ``entry`` holds a conversion of exactly ``source`` (file name -> sha256; the files compared are
    those ``source`` names) whose files are as they were written. An entry that is not (made from other files,
    changed since, cut, or written before entries had records) is moved aside and removed, with a note, and False
    is returned: the caller makes it again."""
    if not entry.exists() and not entry.is_symlink():
        return False
    why = _stale(entry, source)
    if why is None:
        return True
    note(f"note: the cached conversion '{entry}' {why}: making it again")
    discard(entry)
    return False


def _stale(entry: Path, source: dict[str, str]) -> str | None:
    if entry.is_symlink() or not entry.is_dir():
        return "is not a folder"
    try:
        record = json.loads((entry / RECORD).read_text())
        made_from, files = record["source"], record["files"]
    except FileNotFoundError:
        return "has no record of what it was made from (an older version's)"
    except (OSError, ValueError, KeyError, TypeError):
        return "has a damaged record"
    if not isinstance(made_from, dict) or not isinstance(files, dict) or not files:
        return "has a damaged record"
    if any(made_from.get(name) != digest for name, digest in source.items()):
        return "was made from other files than its source holds now"
    for name, digest in files.items():
        path = entry / name
        if not path.is_file() or path.is_symlink() or sha256_file(path) != digest:
            return f"has a file that changed since it was made ({name})"
    return None


def discard(entry: Path) -> None:
    """Remove a stale entry: renamed aside first, so that no reader finds it half removed."""
    aside = entry.with_name(f"{entry.name}.stale-{os.getpid()}")
    try:
        os.replace(entry, aside)
    except OSError:
        return  # another process moved it already
    if aside.is_symlink() or not aside.is_dir():
        aside.unlink(missing_ok=True)
    else:
        shutil.rmtree(aside, ignore_errors=True)
