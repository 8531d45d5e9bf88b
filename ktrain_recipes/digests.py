"""The sha256 of a file, read safely: the one digest function of predictors, the offline MPNet and the caches."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path


def sha256_file(path: Path) -> str:
    """Return the hex sha256 of a regular file, read in 1 MB blocks (a base-size model's weights are about 440 MB).
    Opened without following a link and without waiting on a FIFO: anything but a regular file is a ValueError."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise ValueError(f"'{path}' is not a regular file")
        h = hashlib.sha256()
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
