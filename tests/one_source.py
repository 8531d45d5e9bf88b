"""Test-only: the figures a learner reads, held to the records they come from.

Every accuracy-like figure (``0.9325``, ``0.945``) and every time in seconds (``957 s``) in README.md,
docs/expect.md, docs/glossary.md and the notebooks' prose must be found in that notebook's own outputs or in one
record: a JSON file a run wrote under docs/ (docs/results.json among them), or the published figures the package
carries (``studies.finetuned``). And a run named in two places has the same figures in both: a sentence that names
the quickstart quotes the quickstart's record (docs/results.json, ``quickstart-3ep``), unless it names another run.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", ROOT / "docs" / "expect.md", ROOT / "docs" / "glossary.md"]
FIGURE = re.compile(r"(?<![\d.])0\.\d{2,4}(?!\d|\.\d)")  # not a version (0.41.4)
SECONDS = re.compile(r"(?<![\d.,])(\d{1,2},\d{3}|\d{2,4}) s\b")
# a sentence that names one of these is about another run than the quickstart
OTHER_RUNS = re.compile(r"MPNet|student|resum|step by step|step-by-step|\b01\b|demo|slice|Keras 3|KerasHub|"
                        r"teacher|int8|batch 8|limit|BERT|baseline|TF-IDF", re.I)


def numbers(value) -> list[float]:
    """Every number in a JSON value, however deep."""
    if isinstance(value, bool):
        return []
    if isinstance(value, (int, float)):
        return [float(value)]
    if isinstance(value, dict):
        return [n for v in value.values() for n in numbers(v)]
    if isinstance(value, list):
        return [n for v in value for n in numbers(v)]
    return []


def record_numbers(root: Path = ROOT) -> list[float]:
    """The numbers of every record: the JSON files under docs/ and the published figures."""
    from ktrain_recipes_tools.studies.finetuned import CARD_SPEED, PUBLISHED, VERIFIED

    found = [n for path in sorted((root / "docs").rglob("*.json")) for n in numbers(json.loads(path.read_text()))]
    found += [card for _, card in PUBLISHED.values()] + [v for v in VERIFIED.values() if v] + list(CARD_SPEED.values())
    return found


def matches(figure: str, values: list[float]) -> bool:
    """Whether ``figure`` (as written) is one of ``values`` rounded to the figure's precision."""
    decimals = len(figure.split(".")[1]) if "." in figure else 0
    target = float(figure.replace(",", ""))
    return any(abs(round(v, decimals) - target) < 10 ** -(decimals + 2) or
               abs(v - target) < 0.5 * 10 ** -decimals + 1e-12 for v in values)


def figures(text: str) -> list[str]:
    """The accuracy-like figures and the seconds in ``text``, as written."""
    return FIGURE.findall(text) + [m.group(1) for m in SECONDS.finditer(text)]


def sentences(text: str) -> list[str]:
    """``text`` cut into sentences (roughly: at '. ' and blank lines), line breaks joined."""
    flat = re.sub(r"\s*\n\s*(#\s*)?", " ", text)
    return [s for s in re.split(r"(?<=[.;])\s+(?=[A-Z(*\[])", flat) if s.strip()]


def unsourced(text: str, own: str, records: list[float]) -> list[str]:
    """The figures of ``text`` found neither in ``own`` (a notebook's outputs, as text) nor among ``records``."""
    own_numbers = [float(x) for x in re.findall(r"\d+\.\d+|\d+", own.replace(",", ""))]
    return [f for f in figures(text) if f not in own and not matches(f, own_numbers) and not matches(f, records)]


def named_run_disagreements(text: str, name: str, record: dict, others: re.Pattern = OTHER_RUNS) -> list[str]:
    """Figures in sentences that name run ``name`` (and no other run) that are not that run's ``record``."""
    values = numbers(record)
    bad = []
    for sentence in sentences(text):
        if name not in sentence.lower() or others.search(sentence.lower().replace(name, "")):
            continue
        bad += [f"{f} ({sentence[:90]}...)" for f in figures(sentence) if not matches(f, values)]
    return bad


def table_row_disagreements(outputs: str, label: str, record: dict) -> list[str]:
    """In a notebook's table outputs, the accuracy-like figures and seconds on the rows (or the column) labelled
    ``label`` that are not ``record``'s: a table that says "quickstart" shows the quickstart's figures."""
    values = numbers(record)
    bad = []
    row = re.compile(rf"^{re.escape(label)}\s{{2,}}")  # a bare row label: pandas pads it with spaces
    for line in outputs.replace("\\n", "\n").splitlines():
        if row.match(line.strip()):
            cells = re.findall(r"(?<![\w.])\d+\.\d+", line)
            bad += [f"{c} ({line.strip()[:90]})" for c in cells
                    if (float(c) < 1 or float(c) > 100) and not matches(str(round(float(c), 4)), values)]
    return bad


def notebook_text(path: Path) -> tuple[str, str]:
    """A notebook's prose (markdown cells) and its outputs, as text."""
    nb = nbformat.read(path, as_version=4)
    prose = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    outputs = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})  # a table's text/plain holds the same figures as its HTML, in lines
            outputs.append(out.get("text", "") if "text" in out else
                           data.get("text/plain", "") + "\n" + data.get("text/markdown", ""))
    return prose, "\n".join(outputs)


def first_column_disagreements(outputs: str, header: str, record: dict) -> list[str]:
    """In a table whose first column is headed ``header``, the first figure of each row that is not ``record``'s."""
    values = numbers(record)
    lines = outputs.replace("\\n", "\n").splitlines()
    bad = []
    for i, line in enumerate(lines):
        if header not in line or line.split(header)[0].strip():
            continue
        for row in lines[i + 1:]:
            cells = re.findall(r"(?<![\w.])\d+\.?\d*", row)
            if not row.strip() or not cells:
                break
            shown = round(float(cells[0]), 4)
            # a whole number in a float column ("3943.0000") was rounded to the unit: compare it so
            if not matches(str(int(shown)) if shown == int(shown) else str(shown), values):
                bad.append(f"{cells[0]} ({row.strip()[:90]})")
    return bad
