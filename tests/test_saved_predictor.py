"""A predictor folder is read once, as one value, by one rule (``predictor.saved``): every load opens its
manifest.json once, chooses its backend from that read, and refuses what the rule refuses without waiting."""

import builtins
import re
import os
import shutil
import time
from pathlib import Path

import pytest

import ktrain_recipes as kr
from ktrain_recipes.errors import RecipesError
from ktrain_recipes.predictor.manifest import MANIFEST, write_manifest
from ktrain_recipes.predictor.saved import SavedPredictor, read_predictor


@pytest.fixture
def manifest_opens(monkeypatch):
    """Counts every open of a file named manifest.json, by any means Python offers (os.open, open)."""
    seen = []
    real_os_open, real_open = os.open, builtins.open

    def counting_os_open(path, *args, **kwargs):
        if Path(os.fsdecode(path)).name == MANIFEST:
            seen.append(path)
        return real_os_open(path, *args, **kwargs)

    def counting_open(file, *args, **kwargs):
        if isinstance(file, (str, bytes, os.PathLike)) and Path(os.fsdecode(file)).name == MANIFEST:
            seen.append(file)
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", counting_os_open)
    monkeypatch.setattr(builtins, "open", counting_open)
    return seen


def test_a_ktrain_load_opens_the_manifest_once_and_keeps_what_it_read(tiny_predictor, manifest_opens):
    predictor = kr.load_checked_predictor(tiny_predictor)
    assert len(manifest_opens) == 1, manifest_opens
    saved = predictor.saved
    assert isinstance(saved, SavedPredictor) and saved.folder == Path(tiny_predictor)
    assert saved.label_names == predictor.get_classes() and saved.metrics["accuracy"] == saved.manifest["metrics"][
        "accuracy"]
    assert saved.backends == ("ktrain",) and saved.is_current()


@pytest.mark.parametrize("backend", ["auto", "int8", "ktrain"])
def test_a_service_load_opens_the_manifest_once_and_chooses_from_that_read(exported, manifest_opens, backend):
    from ktrain_recipes_tools.service.model import load_model

    model = load_model(exported, backend)
    assert len(manifest_opens) == 1, manifest_opens
    assert model.identity["backend"] == ("ktrain" if backend == "ktrain" else "int8")
    assert model.digest == read_predictor(exported).digest and model.metrics["accuracy"] is not None


def test_an_int8_load_opens_the_manifest_once(exported, manifest_opens):
    predictor = kr.open_predictor(exported, int8=True)
    assert len(manifest_opens) == 1 and predictor.saved.backends == ("ktrain", "onnx-fp32", "int8")


def test_a_new_save_makes_the_value_stale_without_reading_the_folder(tiny_predictor, tmp_path, manifest_opens):
    folder = tmp_path / "pred"
    shutil.copytree(tiny_predictor, folder)
    saved = read_predictor(folder)
    manifest_opens.clear()
    assert saved.is_current() and not manifest_opens  # asked with a stat, not a read
    write_manifest(folder, saved.label_names, saved.maxlen, saved.metrics)  # a new save: a fresh save_id
    assert not saved.is_current() and read_predictor(folder).digest != saved.digest


def refused_at_once(folder: Path, match: str) -> None:
    start = time.monotonic()
    with pytest.raises(RecipesError, match=match):
        read_predictor(folder)
    assert time.monotonic() - start < 10  # a FIFO is never waited on


@pytest.mark.parametrize("name", [MANIFEST, "config.json", "metrics.json"])
def test_a_fifo_in_place_of_a_file_is_refused_at_once(tiny_predictor, tmp_path, name):
    folder = tmp_path / "pred"
    shutil.copytree(tiny_predictor, folder)
    (folder / name).unlink()
    os.mkfifo(folder / name)
    refused_at_once(folder, "not a regular file")


def test_a_link_to_a_file_outside_is_refused_even_with_the_right_digest(tiny_predictor, tmp_path):
    folder = tmp_path / "pred"
    shutil.copytree(tiny_predictor, folder)
    outside = tmp_path / "config.json"
    shutil.copy(folder / "config.json", outside)  # same bytes, so the same sha256
    (folder / "config.json").unlink()
    (folder / "config.json").symlink_to(outside)
    refused_at_once(folder, r"config.json' is not a regular file \(a link")  # never followed, wherever it points
    (folder / "config.json").unlink()
    shutil.copy(outside, folder / "config-copy.json")  # a link that stays inside the folder is refused too
    (folder / "config.json").symlink_to("config-copy.json")
    refused_at_once(folder, "config-copy.json|not a regular file")


def test_a_damaged_derived_file_disables_only_its_backend(exported, tmp_path):
    folder = tmp_path / "pred"
    shutil.copytree(exported, folder)
    (folder / "model.int8.onnx").write_bytes(b"not a model")
    saved = read_predictor(folder)  # the folder itself is whole
    with pytest.raises(RecipesError, match="export --predictor"):
        saved.derived("model.int8.onnx")
    assert saved.derived("model.onnx").is_file()
    from ktrain_recipes_tools.service.model import load_model

    assert load_model(folder, "auto").identity["backend"] == "ktrain"
    with pytest.raises(RecipesError, match="export --predictor"):
        load_model(folder, "int8")


def test_an_edited_metrics_json_is_refused_by_its_checksum(tiny_predictor, tmp_path):
    import json

    folder = tmp_path / "edited"
    shutil.copytree(tiny_predictor, folder)
    metrics = json.loads((folder / "metrics.json").read_text())
    metrics["accuracy"] = 0.999  # a better figure than the run measured
    (folder / "metrics.json").write_text(json.dumps(metrics))
    with pytest.raises(RecipesError, match="metrics.json' does not match its checksum"):
        read_predictor(folder)
    with pytest.raises(RecipesError, match="does not match its checksum"):
        kr.open_predictor(folder)


@pytest.mark.parametrize("changes, said", [
    ({"maxlen": -5}, "maxlen -5 is not a whole number of tokens from 8 to 512"),
    ({"maxlen": 0}, "maxlen 0 is not a whole number"),
    ({"maxlen": 2.5}, "maxlen 2.5 is not a whole number"),
    ({"label_names": "xy"}, "label_names 'xy' is not a list of names"),
    ({"label_names": ["a", "a"]}, "label_names names a label twice"),
    ({"label_names": ["", " "]}, "label_names holds '', not a name"),
    ({"label_names": [1, 2]}, "label_names holds 1, not a name"),
])
def test_a_re_signed_manifest_with_values_train_never_writes_is_refused_in_one_line(tiny_predictor, tmp_path,
                                                                                    changes, said):
    """Battery v6 W27: re-signed as an author would (labels_sha256 recomputed), maxlen -5 gave an OverflowError
    traceback, maxlen 0 or 2.5 loaded and read 0 or 2 tokens, and odd label lists were accepted."""
    import json

    from ktrain_recipes.predictor.manifest import labels_digest

    folder = tmp_path / "re-signed"
    shutil.copytree(tiny_predictor, folder)
    manifest = json.loads((folder / MANIFEST).read_text())
    manifest.update(changes)
    manifest["labels_sha256"] = labels_digest(manifest["label_names"], manifest["maxlen"])
    (folder / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(RecipesError, match=re.escape(said)) as error:
        read_predictor(folder)
    assert "is corrupt" in str(error.value) and "\n" not in str(error.value)
