"""Loading never runs the folder's pickle, the manifest covers the whole folder, derived ONNX files stay
derived, and loads stay whole while another process saves into the folder."""

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import ktrain_recipes as kr
from ktrain_recipes.data.loading import EMOTION_LABELS
from ktrain_recipes import RecipesError
from ktrain_recipes_tools import cli
from ktrain_recipes.inference.onnx_inference import export_onnx, load_int8_predictor
from ktrain_recipes.predictor.manifest import MANIFEST, write_manifest
from ktrain_recipes.predictor.saved import read_manifest

from predictor_copies import plant_payload


TEXTS = ["i feel so happy today", "i am terrified of the dark", "this makes me furious", "i feel alone"]


@pytest.fixture
def planted(exported, tmp_path):
    folder, marker = plant_payload(exported, tmp_path)
    read_manifest(folder)  # the manifest check passes: it guards against damage, not against an author
    return folder, marker


def test_a_planted_pickle_never_runs_in_our_loaders(planted, small_data, tmp_path, capsys):
    folder, marker = planted
    reference = kr.classify(kr.load_checked_predictor(folder), TEXTS)
    assert kr.classify(load_int8_predictor(folder), TEXTS)
    assert cli.main(["predict", "--predictor", str(folder), *TEXTS]) == 0
    assert cli.main(["predict", "--predictor", str(folder), "--int8", *TEXTS]) == 0
    assert cli.main(["evaluate", "--predictor", str(folder), "--data", str(small_data)]) == 0
    assert cli.main(["export", "--predictor", str(folder)]) == 0
    assert not marker.exists()
    assert reference == kr.classify(kr.load_checked_predictor(folder), TEXTS)
    # the payload is real: asking for the pickle by name runs it
    # (the pickle gives back an int where ktrain expects its preprocessor: the load then fails in one line)
    with pytest.raises(RecipesError, match="cannot load"):
        kr.load_checked_predictor(folder, unpickle_preproc=True)
    assert marker.read_text() == "pwned"


def test_the_rebuilt_predictor_matches_ktrains_own_load(exported):
    rebuilt = kr.load_checked_predictor(exported)
    pickled = kr.load_checked_predictor(exported, unpickle_preproc=True)
    assert rebuilt.get_classes() == pickled.get_classes() == EMOTION_LABELS
    assert rebuilt.preproc.maxlen == pickled.preproc.maxlen
    assert rebuilt.preproc.use_token_type_ids == pickled.preproc.use_token_type_ids
    np.testing.assert_allclose(rebuilt.predict(TEXTS, return_proba=True), pickled.predict(TEXTS, return_proba=True),
                               atol=1e-6)


def test_the_manifest_covers_the_whole_folder(exported, tmp_path):
    folder = tmp_path / "copy"
    shutil.copytree(exported, folder)
    manifest = json.loads((folder / MANIFEST).read_text())
    (folder / MANIFEST).write_text(json.dumps({**manifest, "files": {}}))
    with pytest.raises(RecipesError, match="file list is empty"):
        read_manifest(folder)
    (folder / MANIFEST).write_text(json.dumps(manifest))
    (folder / "extra.py").write_text("print('hi')")
    with pytest.raises(RecipesError, match="holds 'extra.py', which its manifest does not list"):
        read_manifest(folder)
    (folder / "extra.py").unlink()
    read_manifest(folder)


def test_a_damaged_onnx_file_disables_only_the_int8_path_and_export_repairs_it(exported, tmp_path, capsys):
    folder = tmp_path / "copy"
    shutil.copytree(exported, folder)
    (folder / "model.int8.onnx").write_bytes(b"half-written")
    assert kr.classify(kr.load_checked_predictor(folder), TEXTS)  # the source model is untouched
    with pytest.raises(RecipesError, match="damaged.*export --predictor .* rebuilds it"):
        load_int8_predictor(folder)
    assert cli.main(["evaluate", "--predictor", str(folder), "--limit", "12"]) in (0, 1)  # loads (data may vary)
    (folder / "model.onnx").unlink()
    with pytest.raises(RecipesError, match="rebuilds it"):
        load_int8_predictor(folder, int8=False)
    export_onnx(folder)
    assert kr.classify(load_int8_predictor(folder), TEXTS)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy"]  # export staged beside it and left nothing


def test_an_int8_file_damaged_but_still_valid_onnx_is_refused_by_its_digest(exported, tmp_path):
    # damage a parser cannot see: the largest int8 weight table zeroed in place. onnxruntime loads the file and it
    # answers (the size and graph are unchanged), so only the manifest's digest tells that it is not the export
    import onnx
    import onnxruntime as ort
    from onnx import numpy_helper

    folder = tmp_path / "copy"
    shutil.copytree(exported, folder)
    model = onnx.load(str(folder / "model.int8.onnx"))
    tables = [t for t in model.graph.initializer if t.data_type == onnx.TensorProto.INT8]
    table = max(tables, key=lambda t: int(np.prod(t.dims)))
    zeroed = numpy_helper.from_array(np.zeros_like(numpy_helper.to_array(table)), table.name)
    table.CopyFrom(zeroed)
    onnx.save(model, str(folder / "model.int8.onnx"))
    ort.InferenceSession(str(folder / "model.int8.onnx"), providers=["CPUExecutionProvider"])  # it still loads
    with pytest.raises(RecipesError, match="damaged.*export --predictor .* rebuilds it"):
        load_int8_predictor(folder)
    assert kr.classify(kr.load_checked_predictor(folder), TEXTS)  # the source model still answers


def test_export_into_a_read_only_folder_is_one_line(exported, tmp_path, capsys):
    import subprocess

    disk = tmp_path / "ro"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(disk)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        shutil.copytree(exported, disk / "pred")
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)  # read-only even for root
        assert cli.main(["export", "--predictor", str(disk / "pred")]) == 1
        assert "read-only" in capsys.readouterr().err
    finally:
        subprocess.run(["umount", str(disk)])


def test_a_ranker_folder_is_named_not_crashed(exported, tmp_path):
    folder = tmp_path / "ranker"
    shutil.copytree(exported, folder)
    manifest = json.loads((folder / MANIFEST).read_text())
    write_manifest(folder, ["score"], manifest["maxlen"], {"model_id": "x"}, kind="ranker")
    with pytest.raises(RecipesError, match="utilitarianism ranker"):
        kr.load_checked_predictor(folder)
    with pytest.raises(RecipesError, match="utilitarianism ranker"):
        load_int8_predictor(folder)


# Each swap is a save as ours are: the files of one of two predictors, a fresh manifest (new save_id), a swap.
WRITER = """
import sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[5])
from predictor_copies import save_copy
out, sources, seconds = Path(sys.argv[1]), [Path(p) for p in sys.argv[2:4]], float(sys.argv[4])
n, end = 0, time.monotonic() + seconds
while time.monotonic() < end:
    save_copy(sources[n % 2], out)
    n += 1
    # 100-300 ms between saves: a load retries until it fits between two saves (it never mixes them), so
    # saves closer together than a load takes (tens of ms on an idle CPU, more on a busy one) starve it;
    # real saves are seconds apart
    time.sleep(0.1 + 0.05 * (n % 5))
print(n)
"""


@pytest.mark.slow
def test_loads_racing_a_writer_see_one_whole_predictor(exported, twin, tmp_path):
    expected = kr.classify(load_int8_predictor(exported), TEXTS)
    assert kr.classify(load_int8_predictor(twin), TEXTS) == expected
    assert load_int8_predictor(twin).classes == list(reversed(load_int8_predictor(exported).classes))
    out = tmp_path / "live"
    shutil.copytree(exported, out)
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(out), str(exported), str(twin), "60",
                               str(Path(__file__).parent)],
                              stdout=subprocess.PIPE, text=True)
    loads, labels_seen, end = 0, set(), time.monotonic() + 55
    try:
        while time.monotonic() < end:
            predictor = load_int8_predictor(out)
            assert kr.classify(predictor, TEXTS) == expected  # never one save's labels with the other's weights
            labels_seen.add(tuple(predictor.classes))
            loads += 1
        ktrain_predictor = kr.load_checked_predictor(out)  # the TensorFlow loader too, while swaps go on
        assert kr.classify(ktrain_predictor, TEXTS) == expected
    finally:
        swaps = int(writer.communicate(timeout=60)[0])
    assert writer.returncode == 0 and swaps >= 200, swaps
    assert loads >= 20 and len(labels_seen) == 2  # both saves were loaded, each whole


@pytest.fixture
def small_disk(tmp_path):
    """A 512 KB tmpfs (a small predictor fits, its ONNX files do not), where this machine lets the tests mount one."""
    import subprocess

    mount = tmp_path / "disk"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mount)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here (needs root): the disk-full case is not exercised")
    yield mount
    subprocess.run(["umount", str(mount)])


def test_a_full_disk_gives_one_line_errors_and_keeps_the_old_predictor(tiny_predictor, small_data,
                                                                         small_disk, capsys):
    old = small_disk / "pred"
    shutil.copytree(tiny_predictor, old)
    before = {p.name: p.read_bytes() for p in old.iterdir()}
    model = json.loads((tiny_predictor / "metrics.json").read_text())["settings"]["model"]
    assert cli.main(["train", "--model", model, "--data", str(small_data), "--out", str(old), "--overwrite",
                     "--epochs", "1", "--lr", "1e-3"]) == 1
    err = capsys.readouterr().err
    assert "MB free where --out" in err and "Traceback" not in err
    assert cli.main(["export", "--predictor", str(old)]) == 1  # the ONNX files do not fit beside it
    assert "free some space" in capsys.readouterr().err
    assert sorted(p.name for p in small_disk.iterdir()) == ["pred"]  # no staging folder, no checkpoint
    assert {p.name: p.read_bytes() for p in old.iterdir()} == before
    assert kr.classify(kr.load_checked_predictor(old), TEXTS)
    filler = small_disk / "filler"  # the disk full to its last byte: the metrics JSON cannot be written
    with open(filler, "wb", buffering=0) as f, pytest.raises(OSError):
        while True:
            f.write(b"\0" * 4096)
    assert cli.main(["evaluate", "--predictor", str(old), "--data", str(small_data),
                     "--json", str(small_disk / "scores.json")]) == 1
    err = capsys.readouterr().err
    assert "cannot write" in err and "free some space" in err and "Traceback" not in err
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler", "pred"]  # no partial file left


# a folder whose files disagree about the model is refused at load, by both paths
def test_folders_whose_files_disagree_are_refused_at_load(exported, tmp_path):
    import shutil

    from predictor_copies import rewrite_manifest

    def edited(name, change):
        folder = tmp_path / name
        shutil.copytree(exported, folder)
        change(folder)
        rewrite_manifest(folder)  # as an author would: the hashes match the edited files
        return folder

    def config_edit(key, value):
        def change(folder):
            config = json.loads((folder / "config.json").read_text())
            config[key] = value
            (folder / "config.json").write_text(json.dumps(config))
        return change

    layers = json.loads((exported / "config.json").read_text())["num_hidden_layers"]
    cases = {
        "fewer": (config_edit("num_hidden_layers", layers + 1), f"declares {layers + 1} layers but tf_model.h5"),
        "huge": (config_edit("num_hidden_layers", 3000), "declares 3000 layers"),
        "positions": (config_edit("max_position_embeddings", 8), "past the model's 8 positions"),
        "vocab": (config_edit("vocab_size", 10), "past the model's vocabulary of 10"),
    }
    for name, (change, message) in cases.items():
        folder = edited(name, change)
        for load in (kr.load_checked_predictor, lambda f: kr.open_predictor(f, int8=True)):
            with pytest.raises(RecipesError, match=message):
                load(folder)


@pytest.mark.parametrize("where", ["manifest.json", "metrics.json"])
def test_a_fifo_in_a_predictor_folder_is_refused_at_once_by_every_reader(tiny_predictor, tmp_path, where):
    """serve --backend auto, compare, train --resume and train --overwrite read these files: none waits on a FIFO."""
    import os
    import shutil
    import subprocess
    import sys
    import time

    folder = tmp_path / "pred"
    shutil.copytree(tiny_predictor, folder)
    (folder / where).unlink()
    os.mkfifo(folder / where)
    start = time.monotonic()
    from ktrain_recipes.predictor.manifest import read_metrics, unchecked_manifest
    from ktrain_recipes.errors import RecipesError

    if where == "manifest.json":
        assert unchecked_manifest(folder) == {}
        from ktrain_recipes_tools.service.model import load_model

        with pytest.raises(RecipesError):
            load_model(folder, "auto")
    else:
        with pytest.raises(RecipesError, match="not readable JSON"):
            read_metrics(folder)
        result = subprocess.run([sys.executable, "-m", "ktrain_recipes", "compare", "--runs", str(tmp_path)],
                                capture_output=True, text=True, timeout=60)
        assert "Traceback" not in result.stderr
    assert time.monotonic() - start < 30
