"""The pinned set installs on Python 3.11-3.13, and `pip install .` gives a working package (slow: pip)."""

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCE_ONLY = ("ktrain",)  # pure-Python sdists: pip cannot resolve them for another Python without building
PLATFORMS = ["manylinux2014_x86_64", "manylinux_2_27_x86_64", "manylinux_2_28_x86_64"]


def _pip(*args, **kwargs):
    return subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True, **kwargs)


@pytest.mark.parametrize("python", ["3.11", "3.12", "3.13"])
def test_every_compiled_pin_has_a_wheel_for(python, tmp_path):
    lines = [*(ROOT / "requirements.txt").read_text().splitlines(),
             *(ROOT / "requirements-serve.txt").read_text().splitlines()]
    pins = [line for line in lines if line and not line.startswith("#") and not line.startswith(SOURCE_ONLY)]
    (tmp_path / "req.txt").write_text("\n".join(pins))
    platforms = [arg for p in PLATFORMS for arg in ("--platform", p)]
    proc = _pip("install", "--dry-run", "--quiet", "--ignore-installed", "--python-version", python, *platforms,
                "--only-binary=:all:", "-r", str(tmp_path / "req.txt"), "-c", str(ROOT / "constraints.txt"))
    assert proc.returncode == 0, proc.stderr[-2000:]


@pytest.mark.slow
def test_pip_install_dot_gives_a_working_command(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # The pinned stack is this environment's, seen through a .pth file: pip checks pyproject's dependencies against
    # it and the constraints (a missing one is installed into the new venv, a conflicting one fails), and installs
    # the package itself. Installing the 3 GB stack again (4-8 minutes of CI) would test only what building .venv
    # from requirements.txt already did; pip never uninstalls what lies outside the new environment.
    purelib = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = subprocess.run([str(venv / "bin" / "python"), "-c", purelib], capture_output=True, text=True, check=True)
    ours = subprocess.run([sys.executable, "-c", purelib], capture_output=True, text=True, check=True)
    (Path(site.stdout.strip()) / "pinned_stack.pth").write_text(ours.stdout)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    proc = subprocess.run(pip + [str(ROOT), "-c", str(ROOT / "constraints.txt")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    env = {**os.environ, "PYTHONPATH": ""}
    version = subprocess.run([str(venv / "bin" / "ktrain-recipes"), "--version"], capture_output=True, text=True,
                             env=env, cwd=tmp_path)
    expected = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert version.returncode == 0 and version.stdout.startswith(f"ktrain-recipes {expected}"), version.stderr[-1000:]
    check = subprocess.run([str(venv / "bin" / "python"), "-c", "import ktrain_recipes, ktrain; "
                            "print(ktrain_recipes.RecipeConfig().model)"], capture_output=True, text=True, env=env,
                           cwd=tmp_path)
    assert check.stdout.strip() == "minilm", check.stderr[-1000:]
