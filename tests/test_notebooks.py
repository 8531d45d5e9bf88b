"""The committed notebooks match their one source and carry no machine paths; nbval runs them (make test)."""

import importlib.util
import json
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
spec = importlib.util.spec_from_file_location("build_notebooks", NOTEBOOKS / "build_notebooks.py")
build = importlib.util.module_from_spec(spec)
spec.loader.exec_module(build)
EXPECTED = build.notebooks()


def test_every_notebook_is_committed():
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_notebook_matches_its_generator(name):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    assert build.sources(nb) == list(EXPECTED[name]), f"{name} is stale: run python notebooks/build_notebooks.py"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_outputs_hold_no_machine_paths(name):
    text = json.dumps([c.get("outputs", []) for c in nbformat.read(NOTEBOOKS / name, as_version=4).cells])
    for marker in ["/work/", "/root/", "/home/", "/tmp/"]:
        assert marker not in text, f"{name} output mentions {marker}: re-run or strip outputs"


@pytest.mark.parametrize("name", [n for n in EXPECTED if n[:2] in ("01", "02", "03", "04")])
def test_model_notebooks_draw_every_plot(name):
    code = "\n".join(src for kind, src in EXPECTED[name] if kind == "code")
    for step in ["setup_notebook", "plot_label_distribution", "plot_token_lengths", "find_lr", "plot_lr_find",
                 "fit(", "plot_history", "report_table", "plot_confusion_matrix", "time_inference",
                 "save_predictor", "load_predictor"]:
        assert step in code, step
