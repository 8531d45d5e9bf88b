import json
import shutil

import pytest

import ktrain_recipes as kr
from ktrain_recipes import RecipesError
from ktrain_recipes.predictor import check_texts, read_manifest, save_predictor, time_inference


@pytest.mark.parametrize("texts, message", [
    ([], "at least one text"),
    (["fine", "   "], "text 1 is empty"),
    (["fine", 3], "text 1 is a int"),
    (None, "at least one text"),
])
def test_bad_prediction_input_is_rejected(texts, message):
    with pytest.raises(RecipesError, match=message):
        check_texts(texts)


def test_a_single_string_is_a_list_of_one():
    assert check_texts("hello") == ["hello"]


def test_manifest_records_labels_versions_and_hashes(tiny_predictor):
    manifest = read_manifest(tiny_predictor)
    assert manifest["label_names"] == kr.EMOTION_LABELS
    assert {"tf_model.h5", "tf_model.preproc", "metrics.json", "config.json"} <= set(manifest["files"])
    assert manifest["versions"]["ktrain"] == "0.41.4" and manifest["maxlen"] >= 8


@pytest.fixture
def copy(tiny_predictor, tmp_path):
    target = tmp_path / "copy"
    shutil.copytree(tiny_predictor, target)
    return target


def test_corrupt_missing_or_incompatible_predictors_are_named(copy):
    with open(copy / "tf_model.h5", "r+b") as f:
        f.seek(1000)
        f.write(b"garbage")
    with pytest.raises(RecipesError, match="tf_model.h5' does not match its checksum"):
        kr.load_predictor(copy)
    (copy / "tf_model.h5").unlink()
    with pytest.raises(RecipesError, match="missing tf_model.h5"):
        kr.load_predictor(copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["versions"]["transformers"] = "3.0.0"
    (copy / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(RecipesError, match="saved with transformers 3.0.0"):
        read_manifest(copy)
    (copy / "manifest.json").write_text("{not json")
    with pytest.raises(RecipesError, match="corrupt"):
        read_manifest(copy)
    with pytest.raises(RecipesError, match="does not exist"):
        read_manifest(copy / "nope")


def test_failed_save_keeps_the_previous_predictor(tiny_predictor, copy):
    predictor = kr.load_predictor(copy)
    before = sorted(p.name for p in copy.iterdir())

    class Exploding:
        preproc = predictor.preproc

        def get_classes(self):
            return predictor.get_classes()

        def save(self, folder):
            predictor.save(folder)
            raise KeyboardInterrupt  # killed half-way through writing

    with pytest.raises(KeyboardInterrupt):
        save_predictor(Exploding(), copy, {"accuracy": 0}, overwrite=True)
    assert sorted(p.name for p in copy.iterdir()) == before
    read_manifest(copy)  # still whole
    assert [p.name for p in copy.parent.iterdir()] == ["copy"]  # no partial folder left


def test_overwrite_replaces_atomically(tiny_predictor, copy):
    predictor = kr.load_predictor(copy)
    with pytest.raises(RecipesError, match="--overwrite"):
        save_predictor(predictor, copy, {"accuracy": 0.5})
    save_predictor(predictor, copy, {"accuracy": 0.5, "model_id": "x"}, overwrite=True)
    assert read_manifest(copy)["metrics"]["accuracy"] == 0.5


def test_long_texts_are_truncated_and_counted(tiny_predictor, capsys):
    predictor = kr.load_predictor(tiny_predictor)
    labels = kr.predict(predictor, ["short", "very long " * 400])
    assert len(labels) == 2
    assert "1 of 2 texts exceed maxlen" in capsys.readouterr().err


def test_time_inference_counts_calls():
    calls = []
    result = time_inference(lambda texts: calls.append(len(texts)), ["a", "b", "c", "d"], n_single=2, warmup=1)
    assert calls == [1, 4, 1, 1] and result["n"] == 4 and result["latency_p95_ms"] >= result["latency_p50_ms"]
