"""The third adversarial battery's findings outside the service: nothing lost, nothing silently wrong, one line
instead of a traceback or a hang. Each test names its finding's number."""

import json
import re
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import ktrain_recipes as kr
from ktrain_recipes import RecipeConfig, RecipesError, cli


def predict(exported, *args) -> int:
    return cli.main(["predict", "--predictor", str(exported), "--int8", *args])


# 1. --output naming a FIFO or a device node: refused, and both stay what they were
def test_an_output_that_is_a_fifo_or_a_device_survives(exported, tmp_path, capsys):
    import stat

    (tmp_path / "in.txt").write_text("i am happy\n")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert predict(exported, "--input", str(tmp_path / "in.txt"), "--output", str(fifo)) == 1
    assert "not a regular file" in capsys.readouterr().err
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert predict(exported, "i am happy", "--output", str(fifo)) == 1  # texts on the command line too
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    device = tmp_path / "null"
    try:
        os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a private /dev/null, in our own folder
    except PermissionError:
        pytest.skip("making a device node needs root here")
    assert predict(exported, "--input", str(tmp_path / "in.txt"), "--output", str(device)) == 1
    assert stat.S_ISCHR(os.stat(device).st_mode)
    assert not [p for p in tmp_path.iterdir() if ".partial" in p.name]


# 2. --output equal to --input
def test_the_output_may_not_be_the_input(exported, tmp_path, capsys):
    for name, content in [("in.txt", "i am happy\n\nso sad\n"), ("in.csv", "text\ni am happy\n")]:
        path = tmp_path / name
        path.write_text(content)
        assert predict(exported, "--input", str(path), "--output", str(path)) == 1
        assert "is one of this command's inputs" in capsys.readouterr().err
        assert path.read_text() == content


# 3. a kill part-way leaves a partial file; the next run in that folder removes it
def test_a_killed_runs_partial_output_is_removed_by_the_next_run(exported, tmp_path):
    lines = "\n".join(f"text number {i} makes me happy" for i in range(200_000)) + "\n"
    (tmp_path / "in.txt").write_text(lines)
    out = tmp_path / "out.csv"
    run = subprocess.Popen([sys.executable, "-m", "ktrain_recipes", "predict", "--predictor", str(exported), "--int8",
                            "--input", str(tmp_path / "in.txt"), "--output", str(out), "--chunk-size", "500"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not [p for p in tmp_path.iterdir() if ".partial" in p.name] and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait(timeout=30)
    assert [p for p in tmp_path.iterdir() if ".partial" in p.name], "the run never started writing"
    (tmp_path / "small.txt").write_text("i am happy\n")
    assert predict(exported, "--input", str(tmp_path / "small.txt"), "--output", str(out)) == 0
    assert not [p for p in tmp_path.iterdir() if ".partial" in p.name]
    assert out.read_text().count("\n") == 2  # the header and the one text


def test_sigterm_ends_a_predict_as_ctrl_c_does_with_no_partial_file_left(exported, tmp_path):
    """SIGTERM (a container or a scheduler stopping the command) cleans up as Ctrl-C does, and exits 143."""
    (tmp_path / "in.txt").write_text("\n".join(f"text number {i} makes me happy" for i in range(200_000)) + "\n")
    out = tmp_path / "out.csv"
    run = subprocess.Popen([sys.executable, "-m", "ktrain_recipes", "predict", "--predictor", str(exported), "--int8",
                            "--input", str(tmp_path / "in.txt"), "--output", str(out), "--chunk-size", "500"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not [p for p in tmp_path.iterdir() if ".partial" in p.name] and time.monotonic() < deadline:
            time.sleep(0.2)
        assert [p for p in tmp_path.iterdir() if ".partial" in p.name], "the run never started writing"
        run.send_signal(signal.SIGTERM)
        _, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait(timeout=30)
    assert run.returncode == 143 and "stopped (SIGTERM)" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt"]  # no output, no partial file


# 4. an --output suffix names its format, or is refused
def test_the_output_suffix_chooses_a_known_format_or_is_refused(exported, tmp_path, capsys):
    (tmp_path / "in.txt").write_text("i am happy\nso sad\n")
    assert predict(exported, "--input", str(tmp_path / "in.txt"), "--output", str(tmp_path / "o.json")) == 0
    assert [r["text"] for r in json.loads((tmp_path / "o.json").read_text())] == ["i am happy", "so sad"]
    assert predict(exported, "i am happy", "--output", str(tmp_path / "t.json")) == 0
    assert json.loads((tmp_path / "t.json").read_text())[0]["text"] == "i am happy"
    assert predict(exported, "--input", str(tmp_path / "in.txt"), "--output", str(tmp_path / "o.xlsx")) == 1
    assert "cannot tell the format from '.xlsx'" in capsys.readouterr().err
    assert not (tmp_path / "o.xlsx").exists()


# 5, 19, 29. --chunk-size below 1
@pytest.mark.parametrize("size", ["0", "-1"])
@pytest.mark.parametrize("name", ["in.txt", "in.csv"])
def test_a_chunk_size_below_one_is_refused(exported, tmp_path, capsys, size, name):
    (tmp_path / name).write_text("text\nhello\n")
    assert predict(exported, "--input", str(tmp_path / name), "--chunk-size", size) == 1
    assert capsys.readouterr().err.strip() == f"error: --chunk-size must be at least 1, got {size}"


# 7, 18. lone surrogates: refused by name, never dropped or a traceback
def test_lone_surrogates_are_refused_in_one_line(exported, tmp_path, capsys):
    model = kr.open_predictor(exported, int8=True)
    with pytest.raises(RecipesError, match=r"text 1 holds a lone surrogate \(U\+D800\)"):
        kr.classify(model, ["fine", "bad \ud800 text"])
    (tmp_path / "in.jsonl").write_text('{"text": "fine"}\n{"text": "bad \\ud800 text"}\n')
    assert predict(exported, "--input", str(tmp_path / "in.jsonl"), "--output", str(tmp_path / "o.jsonl")) == 1
    errors = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert len(errors) == 1 and "line 2 holds a lone surrogate" in errors[0]
    # a byte that is not UTF-8 in an argument reaches Python as a lone surrogate (surrogateescape)
    run = subprocess.run([sys.executable, "-m", "ktrain_recipes", "predict", "--predictor", str(exported), "--int8",
                          b"caf\xe9".decode("utf-8", "surrogateescape")], capture_output=True, text=True,
                         errors="replace")
    assert run.returncode == 1 and "lone surrogate" in run.stderr and "Traceback" not in run.stderr


# 8, 30. Ray keeps the input's other columns as written, and classifies numeric-looking text as the local engine
@pytest.mark.ray
@pytest.mark.slow
def test_ray_keeps_columns_as_text_like_the_local_engine(exported, tmp_path):
    from ktrain_recipes.inference.ray_scoring import predict_with_ray

    (tmp_path / "in.csv").write_text("id,flag,text\n007,true,i am so happy\n010,false,12345\n")
    assert predict(exported, "--input", str(tmp_path / "in.csv"), "--output", str(tmp_path / "local.csv")) == 0
    predict_with_ray(str(exported), tmp_path / "in.csv", str(tmp_path / "ray.csv"), num_cpus=2)
    assert (tmp_path / "ray.csv").read_text() == (tmp_path / "local.csv").read_text()
    assert "007,true," in (tmp_path / "ray.csv").read_text()


# 19. Ray's address and chunk size are checked before Ray starts
@pytest.mark.parametrize("flags, message", [
    (["--ray-address", "not an address"], "--ray-address 'not an address' is not HOST:PORT"),
    (["--ray-address", "localhost:99999"], "is not HOST:PORT"),
    (["--chunk-size", "0"], "--chunk-size must be at least 1, got 0"),
])
def test_ray_settings_are_checked_first(exported, tmp_path, capsys, flags, message):
    (tmp_path / "in.txt").write_text("hello\n")
    assert cli.main(["predict", "--predictor", str(exported), "--engine", "ray", "--input", str(tmp_path / "in.txt"),
                     "--output", str(tmp_path / "o.csv"), *flags]) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


# 9, 20. TF_CONFIG's shape is checked before TensorFlow reads it
@pytest.mark.parametrize("raw, message", [
    ("[]", "must be a JSON object"),
    ('"x"', "must be a JSON object"),
    ('{"clusters": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 0}}', "unknown: clusters"),
    ('{"cluster": {"worker": "a:1,b:2"}, "task": {"type": "worker", "index": 0}}', "list of 'host:port'"),
    ('{"cluster": {"worker": ["a:1"]}, "task": {"type": "boss", "index": 0}}', "'task' must be"),
    ('{"cluster": {"worker": ["a:1", "b:2"]}, "task": {"type": "worker", "index": 2}}', "task index 2 is past"),
])
def test_a_malformed_tf_config_is_refused(raw, message):
    from ktrain_recipes.training.distribute import check_tf_config

    with pytest.raises(RecipesError, match=message):
        check_tf_config(raw)
    good = '{"cluster": {"worker": ["a:1", "b:2"]}, "task": {"type": "worker", "index": 1}}'
    assert check_tf_config(good)["task"]["index"] == 1


# 10, 24. a folder whose files disagree about the model is refused at load, by both paths
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


# 11, 25. kr.classify's inputs
def test_classify_refuses_tables_and_sets_and_takes_a_0d_array(exported):
    import pandas as pd

    model = kr.open_predictor(exported, int8=True)
    with pytest.raises(RecipesError, match="pass its text column"):
        kr.classify(model, pd.DataFrame({"text": ["i am happy"]}))
    with pytest.raises(RecipesError, match="a set has no order"):
        kr.classify(model, {"i am happy", "so sad"})
    assert kr.classify(model, np.array("i am happy")) == kr.classify(model, ["i am happy"])
    with pytest.raises(RecipesError, match="classifies single texts, and was given text pairs"):
        kr.classify(model, [["i am happy", "so sad"]])
    tf_model = kr.load_checked_predictor(exported)
    with pytest.raises(RecipesError, match="classifies single texts"):
        kr.classify(tf_model, [["i am happy", "so sad"]])


# 13. Google Drive keeps an absolute runs folder inside the Drive
def test_an_absolute_runs_folder_stays_in_the_drive():
    from ktrain_recipes.notebook import drive_path

    assert drive_path("/content/runs") == "/content/drive/MyDrive/ktrain-recipes/content/runs"
    assert drive_path("runs") == "/content/drive/MyDrive/ktrain-recipes/runs"


# 16, 32. a huge text is cut before it is tokenized
def test_a_huge_text_is_cut_before_tokenizing(exported, capsys):
    model = kr.open_predictor(exported, int8=True)
    seen = []
    tokenizer = model.tokenizer
    original = type(tokenizer).__call__

    def watching(self, *args, **kwargs):
        seen.extend(len(t) for t in args[0])
        return original(self, *args, **kwargs)

    type(tokenizer).__call__ = watching
    try:
        huge = "i am so happy today " * 500_000  # 10 MB
        assert kr.classify(model, [huge]) == kr.classify(model, [huge[:100 * model.maxlen]])
    finally:
        type(tokenizer).__call__ = original
    assert max(seen) <= 100 * model.maxlen
    assert "indexing errors" not in capsys.readouterr().err


# 17. integer and boolean columns are written as JSON
@pytest.mark.parametrize("output", ["o.jsonl", "o.json"])
def test_numpy_integers_are_written_as_json(exported, tmp_path, output):
    import pandas as pd

    table = pd.DataFrame({"id": [1, 2], "ok": [True, False], "text": ["i am happy", "so sad"]})
    table.to_parquet(tmp_path / "in.parquet")
    assert predict(exported, "--input", str(tmp_path / "in.parquet"), "--output", str(tmp_path / output)) == 0
    text = (tmp_path / output).read_text()
    records = [json.loads(line) for line in text.splitlines()] if output.endswith("l") else json.loads(text)
    assert [(r["id"], r["ok"]) for r in records] == [(1, True), (2, False)]


# 21, 22, 23. RecipeConfig refuses what would fail later
@pytest.mark.parametrize("settings, message", [
    ({"batch_size": float("nan")}, "--batch-size must be a whole number"),
    ({"epochs": 1.5}, "--epochs must be a whole number"),
    ({"limit": float("inf")}, "--limit must be a whole number"),
    ({"seed": 2**32}, "--seed must be below 2\\*\\*32"),
    ({"seed": 2**64}, "--seed must be below 2\\*\\*32"),
    ({"maxlen": "banana"}, "--maxlen must be 'auto', 'max' or a whole number"),
    ({"labels": ["only"]}, "--labels must name at least two labels"),
    ({"labels": []}, "--labels must name at least two labels"),
    ({"lr": float("inf")}, "--lr must be a finite number"),
    ({"distribute": "mirrored", "devices": 1000}, "give at most"),
])
def test_recipe_settings_of_the_wrong_kind_are_refused_where_written(settings, message):
    with pytest.raises(RecipesError, match=message):
        RecipeConfig(**settings)


def test_a_seed_past_two_to_the_32_is_refused_on_the_command_line(capsys):
    assert cli.main(["train", "--out", "o", "--seed", "4294967296"]) == 1
    assert "--seed must be below 2**32" in capsys.readouterr().err


# 26. texts on the command line with an --output in a missing folder: refused before classifying
def test_a_missing_output_folder_is_found_before_the_model_loads(tmp_path, capsys):
    assert cli.main(["predict", "--predictor", str(tmp_path / "no-such-predictor"), "i am happy", "--output",
                     str(tmp_path / "missing" / "out.txt")]) == 1
    assert "its folder does not exist" in capsys.readouterr().err


# 27, 28. errors name the file's line (blank lines counted), a null, and a header-only .csv
def test_errors_name_the_line_a_null_and_an_empty_table(exported, tmp_path, capsys):
    (tmp_path / "in.txt").write_text("fine\n\n\nok\n\n\u200b\u200b\nmore\n")
    assert predict(exported, "--input", str(tmp_path / "in.txt")) == 1
    assert "in.txt: line 6 is empty" in capsys.readouterr().err
    (tmp_path / "in.jsonl").write_text('{"text": "fine"}\n{"text": null}\n')
    assert predict(exported, "--input", str(tmp_path / "in.jsonl")) == 1
    assert "row 2 has no text (null) in 'text'" in capsys.readouterr().err
    (tmp_path / "head.csv").write_text("text\n")
    assert predict(exported, "--input", str(tmp_path / "head.csv")) == 1
    assert "the input holds no text to classify" in capsys.readouterr().err


# 33. ethics: a file without its columns, and a test file smaller than one group, before training
def test_ethics_files_are_checked_before_training(ethics_dir, tmp_path, capsys):
    import shutil

    data = tmp_path / "ethics"
    shutil.copytree(ethics_dir / "justice", data / "justice")
    train = data / "justice" / "justice_train.csv"
    train.write_text(train.read_text().replace("label,", "verdict,", 1))
    assert cli.main(["ethics", "--task", "justice", "--data", str(data), "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert "no column(s) label" in err and "--label-column" not in err
    shutil.copy(ethics_dir / "justice" / "justice_train.csv", train)
    test = data / "justice" / "justice_test.csv"
    test.write_text("".join(test.read_text().splitlines(keepends=True)[:3]))  # header and 2 rows
    assert cli.main(["ethics", "--task", "justice", "--data", str(data), "--out", str(tmp_path / "o")]) == 1
    assert "fewer than one group of 4" in capsys.readouterr().err


# 15. a Ray address nothing answers: one line at once, not minutes of retries
def test_a_ray_address_nothing_answers_is_refused_at_once(exported, tmp_path, capsys):
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # free once closed: nothing listens there
    (tmp_path / "in.txt").write_text("hello\n")
    start = time.monotonic()
    assert cli.main(["predict", "--predictor", str(exported), "--engine", "ray", "--input", str(tmp_path / "in.txt"),
                     "--output", str(tmp_path / "o.csv"), "--ray-address", f"127.0.0.1:{port}"]) == 1
    assert time.monotonic() - start < 30
    assert f"nothing answers at --ray-address 127.0.0.1:{port}" in capsys.readouterr().err


# 12. compare_finetuned refuses a loaded predictor that does not fit the data, instead of a 0.0 row
def test_compare_finetuned_refuses_a_predictor_of_other_labels_or_kind(exported, small_data):
    from ktrain_recipes.studies.finetuned import compare_finetuned

    ds = kr.load_emotion(small_data)
    model = kr.open_predictor(exported, int8=True)
    model.classes = ["0", "1", "2", "3", "4", "5"]  # another label set
    with pytest.raises(RecipesError, match="predicts 0, 1, 2, 3, 4, 5, but the data's labels are sadness"):
        compare_finetuned({"other labels": model}, ds, split="validation")
    single = kr.open_predictor(exported, int8=True)
    ds.splits["validation"] = ([(t, t) for t in ds.texts("validation")], ds.labels("validation"))
    with pytest.raises(RecipesError, match="classifies single texts, but the data holds pairs"):
        compare_finetuned({"single": single}, ds, split="validation")


# 31. int8 answers depend on the texts they share a call with: the cause is the per-call activation scale of dynamic
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


# settings that would silently do the wrong thing are refused where they are written
@pytest.mark.parametrize("call, message", [
    (lambda kr: kr.augment("one text", 2), "takes a list of texts"),
    (lambda kr: kr.augment(["a b c"], -1), "copies must be a whole number"),
    (lambda kr: kr.augment(["a b c"], 2, p_mask=float("nan")), "p_mask must be a chance"),
    (lambda kr: kr.augment(["a b c"], 2, p_mask=5), "p_mask must be a chance"),
    (lambda kr: kr.augment(["a b c"], 2, p_mask=0.6, p_replace=0.6), "at most 1"),
    (lambda kr: kr.augment(["a b c"], 2, window=0), "window must be"),
    (lambda kr: kr.RecipeConfig(labels={"joy", "sadness"}), "must be a list, in the order"),
])
def test_settings_that_would_do_the_wrong_thing_are_refused(call, message):
    import ktrain_recipes as kr

    with pytest.raises(kr.RecipesError, match=message):
        call(kr)


def test_runs_folder_never_climbs_out_of_drive():
    from ktrain_recipes.notebook import drive_path

    assert drive_path("runs") == "/content/drive/MyDrive/ktrain-recipes/runs"
    with pytest.raises(RecipesError, match="leads out of your Drive folder"):
        drive_path("../../..")
