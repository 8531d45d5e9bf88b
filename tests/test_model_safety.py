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


def hub_snapshot(tiny_bert: str, cache):
    """A model laid out as the hub client lays it out: ``models--acme--tiny/snapshots/REV/NAME`` links to
    ``../../blobs/SHA``, ``refs/main`` holds REV."""
    import hashlib
    from pathlib import Path

    repo, rev = cache / "hub" / "models--acme--tiny", "0" * 40
    (repo / "blobs").mkdir(parents=True)
    (repo / "snapshots" / rev).mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(rev)
    for path in Path(tiny_bert).iterdir():
        data = path.read_bytes()
        blob = hashlib.sha256(data).hexdigest()
        (repo / "blobs" / blob).write_bytes(data)
        (repo / "snapshots" / rev / path.name).symlink_to(f"../../blobs/{blob}")
    return repo / "snapshots" / rev


def test_a_hub_snapshot_whose_files_are_links_into_its_blobs_is_accepted(tiny_models, tmp_path):
    folder = hub_snapshot(tiny_models["bert"], tmp_path)
    assert (folder / "config.json").is_symlink()
    check_model_folder(folder)
    assert resolve_model(str(folder)) == str(folder)


def test_a_config_linking_out_of_the_model_folder_is_refused_saying_so(tiny_models, tmp_path):
    folder = tmp_path / "model"
    shutil.copytree(tiny_models["bert"], folder)
    elsewhere = tmp_path / "elsewhere.json"
    (folder / "config.json").rename(elsewhere)
    (folder / "config.json").symlink_to(elsewhere)
    with pytest.raises(RecipesError, match="is a link to .*outside the model folder") as error:
        check_model_folder(folder)
    assert "\n" not in str(error.value)
    snapshot = hub_snapshot(tiny_models["bert"], tmp_path / "cache")  # a snapshot's link may not leave its repo
    (snapshot / "config.json").unlink()
    (snapshot / "config.json").symlink_to(elsewhere)
    with pytest.raises(RecipesError, match="outside the model folder"):
        check_model_folder(snapshot)


@pytest.mark.parametrize("template", [
    [{"name": "../../x", "template": "{{ m }}"}],
    [{"name": "default", "template": "a"}, {"name": "sub/x", "template": "b"}],
    {"..": "{{ m }}"},
    [{"name": "..\\x", "template": "a"}],
])
@pytest.mark.parametrize("file", ["tokenizer_config.json", "chat_template.json"])
def test_a_chat_template_named_to_leave_the_folder_is_refused(tiny_models, tmp_path, template, file):
    """CVE-2026-9856: ``save_pretrained`` writes ``<folder>/<name>.jinja`` unchecked (ktrain's save calls it)."""
    folder = tmp_path / "model"
    shutil.copytree(tiny_models["bert"], folder)
    path = folder / file
    config = json.loads(path.read_text()) if path.exists() else {}
    path.write_text(json.dumps({**config, "chat_template": template}))
    with pytest.raises(RecipesError, match="CVE-2026-9856") as error:
        resolve_model(str(folder))
    assert "\n" not in str(error.value)


def test_plainly_named_chat_templates_pass(tiny_models, tmp_path):
    folder = tmp_path / "model"
    shutil.copytree(tiny_models["bert"], folder)
    config = json.loads((folder / "tokenizer_config.json").read_text())
    config["chat_template"] = [{"name": "default", "template": "a"}, {"name": "tool_use", "template": "b"}]
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    check_model_folder(folder)
