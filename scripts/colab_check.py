"""Run the notebooks' install cell in a real kernel of a Colab-like Python 3.13 environment (made by
`make colab-check` from .ci/colab-runtime.txt), against this checkout, and check what a learner would see.

1. A kernel that has imported numpy, pandas and matplotlib (as Colab's does) runs the install cell: it must
   install everything, keep those three at the runtime's versions, and say "no restart needed".
2. A kernel whose loaded numpy is no longer the one on disk after pip ran (as when pip replaces a loaded
   package) must restart, and its one-line message must reach the cell's output before the kernel goes.
Run with the Colab-like environment's own Python: `build/colab-venv/bin/python scripts/colab_check.py`.
"""

from __future__ import annotations

import importlib.metadata as metadata
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import DeadKernelError

ROOT = Path(__file__).resolve().parent.parent
INSTALL = (ROOT / "notebooks" / "shared" / "install_cell.py").read_text()  # the cell, which runs install.py
PRELOAD = "import numpy, pandas, matplotlib  # as Colab's kernel does at start-up"


def run_cells(sources: list[str], work: Path) -> tuple[list[str], bool]:
    """Execute cells in a fresh kernel in ``work``; return each cell's text output, and whether the kernel died."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    client = NotebookClient(nb, kernel_name="python3", timeout=1800, resources={"metadata": {"path": str(work)}})
    died = False
    try:
        client.execute()
    except DeadKernelError:
        died = True
    texts = ["".join(o.get("text", "") for o in cell.get("outputs", [])) for cell in nb.cells]
    return texts, died


def main() -> int:
    before = {name: metadata.version(name) for name in ("numpy", "pandas", "matplotlib")}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "ktrain-recipes").symlink_to(ROOT)  # the clone the install cell would make
        texts, died = run_cells([PRELOAD, INSTALL, "import ktrain_recipes; print('imported')"], work)
        print("install cell said:", texts[1].strip()[-300:])
        after = {name: metadata.version(name) for name in before}
        assert not died, "the kernel died: the install cell restarted where it need not"
        assert "no restart needed" in texts[1], texts[1][-2000:]
        assert after == before, f"pip replaced the runtime's packages: {before} -> {after}"
        assert "imported" in texts[2]
        # 2. a loaded numpy that pip changes on disk: the cell restarts, and says so first
        pip = [sys.executable, "-m", "pip", "install", "-q"]
        subprocess.run([sys.executable, "-m", "pip", "uninstall", "-q", "-y", "ktrain_recipes"], check=True)
        older = "2.1.2" if before["numpy"] != "2.1.2" else "2.1.1"
        texts, died = run_cells([PRELOAD, f"import subprocess, sys\nsubprocess.run({pip!r} + ['numpy=={older}'], "
                                 "check=True)", INSTALL], work)
        print("install cell said:", texts[2].strip()[-300:])
        assert died, "the kernel lived on with a replaced numpy loaded"
        assert "Restarting the runtime: pip replaced numpy" in texts[2], texts[2][-2000:]
        subprocess.run(pip + [f"numpy=={before['numpy']}"], check=True)  # back to the runtime's own
        subprocess.run(pip + ["--no-deps", "-e", str(ROOT)], check=True)
    print("colab check passed: no restart needed with Colab's versions; a needed restart says so first")
    return 0


if __name__ == "__main__":
    sys.exit(main())
