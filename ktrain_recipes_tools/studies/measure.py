"""What the studies and benchmarks write beside a figure: the machine in words, a process's memory, a folder's size."""

from __future__ import annotations

import os
from pathlib import Path

from ktrain_recipes.versions import cpu_model


def describe_machine(gpus: int = 0) -> str:
    """This machine in words, for figure captions and result files: "2-core <CPU model>, no GPU"."""
    return f"{os.cpu_count()}-core {cpu_model()}, " + (f"{gpus} GPU(s)" if gpus else "no GPU")


def process_rss_mb(pid: int | None = None, children: bool = False) -> float:
    """Resident memory of a process (this one by default), with its children's when ``children`` is set, in MB."""
    import psutil

    proc = psutil.Process(pid)
    rss = proc.memory_info().rss
    if children:
        rss += sum(c.memory_info().rss for c in proc.children(recursive=True))
    return rss / 2**20


def folder_size_mb(folder: str | os.PathLike, pattern: str = "*") -> float:
    """Return the size of the files in a folder matching pattern, in MB."""
    return sum(p.stat().st_size for p in Path(folder).glob(pattern) if p.is_file()) / 1e6
