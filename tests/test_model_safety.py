"""CVE-2026-4372: a model whose config.json names a kernel repository or remote code is refused before transformers
reads it, and so is an environment where the package ``kernels`` can be imported."""

import json
import shutil
import subprocess
import sys

import pytest

from ktrain_recipes.errors import RecipesError
from ktrain_recipes.model_safety import check_config, check_model_folder, unsafe_keys
from ktrain_recipes.models import resolve_model

CRAFTED = [
    {"_attn_implementation_internal": "attacker/kernel@main:run"},
    {"attn_implementation": "attacker/kernel"},
    {"_attn_implementation": "attacker/kernel:fn"},
    {"auto_map": {"AutoModel": "modeling_evil.EvilModel"}},
    {"text_config": {"attn_implementation": "attacker/kernel"}},
    {"attn_implementation": ["sdpa"]},
    {"trust_remote_code": True},  # CVE-2026-5241
    {"trust_remote_code": "true"},
    {"text_config": {"trust_remote_code": 1}},
    {"sub_configs": [{"model_type": "bert"}, {"trust_remote_code": True}]},
]


@pytest.mark.parametrize("extra", CRAFTED, ids=[next(iter(c)) + str(i) for i, c in enumerate(CRAFTED)])
def test_a_crafted_local_model_is_refused_before_transformers_reads_it(tiny_models, tmp_path, extra):
    folder = tmp_path / "crafted"
    shutil.copytree(tiny_models["bert"], folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, **extra}))
    with pytest.raises(RecipesError, match="CVE-2026-4372") as error:
        resolve_model(str(folder))
    assert "\n" not in str(error.value)


def test_the_shipped_attention_implementations_pass():
    for value in (None, "eager", "sdpa", "flash_attention_2"):
        check_config({"model_type": "bert", "attn_implementation": value, "_attn_implementation_internal": value},
                     "ok")
    assert unsafe_keys({"model_type": "bert", "hidden_size": 32}) == []
    assert unsafe_keys({"model_type": "bert", "trust_remote_code": False, "text_config": {"trust_remote_code": None}}) \
        == []


def test_a_crafted_model_is_refused_by_the_command_line_in_one_line(tiny_models, tmp_path, small_data):
    folder = tmp_path / "crafted"
    shutil.copytree(tiny_models["bert"], folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "_attn_implementation_internal": "a/b@c:d"}))
    result = subprocess.run([sys.executable, "-m", "ktrain_recipes", "train", "--model", str(folder), "--data",
                             str(small_data), "--out", str(tmp_path / "out"), "--epochs", "1"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 1, result.stderr[-2000:]
    assert "CVE-2026-4372" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()


def test_an_installed_kernels_package_is_refused(tiny_models, tmp_path, monkeypatch):
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "__init__.py").write_text("")
    (tmp_path / "kernels-0.17.0.dist-info").mkdir()  # what pip leaves: the distribution transformers asks for
    (tmp_path / "kernels-0.17.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: kernels\n"
                                                                   "Version: 0.17.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(RecipesError, match="pip uninstall kernels"):
        check_model_folder(tiny_models["bert"])


def test_a_projects_own_kernels_folder_or_module_is_not_the_package(tiny_models, tmp_path, monkeypatch):
    """Battery v6 W87: a kernels/ folder or kernels.py in the working folder (a project's GPU kernels, an SVM
    exercise) blocked every training; transformers itself asks for the installed distribution, as we now do."""
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    check_model_folder(tiny_models["bert"])  # no error


def test_a_config_that_is_a_fifo_is_refused_at_once(tmp_path):
    import os
    import time

    folder = tmp_path / "model"
    folder.mkdir()
    os.mkfifo(folder / "config.json")
    start = time.monotonic()
    with pytest.raises(RecipesError, match="not a regular file"):
        check_model_folder(folder)
    assert time.monotonic() - start < 5
