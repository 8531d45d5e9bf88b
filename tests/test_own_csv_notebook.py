"""Notebook 04 runs top to bottom on a learner's own CSV that the repository does not ship: other column names,
whole-number labels, a byte-order mark, Windows line endings and quoted commas (smoke mode: a tiny model)."""

import json
import random
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def learners_csv(path: Path, rows: int = 90) -> Path:
    """A CSV as a spreadsheet saves it: BOM, CRLF, a quoted text with commas, labels 0/1/2 under other names."""
    rng = random.Random(7)
    words = {0: "sad lonely tired awful", 1: "happy glad lovely great", 2: "angry furious annoyed mad"}
    lines = ["message,mood"]
    for i in range(rows):
        mood = i % 3
        text = " ".join(rng.choice(words[mood].split()) for _ in range(6))
        lines.append(f'"{text}, really, {i}",{mood}')
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode("utf-8-sig"))
    return path


@pytest.mark.slow
def test_notebook_04_runs_on_a_csv_it_does_not_ship(tmp_path, monkeypatch):
    import nbformat
    from nbclient import NotebookClient

    import tiny_models as tiny

    data = learners_csv(tmp_path / "mine.csv")
    models = {name: tiny.tiny_model(family) for name, family in tiny.stand_ins().items() if name == "minilm"}
    settings = {**tiny.SMOKE_SETTINGS, "data": str(data), "text_column": "message", "label_column": "mood",
                "batch_size": 8}
    smoke = tmp_path / "smoke.json"
    smoke.write_text(json.dumps({"models": models, "settings": settings}))
    startup = tmp_path / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    startup.joinpath("00-smoke.py").write_text((ROOT / "tests" / "notebook_smoke.py").read_text())
    monkeypatch.setenv("KTRAIN_RECIPES_SMOKE", str(smoke))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    nb = nbformat.read(ROOT / "notebooks" / "04_your_own_data.ipynb", as_version=4)
    work = tmp_path / "work"
    work.mkdir()
    NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(work)}}).execute()
    text = json.dumps([c.get("outputs", []) for c in nb.cells if c.cell_type == "code"])
    assert "tweet" not in text and "feeling" not in text  # nothing of the shipped file's columns leaked in
    # the label names are the file's own (whole numbers), and the new rows were labelled with them
    assert '"0"' in text or "'0'" in text
