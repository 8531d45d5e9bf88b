"""The house's bounds, walked: one call followed function by function through the modules it enters
(benchmarks/load_walk.py), its stays counted and held to today's figures, so that a change that sends the learner's
run or the service's load back and forth through more rooms fails here, with the figure, not in a later review."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# today's figures as the bounds: run_recipe(config) on a tiny BERT walks 69 stays in 27 rooms (63-64 on 2026-11-29,
# before several labels per text; issue 81's target is 35), the int8 load of a served predictor 18
MAX_RECIPE_STAYS = 69
MAX_LOAD_STAYS = 20


def walked(*args: str) -> tuple[int, str]:
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "load_walk.py"), *args], capture_output=True,
                         text=True, timeout=900, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-3000:]
    found = re.findall(r"^(?:run_recipe: )?(\d+) stays in \d+ rooms", run.stdout, re.M)
    assert len(found) == 1, run.stdout[-3000:]
    return int(found[0]), run.stdout[max(0, run.stdout.rfind(" stays in") - 20):]  # the figure's line and the walk


@pytest.mark.slow
def test_the_learners_run_walks_at_most_its_bound_in_stays(tiny_models, small_data):
    stays, out = walked("--recipe", tiny_models["bert"], "--data", str(small_data))
    assert "some in the tools package" not in out, "run_recipe entered the tools package"
    assert stays <= MAX_RECIPE_STAYS, (f"run_recipe walks {stays} stays, over the bound of {MAX_RECIPE_STAYS}: a "
                                       f"step that sends the run back and forth belongs with its caller\n{out}")


@pytest.mark.slow
def test_the_services_load_walks_at_most_its_bound_in_stays(exported):
    stays, out = walked(str(exported), "--backend", "int8")
    assert stays <= MAX_LOAD_STAYS, f"the int8 load walks {stays} stays, over the bound of {MAX_LOAD_STAYS}\n{out}"
    assert "manifest.json opened 1 times" in out
