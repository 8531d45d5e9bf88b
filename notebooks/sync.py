"""`make notebooks`: rebuild each notebook's .ipynb from its source, the jupytext percent-format .py beside it.

The .py files are the notebooks' source: edit them, lint them (ruff), review them as code. This script
1. writes the step-by-step notebooks' .py (01-04, 09) from one template, notebooks/shared/step_by_step.py.in, with
   each notebook's own values from notebooks/shared/step_by_step.toml: edit those two, not the .py;
2. puts the shared install cell (notebooks/shared/install.py) into every cell tagged `install`, so it is
   written in one place;
3. writes each .ipynb with jupytext, keeping the outputs already in it only when notebooks/execute.py made
   them from exactly the current code cells (their digest is recorded in the notebook's metadata).
tests/test_notebooks.py fails when an .ipynb does not match its .py, or a step-by-step .py its template.
"""

from __future__ import annotations

import hashlib
import json
import string
import sys
import tomllib
from pathlib import Path

import jupytext
import nbformat

HERE = Path(__file__).resolve().parent
INSTALL = (HERE / "shared" / "install.py").read_text().rstrip("\n")
TEMPLATE = HERE / "shared" / "step_by_step.py.in"
STEP_VALUES = HERE / "shared" / "step_by_step.toml"


def render_step_by_step(name: str, template: str | None = None, values: dict | None = None) -> str:
    """The .py of step-by-step notebook ``name`` (e.g. 01_bert_emotion): the template with its values put in.

    A value in a comment line (markdown) gets that line's ``# `` in front of each of its lines; a value on a line of
    its own in code goes in as it is. A missing or unused value is an error, so the two files cannot drift apart.
    """
    template = TEMPLATE.read_text() if template is None else template
    values = tomllib.loads(STEP_VALUES.read_text())[name] if values is None else values
    values = {"name": name, **{k: v.strip("\n") for k, v in values.items()}}
    used = set()
    out = []
    for line in template.split("\n"):
        keys = {m.group("named") for m in string.Template.pattern.finditer(line) if m.group("named")}
        used |= keys
        prefix = "# " if line.startswith("# ") else ""
        text = string.Template(line).substitute(values)  # KeyError names a missing value
        out.append("\n".join((prefix + part if i else part).rstrip() for i, part in enumerate(text.split("\n"))))
    unused = set(values) - used - {"name"}  # the file name may go unused
    if unused:
        raise ValueError(f"{STEP_VALUES.name} [{name}]: {', '.join(sorted(unused))} not in the template")
    return "\n".join(out)


def step_by_step_names() -> list[str]:
    """The notebooks written from the template."""
    return list(tomllib.loads(STEP_VALUES.read_text()))


def sources() -> list[Path]:
    """The notebook sources: notebooks/NN_*.py."""
    return sorted(HERE.glob("[0-9][0-9]_*.py"))


def read_source(path: Path) -> tuple[nbformat.NotebookNode, bool]:
    """A notebook's source with the shared install cell filled in; and whether that changed a cell."""
    nb, changed = jupytext.read(path), False
    for cell in nb.cells:
        if "install" in cell.metadata.get("tags", []) and cell.source != INSTALL:
            cell.source, changed = INSTALL, True
    return nb, changed


def cells(nb) -> list[tuple[str, str]]:
    """The (type, source) of each cell."""
    return [("md" if c.cell_type == "markdown" else "code", c.source) for c in nb.cells]


def sources_digest(cell_list: list[tuple[str, str]]) -> str:
    """The sha256 of the code cells' sources: what committed outputs must have been made from. Prose cells
    make no outputs, so mending one keeps a real run's outputs; nor does the install cell, which does
    nothing where ktrain_recipes is installed, as it is where execute.py runs."""
    code = [list(c) for c in cell_list if c[0] == "code" and c[1] != INSTALL]
    return hashlib.sha256(json.dumps(code).encode()).hexdigest()


def executed_digest(nb) -> str | None:
    """The sources digest notebooks/execute.py recorded when it made the notebook's outputs, if any."""
    return nb.metadata.get("ktrain_recipes", {}).get("executed_sources_sha256")


def build(source: Path) -> nbformat.NotebookNode:
    """The .ipynb for ``source``: its cells, and the outputs on disk if they were made from these cells."""
    nb = read_source(source)[0]
    path = source.with_suffix(".ipynb")
    old = nbformat.read(path, as_version=4) if path.exists() else None
    fresh = old is not None and executed_digest(old) == sources_digest(cells(nb))
    kept = {c.source: c for c in old.cells if c.cell_type == "code"} if fresh else {}
    for i, cell in enumerate(nb.cells):
        cell.id = f"c{i:02d}"  # stable ids keep diffs small
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            if cell.source in kept:
                cell.outputs, cell.execution_count = kept[cell.source].outputs, kept[cell.source].execution_count
    nb.metadata.pop("jupytext", None)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    if fresh:
        nb.metadata["ktrain_recipes"] = old.metadata["ktrain_recipes"]
    return nb


if __name__ == "__main__":
    for stem in step_by_step_names():
        path = HERE / f"{stem}.py"
        if not path.exists() or path.read_text() != render_step_by_step(stem):
            path.write_text(render_step_by_step(stem))
            print("wrote", path.name, "from the step-by-step template")
    for source in sources():
        if len(sys.argv) > 1 and source.stem not in sys.argv[1:] and source.name not in sys.argv[1:]:
            continue
        nb, changed = read_source(source)
        if changed:  # the .py's install cell follows the shared one
            jupytext.write(nb, source, fmt="py:percent")
            print("updated the install cell of", source.name)
        nbformat.write(build(source), source.with_suffix(".ipynb"))
        print("wrote", source.with_suffix(".ipynb").name)
