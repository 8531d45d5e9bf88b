import shutil

import numpy as np
import pytest

import ktrain_recipes as kr
from ktrain_recipes import RecipesError
from ktrain_recipes_tools import cli
from ktrain_recipes.inference.onnx_inference import export_onnx, load_int8_predictor
from ktrain_recipes.predictor.saved import read_manifest
import json
import re
from pathlib import Path


@pytest.fixture(scope="module")
def exported(tiny_predictor, tmp_path_factory):
    folder = tmp_path_factory.mktemp("fast") / "pred"
    shutil.copytree(tiny_predictor, folder)
    with pytest.raises(RecipesError, match="has no model.int8.onnx: `ktrain-recipes export --predictor"):
        load_int8_predictor(folder)
    export_onnx(folder)
    return folder


def test_export_writes_both_models_into_the_predictor_and_its_manifest(exported):
    files = read_manifest(exported)["files"]  # also re-checks every hash
    assert {"model.onnx", "model.int8.onnx"} <= set(files)
    assert (exported / "model.int8.onnx").stat().st_size < (exported / "model.onnx").stat().st_size


def test_onnx_matches_ktrain(exported, emotion):
    texts = emotion.texts("validation")[:64]
    reference = kr.classify(kr.load_checked_predictor(exported), texts, proba=True)
    fp32 = kr.classify(load_int8_predictor(exported, int8=False), texts, proba=True)
    int8 = kr.classify(load_int8_predictor(exported), texts, proba=True)
    assert np.abs(reference - fp32).max() < 1e-4
    assert np.abs(reference - int8).max() < 0.05 and int8.shape == (64, 6)


def test_cli_fast_flags(exported, small_data, capsys):
    assert cli.main(["predict", "--predictor", str(exported), "--int8", "i am happy"]) == 0
    assert capsys.readouterr().out.strip().endswith("\ti am happy")
    assert cli.main(["evaluate", "--predictor", str(exported), "--int8", "--data", str(small_data)]) == 0
    assert "accuracy" in capsys.readouterr().out


@pytest.mark.parametrize("names", [["a", "b", "c", "d", "e"], ["a", "b", "c", "d", "e", "f", "g"]])
def test_the_int8_path_refuses_a_manifest_naming_another_number_of_labels(exported, tmp_path, names):
    """Served as it was, 5 names for 6 outputs gave 5 probabilities that no longer summed to 1 (the ktrain path
    refused it already)."""
    import shutil

    from predictor_copies import rewrite_manifest

    folder = tmp_path / "edited"
    shutil.copytree(exported, folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["label_names"] = names
    (folder / "manifest.json").write_text(json.dumps(manifest))
    rewrite_manifest(folder)  # as the folder's editor would: every checksum holds, the names do not fit
    with pytest.raises(kr.RecipesError, match=f"outputs but the manifest names {len(names)} labels"):
        load_int8_predictor(folder)


# int8 answers depend on the texts they share a call with: the cause is the per-call activation scale of dynamic
# quantization (padding and batching alone change nothing: the fp32 ONNX model answers alike), and the true figure
# and its cause are stated where the README and the scaling page send readers
def test_int8_call_dependence_comes_from_dynamic_quantization_and_is_stated(exported):
    from ktrain_recipes.inference.onnx_inference import load_int8_predictor

    texts = ["i am so happy today", "this makes me furious and i cannot stop shaking with anger at all of it",
             "i feel alone", "what a surprise", "i am terrified"] * 8
    fp32 = load_int8_predictor(exported, int8=False)
    alone = np.vstack([fp32.predict_proba([t]) for t in texts])
    assert np.abs(alone - fp32.predict_proba(texts)).max() < 1e-5
    results = (Path(__file__).resolve().parent.parent / "docs" / "results.md").read_text()
    section = results.split("## int8 answers depend on the call they are made in\n", 1)[1].split("\n## ", 1)[0]
    assert "dynamic quantization" in section and "one scale for the whole input tensor" in section
    assert re.search(r"\| int8, dynamic \(export's\) \| [\d.]+ \| \d\.\d\de-\d\d \|", section)


def test_the_conversion_runs_in_a_child_with_protobufs_python_backend(tiny_predictor, tmp_path):
    """tf2onnx under protobuf's C backend kept a copy of the weights per optimizer pass (19.2 GB for MPNet-base):
    the child converts with the pure-Python backend, and this process never imports tf2onnx for it."""
    import sys

    from google.protobuf.internal import api_implementation

    from ktrain_recipes.inference import onnx_convert

    loaded_before = "tf2onnx" in sys.modules
    converted = onnx_convert.convert_in_child(tiny_predictor, tmp_path, quantize=False)
    assert converted.protobuf == "python" != api_implementation.Type()
    assert set(converted.files) == {"fp32"} and converted.files["fp32"].parent == tmp_path
    assert converted.files["fp32"].stat().st_size > 0 and converted.inputs[:2] == ["input_ids", "attention_mask"]
    assert ("tf2onnx" in sys.modules) == loaded_before


def test_a_refusal_in_the_child_names_the_users_folder_and_changes_nothing(exported, tmp_path):
    folder = tmp_path / "pred"
    shutil.copytree(exported, folder)
    with open(folder / "tf_model.h5", "r+b") as f:  # damaged after the save: the child's checked load refuses
        f.seek(2000)
        f.write(b"\0" * 64)
    before = (folder / "manifest.json").read_bytes()
    with pytest.raises(RecipesError) as refused:
        export_onnx(folder)
    message = str(refused.value)
    assert str(folder) in message and ".partial" not in message and "\n" not in message
    assert (folder / "manifest.json").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pred"]


def test_a_killed_conversion_is_one_line_and_keeps_the_predictor(exported, tmp_path, monkeypatch):
    """The OOM killer ends the child (as it ended a notebook's kernel converting MPNet-base in-process)."""
    import sys

    folder = tmp_path / "pred"
    shutil.copytree(exported, folder)
    killed = tmp_path / "killed-python"
    killed.write_text("#!/bin/sh\nkill -9 $$\n")
    killed.chmod(0o755)
    before = (folder / "manifest.json").read_bytes()
    monkeypatch.setattr(sys, "executable", str(killed))
    with pytest.raises(RecipesError, match=r"^converting '.*/pred' to ONNX was stopped by signal 9 \(out of memory"):
        export_onnx(folder)
    assert (folder / "manifest.json").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["killed-python", "pred"]


def test_a_killed_export_takes_its_conversion_child_with_it(tiny_predictor, tmp_path):
    """An ``export`` ended by SIGKILL left its conversion child running (minutes and ~8 GB for MPNet-base)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    def alive(pid: int) -> bool:
        try:
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except FileNotFoundError:
            return False

    script = ("from ktrain_recipes.inference.onnx_convert import convert_in_child; "
              f"convert_in_child({str(tiny_predictor)!r}, {str(tmp_path)!r})")
    parent = subprocess.Popen([sys.executable, "-c", script])
    child = None
    try:
        for _ in range(600):
            children = Path(f"/proc/{parent.pid}/task/{parent.pid}/children").read_text().split()
            if children:
                child = int(children[0])
                break
            time.sleep(0.1)
        assert child, "the conversion child never started"
        time.sleep(2)  # under way (whether or not it has asked for the signal yet, it must end)
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        for _ in range(100):
            if not alive(child):
                break
            time.sleep(0.1)
        assert not alive(child), "the conversion child outlived its killed parent"
    finally:
        parent.kill()
        if child and alive(child):
            os.kill(child, signal.SIGKILL)
