"""Exercises: each notebook's 'Try this' is exercises with hidden solution cells, which the smoke runs of `make test`
execute (so a solution that stops working fails the suite) and a recorded run leaves to the learner."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
spec = importlib.util.spec_from_file_location("sync", NOTEBOOKS / "sync.py")
sync = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sync)
NAMES = sorted(source.with_suffix(".ipynb").name for source in sync.sources())


def solutions(nb) -> list:
    return [c for c in nb.cells if c.cell_type == "code" and sync.is_solution(c.source)]


def test_at_least_eight_notebooks_have_two_or_more_solutions():
    counts = {name: len(solutions(nbformat.read(NOTEBOOKS / name, as_version=4))) for name in NAMES}
    with_exercises = [name for name, count in counts.items() if count >= 2]
    assert len(with_exercises) >= 8, counts


@pytest.mark.parametrize("name", NAMES)
def test_solutions_are_hidden_tagged_and_come_after_the_lesson(name):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    tagged = [c for c in code if "solution" in c.metadata.get("tags", [])]
    assert tagged == solutions(nb), f"{name}: a cell tagged solution must start with {sync.SOLUTION!r}, and back"
    for cell in tagged:
        # Colab shows a form cell's title and hides its code; Jupyter collapses a source_hidden input
        assert cell.metadata.get("cellView") == "form", f"{name}: a solution Colab would show"
        assert cell.metadata.get("jupyter", {}).get("source_hidden") is True, f"{name}: a solution Jupyter shows"
        if cell.get("outputs"):  # a recorded run executes the solutions last, after every lesson cell ran
            assert any(c.get("outputs") for c in code if c not in tagged), f"{name}: a solution ran without the lesson"
    if tagged:
        first = code.index(tagged[0])
        assert all(sync.is_solution(c.source) for c in code[first:]), (
            f"{name}: a lesson cell after an exercise: the exercises come after every lesson cell")
        before = nb.cells[nb.cells.index(tagged[0]) - 1]
        assert before.cell_type == "markdown" and "Exercise" in before.source, f"{name}: a solution with no exercise"


def test_a_solution_changes_nothing_a_recorded_run_made():
    lesson = [("code", "x = 1"), ("md", "**Exercise 1.**")]
    solved = [*lesson, ("code", sync.SOLUTION + "\nprint(x + 1)")]
    assert sync.sources_digest(solved) == sync.sources_digest(lesson)
    assert sync.sources_digest([*lesson, ("code", "print(x + 1)")]) != sync.sources_digest(lesson)


def execute(path: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("KTRAIN_RECIPES_SMOKE", "IPYTHONDIR")}
    return subprocess.run([sys.executable, str(NOTEBOOKS / "execute.py"), str(path)], capture_output=True,
                          text=True, timeout=300, env=env)


def notebook(tmp_path: Path, *cells) -> Path:
    nb = nbformat.v4.new_notebook(cells=list(cells))
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "n.ipynb"
    nbformat.write(nb, path)
    return path


def test_a_recorded_run_executes_the_solutions_last_and_so_does_the_smoke_run(tmp_path):
    new_code, new_md = nbformat.v4.new_code_cell, nbformat.v4.new_markdown_cell
    path = notebook(tmp_path, new_code("print('lesson')"), new_md("**Exercise 1.**"),
                    new_code(sync.SOLUTION + "\nprint('solved')"))
    run = execute(path)
    assert run.returncode == 0, run.stderr
    cells = nbformat.read(path, as_version=4).cells
    # what the solution finds on the committed run is there for the learner to check (folded with it on the site)
    assert [o.text for o in cells[0].outputs] == ["lesson\n"] and [o.text for o in cells[2].outputs] == ["solved\n"]
    broken = notebook(tmp_path, new_code("x = 1"), new_md("**Exercise 1.**"),
                      new_code(sync.SOLUTION + "\nraise ValueError('this solution broke')"))
    smoke = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval-lax",
                            "--nbval-current-env", f"--rootdir={tmp_path}", str(broken)],
                           capture_output=True, text=True, timeout=300,
                           env={k: v for k, v in os.environ.items() if k not in ("KTRAIN_RECIPES_SMOKE", "IPYTHONDIR")})
    assert smoke.returncode == 1 and "this solution broke" in smoke.stdout


def test_a_lesson_cell_after_a_solution_is_refused(tmp_path):
    path = notebook(tmp_path, nbformat.v4.new_code_cell(sync.SOLUTION + "\nprint(1)"),
                    nbformat.v4.new_code_cell("print('lesson')"))
    run = execute(path)
    assert run.returncode == 1 and "after its first solution" in run.stderr
