"""The suite's own distribution: under `pytest -n 2 --dist loadgroup` (make test) the tests of one group run on one
worker. tests/conftest.py relies on it for the Ray tests and for the fixtures it builds once."""

import os
import subprocess
import sys
from pathlib import Path

HOOKS = f"""
import importlib.util
spec = importlib.util.spec_from_file_location("suite_conftest", {str(Path(__file__).with_name("conftest.py"))!r})
suite = importlib.util.module_from_spec(spec)
spec.loader.exec_module(suite)
pytest_collection_modifyitems = suite.pytest_collection_modifyitems
pytest_collection_modifyitems_group_ids = suite.pytest_collection_modifyitems_group_ids
"""

TESTS = """
import os
import pytest

# even numbers start Ray (the mark only: the group is what is checked), odd ones do not, in turn
@pytest.mark.parametrize("i", [pytest.param(i, marks=pytest.mark.ray) if i % 2 == 0 else i for i in range(16)])
def test_one(i):
    with open(os.path.join(os.environ["GROUPS_OUT"], str(i)), "w") as f:
        f.write(os.environ["PYTEST_XDIST_WORKER"])
"""


def test_the_tests_of_one_group_run_on_one_worker(tmp_path):
    """Eight Ray tests, each between two others, all land on one worker."""
    (tmp_path / "conftest.py").write_text(HOOKS)
    (tmp_path / "test_groups.py").write_text(TESTS)
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    ray: starts Ray\n")
    run = subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-p", "no:cacheprovider",
                          "--basetemp", str(tmp_path / "base"), "-q", str(tmp_path)],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "GROUPS_OUT": str(tmp_path)})
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    workers = {i: (tmp_path / str(i)).read_text() for i in range(16)}
    assert len({workers[i] for i in range(0, 16, 2)}) == 1, workers
    assert len(set(workers.values())) == 2, workers  # the others were spread: both workers ran tests


def test_a_test_that_hangs_fails_instead_of_holding_the_run(request, tmp_path):
    # pytest-timeout with the suite's own limit (pyproject.toml): a hang fails its test, and the run goes on
    assert request.config.pluginmanager.hasplugin("timeout"), "pytest-timeout is not installed (requirements-dev.txt)"
    limit = float(request.config.getini("timeout"))
    assert 0 < limit <= 1800, f"the per-test limit is {limit} s: set timeout in pyproject.toml"
    (tmp_path / "test_hang.py").write_text("import time\n\ndef test_hang():\n    time.sleep(120)\n\n"
                                           "def test_after():\n    pass\n")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "timeout=2",
                          str(tmp_path)], capture_output=True, text=True, timeout=90, cwd=tmp_path)
    assert run.returncode == 1 and "1 failed, 1 passed" in run.stdout and "Timeout" in run.stdout, run.stdout[-2000:]
