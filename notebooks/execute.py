"""Execute a notebook in place (cwd: notebooks/) and record which cell sources its outputs came from.

Committed outputs must come from a real run: `EMOTION_DATA=... python notebooks/execute.py
notebooks/00_quickstart.ipynb`. It then cleans the outputs as notebooks/clean_outputs.py does (no stderr, progress
bars collapsed). `--until TEXT` runs the cells before the first code cell holding TEXT and leaves the rest without
outputs (for a notebook whose later cells need what the machine lacks, e.g. `--until kr.resolve_model(`).
`--python PATH` runs the kernel in another environment's interpreter (it needs ipykernel), e.g. notebook 10 on the
Keras 3 road without TensorFlow: `KERAS_BACKEND=jax ... execute.py notebooks/10_keras3_keras_hub.ipynb --python
.venv-keras3-jax/bin/python`.
tests/test_notebooks.py checks the recorded digest against the current cells, so a stale output fails.
"""

import importlib.util
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent


def load(name: str):
    """A module of this folder (the notebooks folder is not a package)."""
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


sync, clean_outputs = load("sync"), load("clean_outputs")

if os.environ.get("KTRAIN_RECIPES_SMOKE"):
    sys.exit("refusing to record outputs of a CI smoke run: unset KTRAIN_RECIPES_SMOKE")
args = sys.argv[1:]
until = None
if "--until" in args:
    at = args.index("--until")
    if at + 1 >= len(args):
        sys.exit("--until needs the text of the first cell not to run, e.g. --until 'kr.resolve_model('")
    until = args.pop(at + 1)
    args.pop(at)
kernel = "python3"
if "--python" in args:
    at = args.index("--python")
    if at + 1 >= len(args) or not os.access(args[at + 1], os.X_OK):
        sys.exit("--python needs the path of an interpreter with ipykernel, e.g. --python .venv-keras3-jax/bin/python")
    # a kernelspec of our own in a temporary folder: nothing is installed into any Jupyter's own folders
    specs = Path(tempfile.mkdtemp())
    (specs / "kernels" / "given-python").mkdir(parents=True)
    (specs / "kernels" / "given-python" / "kernel.json").write_text(json.dumps({
        "argv": [os.path.abspath(args[at + 1]), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": args[at + 1], "language": "python"}))
    os.environ["JUPYTER_PATH"] = os.pathsep.join(filter(None, [str(specs), os.environ.get("JUPYTER_PATH")]))
    kernel = "given-python"
    del args[at:at + 2]
if len(args) != 1:
    sys.exit("usage: python notebooks/execute.py NOTEBOOK.ipynb [--until TEXT] [--python PATH]")
path = Path(args[0])
nb = sync.read_notebook(path)
source = path.with_suffix(".py")
if source.is_file() and sync.cells(nb) != sync.cells(sync.read_source(source)[0]):
    # its outputs would be recorded as made from cells its source does not hold, and the next `make notebooks`
    # would rebuild it from the source and drop the edit
    sys.exit(f"error: {path.name} differs from its source {source.name} (cells "
             f"{sync.differing_cells(nb, sync.read_source(source)[0])}): bring an edit made in Jupyter back with "
             "make notebooks-from-ipynb, or rebuild the notebook with make notebooks, then run this again")
start = time.time()
ran = nb
# the exercises' solutions run last, on the lesson's state, so a learner can check an answer against the committed
# run (the site folds each solution, its output included, until it is opened); no lesson cell may follow one
first = next((i for i, c in enumerate(nb.cells) if c.cell_type == "code" and sync.is_solution(c.source)), None)
if first is not None and any(c.cell_type == "code" and not sync.is_solution(c.source) for c in nb.cells[first:]):
    sys.exit(f"error: {path.name} has a code cell after its first solution: exercises come after the lesson")
if until is not None:
    stop = next((i for i, c in enumerate(nb.cells) if c.cell_type == "code" and until in c.source), None)
    if stop is None:
        sys.exit(f"no code cell of {path} holds {until!r}: nothing to stop at")
    ran = nbformat.from_dict({**nb, "cells": nb.cells[:stop]})
    for cell in nb.cells[stop:]:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
# no per-cell timestamps: `make notebooks` would strip them again, a diff with nothing in it
NotebookClient(ran, timeout=None, kernel_name=kernel, record_timing=False,
               resources={"metadata": {"path": str(path.parent)}}).execute()
nb.cells[:len(ran.cells)] = ran.cells
clean_outputs.clean(nb)
nb.metadata["ktrain_recipes"] = {"executed_sources_sha256": sync.sources_digest(sync.cells(nb))}
sync.record_written(nb)
nbformat.write(nb, path)
print(f"executed {path} in {time.time() - start:.0f} s")
