"""Converted-model caches that know their source (issue 52 §3): an entry is used only when its record says it was made
from the files its source holds now and its own files are as written; otherwise it is made again, with a note."""

import shutil
from pathlib import Path

import numpy as np
import pytest

from ktrain_recipes import model_cache
from tiny_models import tiny_keras_hub_bert


@pytest.fixture(scope="module")
def tiny_source() -> Path:
    """The tiny BERT in safetensors, built in the tests' shared cache before a test points the cache elsewhere."""
    return Path(tiny_keras_hub_bert())


@pytest.fixture
def cache(tmp_path, monkeypatch, tiny_source) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("KTRAIN_RECIPES_CACHE", str(folder))
    return folder


@pytest.fixture
def local_model(tiny_source):
    """Makes a tiny BERT folder in safetensors (PyTorch names) where asked, as a user's local model would be."""
    def make(where: Path) -> Path:
        where.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(tiny_source, where, ignore=shutil.ignore_patterns(model_cache.RECORD))
        return where
    return make


def rescale_weights(folder: Path, factor: float) -> None:
    from safetensors.numpy import load_file, save_file

    tensors = load_file(str(folder / "model.safetensors"))
    save_file({k: (v * factor).astype(v.dtype) for k, v in tensors.items()}, str(folder / "model.safetensors"))


def converted(folder: Path) -> Path:
    """The TF checkpoint a local model folder is trained from (``resolve_model``'s answer)."""
    from ktrain_recipes.models import resolve_model

    return Path(resolve_model(str(folder)))


def word_embeddings(tf_folder: Path) -> np.ndarray:
    import h5py

    with h5py.File(tf_folder / "tf_model.h5") as f:
        found = []
        f.visititems(lambda name, obj: found.append(np.array(obj)) if "word_embeddings" in name
                     and isinstance(obj, h5py.Dataset) else None)
    return found[0]


def test_a_local_model_whose_weights_changed_is_converted_again(tmp_path, cache, capsys, local_model):
    folder = local_model(tmp_path / "models" / "mine")
    first = converted(folder)
    assert first.parent == cache and (first / model_cache.RECORD).is_file()
    before = word_embeddings(first)
    assert converted(folder) == first and "making it again" not in capsys.readouterr().err  # used as it is

    rescale_weights(folder, 2.0)
    again = converted(folder)
    assert "was made from other files than its source holds now: making it again" in capsys.readouterr().err
    np.testing.assert_allclose(word_embeddings(again), 2.0 * before, rtol=1e-6)


def test_two_folders_whose_paths_end_alike_get_their_own_conversions(tmp_path, cache, local_model):
    tail = "x" * 90 + "/model"  # the old key, the path's last 80 characters, was the same for both
    a, b = local_model(tmp_path / "a" / tail), local_model(tmp_path / "b" / tail)
    rescale_weights(b, 3.0)
    converted_a, converted_b = converted(a), converted(b)
    assert converted_a != converted_b
    np.testing.assert_allclose(word_embeddings(converted_b), 3.0 * word_embeddings(converted_a), rtol=1e-6)


@pytest.mark.parametrize("damage", ["swapped weights", "cut weights", "no record", "damaged record", "a file"])
def test_a_damaged_or_foreign_entry_is_made_again_with_a_note(tmp_path, cache, capsys, local_model, damage):
    folder = local_model(tmp_path / "mine")
    entry = converted(folder)
    want = word_embeddings(entry)
    weights = entry / "tf_model.h5"
    if damage == "swapped weights":
        other = local_model(tmp_path / "other")
        rescale_weights(other, 5.0)
        shutil.copyfile(converted(other) / "tf_model.h5", weights)
    elif damage == "cut weights":
        weights.write_bytes(weights.read_bytes()[:1000])
    elif damage == "no record":
        (entry / model_cache.RECORD).unlink()
    elif damage == "damaged record":
        (entry / model_cache.RECORD).write_text("[1, 2]")
    else:
        shutil.rmtree(entry)
        entry.write_text("not a folder")
    capsys.readouterr()
    again = converted(folder)
    assert again == entry and "making it again" in capsys.readouterr().err
    np.testing.assert_allclose(word_embeddings(again), want)
    assert not list(cache.glob("*.stale-*"))  # the stale entry is gone, not left beside it


def test_an_mpnet_tf_entry_made_from_another_model_is_not_used(tmp_path, cache, monkeypatch, capsys, local_model):
    """A tiny BERT's conversion put where the offline MPNet's goes is made again, never trained as MPNet."""
    from ktrain_recipes import models
    shutil.copytree(converted(local_model(tmp_path / "tiny")), cache / "mpnet-tf")
    made = []
    monkeypatch.setattr(models, "_hub_copy", lambda name, instead: None)
    monkeypatch.setattr("ktrain_recipes.mpnet.unpack_mpnet", lambda where: made.append(where) or where / "mpnet-src")
    monkeypatch.setattr(models, "convert_to_tf", lambda src, dst: made.append(dst) or dst)
    assert models.mpnet_folder() == cache / "mpnet-tf"
    assert made == [cache, cache / "mpnet-tf"]  # unpacked and converted again
    assert "mpnet-tf' was made from other files" in capsys.readouterr().err


def test_entry_names_keep_the_path_readable_and_unique():
    a = model_cache.entry_name(Path("/data/a/" + "y" * 100))
    b = model_cache.entry_name(Path("/data/b/" + "y" * 100))
    assert a != b and a.startswith("y" * 40) and len(a) <= 73


def test_a_cache_that_cannot_be_written_is_named_in_one_line(tmp_path, cache, local_model, monkeypatch):
    """Battery v6 W64: a read-only KTRAIN_RECIPES_CACHE gave an OSError traceback from mkdtemp."""
    import tempfile

    from ktrain_recipes.errors import RecipesError

    folder = local_model(tmp_path / "models" / "mine")

    def read_only(*args, **kwargs):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(tempfile, "mkdtemp", read_only)
    with pytest.raises(RecipesError, match=r"cannot write the converted model into the cache '.*cache' \(Read-only "
                                           r"file system\): set KTRAIN_RECIPES_CACHE to a writable folder"):
        converted(folder)
