"""Execute a notebook in place (cwd: notebooks/), for refreshing committed outputs.

`make notebooks` runs the smoke versions of 01-06 and commits their (labelled) outputs; the quickstart's
committed outputs come from a real run: `EMOTION_DATA=... python notebooks/execute.py
notebooks/00_quickstart.ipynb`, then `python notebooks/clean_outputs.py notebooks/00_quickstart.ipynb`.
"""

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

path = Path(sys.argv[1])
nb = nbformat.read(path, as_version=4)
start = time.time()
NotebookClient(nb, timeout=None, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
nbformat.write(nb, path)
print(f"executed {path} in {time.time() - start:.0f} s")
