"""The course's record of its committed runs (docs/results.json): the one place every page and notebook reads a
quoted figure from, so that a figure is written once, by the run that made it (scripts/record_result.py)."""

from __future__ import annotations

from pathlib import Path


def committed_results() -> str | None:
    """The results we committed (docs/results.json) in the checkout this package runs from (a clone, as the
    notebooks' install cell makes on Colab), whatever the working directory; None when it is not there."""
    path = Path(__file__).resolve().parents[1] / "docs" / "results.json"
    return str(path) if path.is_file() else None
