"""Battery v7's silent and misleading cases (X32, X27, X31, X9, X102), each with the input the battery used."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ktrain_recipes.data.loading import load_data
from ktrain_recipes.errors import RecipesError


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_a_whole_number_label_not_among_the_training_labels_is_refused_by_line(tmp_path):
    """X32: train holds stars 2-5; a test "1" was read as position 1, the class '3', without a word."""
    write(tmp_path / "train.csv", "text,label\n" + "".join(f"t{i},{2 + i % 4}\n" for i in range(20)))
    write(tmp_path / "val.csv", "text,label\nv1,2\nv2,5\n")
    write(tmp_path / "test.csv", "text,label\nok,3\none star,1\n")
    with pytest.raises(RecipesError, match=r"test.csv:3: label '1' is not in the training data \(2, 3, 4, 5\)"):
        load_data(tmp_path)


def test_given_label_names_still_read_whole_numbers_as_positions(tmp_path):
    path = write(tmp_path / "d.csv", "text,label\na,0\nb,1\nc,1\nd,0\n")
    assert load_data(path, labels=["neg", "pos"], hold_out=False).labels("train") == ["neg", "pos", "pos", "neg"]


def test_texts_shared_by_train_and_validation_are_counted_once(tmp_path, capsys):
    """X27: 12 of 12 validation texts were training texts, and nothing said so."""
    rows = "".join(f"text number {i},{'a' if i % 2 else 'b'}\n" for i in range(30))
    write(tmp_path / "train.csv", "text,label\n" + rows + "text number 0,a\n")
    write(tmp_path / "val.csv", "text,label\n" + "".join(f"text number {i},{'a' if i % 2 else 'b'}\n"
                                                          for i in range(12)))
    load_data(tmp_path)
    err = capsys.readouterr().err
    assert "12 of 12 validation texts" in err and "are also training texts" in err
    assert "1 training text(s)" in err and "two or more different labels" in err  # 'text number 0': b and a


def test_a_folder_without_overlap_says_nothing_of_it(tmp_path, capsys):
    write(tmp_path / "train.csv", "text,label\na,x\nb,y\nc,x\n")
    write(tmp_path / "val.csv", "text,label\nd,x\ne,y\n")
    load_data(tmp_path)
    assert "training texts" not in capsys.readouterr().err


@pytest.mark.parametrize("content", [",text,label\n0,i am glad,joy\n1,so sad,sad\n",  # pandas' default to_csv
                                     "text,label,\ni am glad,joy,\nso sad,sad,\n"])  # a spreadsheet's trailing comma
def test_a_csv_with_an_unnamed_column_reads(tmp_path, content):
    """X31 (regressed in v7): refused as 'cannot be read as csv (is it UTF-8 csv?)'."""
    data = load_data(write(tmp_path / "d.csv", content), hold_out=False)
    assert data.texts("train") == ["i am glad", "so sad"] and data.labels("train") == ["joy", "sad"]


def test_the_missing_extra_advice_names_no_package_an_index_could_serve(monkeypatch, capsys, tmp_path):
    """X9: 'pip install "ktrain_recipes[serve]"' would install whatever a stranger publishes under that name."""
    from ktrain_recipes_tools import cli
    from ktrain_recipes_tools.commands import serve

    def missing(args):
        raise ModuleNotFoundError("No module named 'fastapi'", name="fastapi")

    monkeypatch.setattr(serve, "run", missing)
    assert cli.main(["serve", "--predictor", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "ktrain_recipes[" not in err and "pip install -e \".[serve]\"" in err and "clone" in err


@pytest.mark.skipif(os.geteuid() != 0, reason="making a file owned by another user needs root")
def test_another_users_writers_lock_refuses_the_run_before_it_trains(tmp_path, small_data, tiny_models, capsys):
    """X102: the lock was looked at only at the save, after every epoch had trained."""
    from ktrain_recipes_tools import cli

    lock = tmp_path / ".v.lock"
    lock.write_text("")
    os.chown(lock, 4242, 4242)
    code = cli.main(["train", "--model", tiny_models["bert"], "--data", str(small_data), "--epochs", "1",
                     "--out", str(tmp_path / "v")])
    err = capsys.readouterr().err
    assert code == 1 and "belongs to another user (uid 4242)" in err
    assert "Epoch" not in err and not (tmp_path / ".v.resume").exists()  # refused before any training


@pytest.mark.skipif(os.geteuid() != 0, reason="making a file owned by another user needs root")
def test_a_save_refused_at_the_end_says_the_checkpoint_is_kept_and_how_to_save_it(tmp_path, small_data,
                                                                                   tiny_models, monkeypatch):
    """X102: the lock made by another user while the run trains: the message says what is kept and what to do."""
    import ktrain_recipes as kr
    from ktrain_recipes.predictor import staging

    lock = tmp_path / ".v.lock"
    real = staging.Stage.commit_predictor

    def lock_appears(self, predictor, metrics):  # another user takes the lock while the epochs run
        lock.write_text("")
        os.chown(lock, 4242, 4242)
        return real(self, predictor, metrics)

    monkeypatch.setattr(staging.Stage, "commit_predictor", lock_appears)
    with pytest.raises(RecipesError, match=r"belongs to another user.*The trained run is kept in its checkpoint "
                                           r".*\.v\.resume.*--resume --out NAME") as error:
        kr.run_recipe(kr.RecipeConfig(tiny_models["bert"], data=str(small_data), out=str(tmp_path / "v"), epochs=1,
                                      batch_size=16, lr=1e-3))
    assert "\n" not in str(error.value) and (tmp_path / ".v.resume").is_dir()


@pytest.mark.parametrize("content, words", [
    ("text;label\ni am glad;joy\nso sad;sad\n", "looks separated by ';', not ','"),
    ("\ufefftext;label\ni am glad;joy\nso sad;sad\n", "looks separated by ';'"),
    ("text\tlabel\ni am glad\tjoy\n", "looks separated by '\\t'"),
])
def test_a_csv_with_another_separator_is_named_as_such(tmp_path, content, words):
    """X20: a semicolon CSV was blamed on its column names ("no column 'text' (columns: text;label)")."""
    with pytest.raises(RecipesError, match=words.replace("\\", "\\\\")):
        load_data(write(tmp_path / "d.csv", content), hold_out=False)


def test_a_header_repeated_mid_file_is_refused_by_line(tmp_path):
    """X26: two CSVs pasted together became a class 'label' with one row."""
    path = write(tmp_path / "d.csv", "text,label\na,x\nb,y\ntext,label\nc,x\n")
    with pytest.raises(RecipesError, match=r"d.csv:4: the row repeats the header"):
        load_data(path, hold_out=False)


def test_a_workbook_and_utf16_without_a_bom_are_named(tmp_path):
    """X29 (an .xlsx renamed .csv got the cp1252 advice) and X19 (UTF-16 with no byte-order mark)."""
    (tmp_path / "book.csv").write_bytes(b"PK\x03\x04" + b"\x14\x00\x06\x00" * 50)
    with pytest.raises(RecipesError, match="zip archive .*CSV UTF-8"):
        load_data(tmp_path / "book.csv", hold_out=False)
    (tmp_path / "wide.csv").write_bytes("text,label\ni am glad,joy\nso sad,sad\n".encode("utf-16-le"))
    with pytest.raises(RecipesError, match="looks UTF-16"):
        load_data(tmp_path / "wide.csv", hold_out=False)


def test_labels_differing_only_by_case_are_named(tmp_path, capsys):
    """X21: 'Joy' became a third class beside 'joy' without a word."""
    load_data(write(tmp_path / "d.csv", "text,label\na,joy\nb,Joy\nc,sad\nd,joy\n"), hold_out=False)
    assert "differ only by case or spaces are separate classes: 'Joy' and 'joy'" in capsys.readouterr().err


def test_a_label_in_two_unicode_forms_is_one_label(tmp_path):
    """X40: 'café' composed in train and decomposed in test was 'not in the training data (café, other)'."""
    composed, decomposed = "caf\u00e9", "cafe\u0301"
    write(tmp_path / "train.csv", "text,label\n" + "".join(f"t{i},{composed if i % 2 else 'other'}\n"
                                                          for i in range(10)))
    write(tmp_path / "val.csv", f"text,label\nv1,other\nv2,{decomposed}\n")
    data = load_data(tmp_path)
    assert data.label_names == ["caf\u00e9", "other"] and data.labels("validation") == ["other", "caf\u00e9"]


def test_an_out_name_longer_than_the_file_system_allows_is_one_line(tmp_path):
    """X113: a 300-character --out was an OSError traceback."""
    from ktrain_recipes.predictor.staging import check_out_dir

    with pytest.raises(RecipesError, match=r"is a name of 300 bytes; at most 233"):
        check_out_dir(tmp_path / ("b" * 300))
    check_out_dir(tmp_path / ("b" * 233))


def test_classify_refuses_teis_left_truncation_as_predict_does(exported):
    """W10: /classify read the first tokens of a text whose client asked for the last ones."""
    from fastapi.testclient import TestClient

    from ktrain_recipes_tools.service.app import create_app
    from ktrain_recipes_tools.service.settings import ServiceSettings

    with TestClient(create_app(ServiceSettings(str(exported), reload_interval=0))) as client:
        response = client.post("/classify", json={"input": "hi", "truncation_direction": "left"})
        assert response.status_code == 400 and response.json()["error"]["param"] == "truncation_direction"


def test_a_diverged_run_is_named_with_its_rate(tmp_path, small_data, tiny_models, capsys):
    """X103: `--lr 100` (for 1e-4) reached a validation loss of 902.8, and was saved as a normal predictor."""
    import ktrain_recipes as kr
    from ktrain_recipes.training.train import exploded_loss

    assert exploded_loss({"val_loss": [902.8]}, 6) and not exploded_loss({"val_loss": [0.45]}, 6)
    assert exploded_loss({"val_loss": [0.11]}, 28) is None
    kr.run_recipe(kr.RecipeConfig(tiny_models["bert"], data=str(small_data), out=str(tmp_path / "v"), epochs=1,
                                  batch_size=16, lr=100.0, precision="float32", seed=42))  # finite, not NaN
    err = capsys.readouterr().err
    assert "training looks diverged at lr 100.0" in err and "times what answering every text alike scores" in err


def test_the_ethics_ranker_trains_in_the_precision_it_is_given(tiny_models):
    """W32 (v6, still failing in v7): bfloat16 and float32 gave identical weights; precision was not in the identity,
    so a bfloat16 checkpoint resumed in float32."""
    import dataclasses

    import numpy as np

    import ktrain_recipes as kr
    from ktrain_recipes_tools.studies.ethics_ranker import ranker_identity, train_ranker

    pairs = [(f"i helped my friend move house number {i}", f"i ignored my friend number {i}") for i in range(32)]
    config = kr.RecipeConfig(tiny_models["bert"], epochs=1, batch_size=8, lr=1e-3, seed=1, precision="float32")
    weights = {}
    for precision in ("float32", "bfloat16"):
        scorer, _ = train_ranker(dataclasses.replace(config, precision=precision), pairs)
        weights[precision] = [w.numpy() for w in scorer.trainable_weights]
    assert max(float(np.abs(a - b).max()) for a, b in zip(*weights.values())) > 0
    ids = {p: ranker_identity(dataclasses.replace(config, precision=p), 32, pairs, None) for p in weights}
    assert ids["float32"] != ids["bfloat16"]


def test_a_model_folder_of_another_architecture_is_refused_before_the_data_is_read(tiny_models, tmp_path):
    """X56: a config.json saying gpt2 over BERT's weights died inside TFGPT2MainLayer with a traceback."""
    import json
    import shutil

    from ktrain_recipes.models import resolve_model

    folder = tmp_path / "gpt2ish"
    shutil.copytree(tiny_models["bert"], folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "model_type": "gpt2", "architectures": ["GPT2Model"]}))
    with pytest.raises(RecipesError, match="model_type 'gpt2', which the recipes do not fine-tune") as error:
        resolve_model(str(folder))
    assert "\n" not in str(error.value)
    for family in ("bert", "roberta", "distilbert", "albert", "electra"):
        resolve_model(tiny_models[family])  # the families the course trains still pass


def test_a_checkpoint_record_holding_nan_is_refused_before_training():
    """W56: NaN and Infinity in run.json's history resumed, trained, then died writing the record."""
    from ktrain_recipes.training.checkpoint import Checkpoint, record_damage

    record = {**Checkpoint.empty_record(), "identity": {}, "history": {"val_loss": [0.5, float("nan")]}}
    assert "not a finite number" in record_damage(record)
    record["history"] = {"val_loss": [0.5, float("inf")]}
    assert "not a finite number" in record_damage(record)
    record["history"] = {"val_loss": [0.5, 0.4]}
    assert record_damage(record) is None


def test_scale_bench_without_ray_names_the_extra_before_any_work(monkeypatch, capsys, tmp_path):
    """X5: 34 s of work, then 'ModuleNotFoundError: No module named ray', the extra unnamed."""
    import importlib.util

    from ktrain_recipes_tools import cli

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a))
    assert cli.main(["scale-bench", "--predictor", str(tmp_path), "--data", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "needs ray" in err and 'pip install -e ".[scale]"' in err


def test_serve_bench_passes_on_why_a_server_exited(tmp_path):
    """X6: 'c_service_int8 exited with 1 before answering', the child's one-line reason not shown."""
    import subprocess
    import sys
    import tempfile

    from ktrain_recipes_tools.studies.serve_bench import wait_ready

    log = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.exit('error: the folder is not a predictor')"],
                            stderr=log)
    proc.wait()
    with pytest.raises(RecipesError, match="exited with 1 before answering: error: the folder is not a predictor"):
        wait_ready("c_service_int8", "http://127.0.0.1:9", proc, log)


@pytest.mark.parametrize("lrs, losses, words", [([], [], "never run"),
                                                 ([1e-5 * 1.1 ** i for i in range(40)], [float("nan")] * 40,
                                                  "the loss was not a number from the first step"),
                                                 ([1e-5, 2e-5], [1.0, 0.9], "ran 2 steps: too few")])
def test_a_rate_finder_plot_with_no_curve_says_why(capsys, lrs, losses, words):
    """X79: an empty or NaN rate-finder run was drawn without a word."""
    from types import SimpleNamespace

    from ktrain_recipes.plots import plot_lr_find

    finder = SimpleNamespace(lrs=lrs, losses=losses, suggestions=lambda *a: {})
    plot_lr_find(finder)
    assert words in capsys.readouterr().err


def test_the_precision_policy_is_keras_3s_where_tf_keras_is_missing(monkeypatch):
    """X73: use_precision('auto') on the road without TensorFlow died importing tf_keras."""
    import builtins

    import keras

    from ktrain_recipes.training.precision import set_policy

    real = builtins.__import__

    def no_tf_keras(name, *args, **kwargs):
        if name == "tf_keras":
            raise ModuleNotFoundError("No module named 'tf_keras'", name="tf_keras")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_tf_keras)
    try:
        set_policy("bfloat16")
        assert keras.config.dtype_policy().name == "mixed_bfloat16"
    finally:
        keras.config.set_dtype_policy("float32")


def test_a_keras_hub_preset_folder_without_tokenizer_json_is_refused_in_one_line(tmp_path):
    """X81: the preset was returned, and notebook 10's next line failed 'No such file or directory (os error 2)'."""
    import shutil

    import tiny_models as tiny

    from ktrain_recipes.keras3.presets import keras_hub_preset

    folder = tmp_path / "old-bert"
    shutil.copytree(tiny.tiny_keras_hub_bert(), folder, ignore=shutil.ignore_patterns("made_from.json"))
    (folder / "tokenizer.json").unlink()
    with pytest.raises(RecipesError, match="has no tokenizer.json") as error:
        keras_hub_preset(str(folder))
    assert "\n" not in str(error.value)


def test_keras_gets_an_installed_backend_where_tensorflow_is_missing():
    """X72: without KERAS_BACKEND, Keras 3 defaulted to TensorFlow, which the road without it lacks. Here TensorFlow
    is hidden and JAX made to look installed (tests/test_keras3_jax.py runs it where JAX is)."""
    import subprocess
    import sys

    code = ("import importlib.util, os\n"
            "real = importlib.util.find_spec\n"
            "fake = {'tensorflow': None, 'jax': real('json')}\n"
            "importlib.util.find_spec = lambda n, *a: fake[n] if n in fake else real(n, *a)\n"
            "import ktrain_recipes\n"
            "print(os.environ.get('KERAS_BACKEND'))\n")
    env = {k: v for k, v in os.environ.items() if k != "KERAS_BACKEND"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "jax" and "Keras 3 will use jax" in done.stderr
    named = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env={**env, "KERAS_BACKEND": "torch"})
    assert named.stdout.strip().splitlines()[-1] == "torch"  # a backend named is never replaced
