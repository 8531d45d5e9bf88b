import json
import subprocess
import sys

import pytest

from ktrain_recipes import cli


def test_train_delegates_flags_to_run_recipe(monkeypatch):
    seen = {}
    monkeypatch.setattr("ktrain_recipes.recipe.run_recipe", lambda **kw: seen.update(kw))
    assert cli.main(["train", "--model", "bert", "--out", "o", "--maxlen", "64", "--batch-size", "8", "--lr",
                     "3e-5", "--epochs", "2", "--limit", "100", "--seed", "1", "--lr-find", "--data", "d"]) == 0
    assert seen == dict(model="bert", data="d", out="o", maxlen=64, batch_size=8, lr=3e-5, epochs=2, limit=100,
                        eval_limit=None, seed=1, lr_find=True, overwrite=False, resume=False, bucketing=True)
    # the tutorial's recipe from the command line: every text padded to 512, batch 6
    cli.main(["train", "--out", "o", "--maxlen", "max", "--batch-size", "6", "--no-bucketing"])
    assert (seen["maxlen"], seen["batch_size"], seen["bucketing"]) == ("max", 6, False)


def test_bench_runs_on_a_slice_or_on_all_the_data(monkeypatch):
    seen = {}
    monkeypatch.setattr("ktrain_recipes.bench.run_bench", lambda **kw: seen.update(kw))
    assert cli.main(["bench"]) == 0 and (seen["limit"], seen["epochs"]) == (400, 2)
    assert cli.main(["bench", "--limit", "all", "--epochs", "4"]) == 0 and (seen["limit"], seen["epochs"]) == (None, 4)
    with pytest.raises(SystemExit):
        cli.main(["bench", "--limit", "lots"])


def test_models_lists_the_registry(capsys):
    assert cli.main(["models"]) == 0
    out = capsys.readouterr().out
    assert "minilm" in out and "google/electra-base-discriminator" in out


@pytest.mark.parametrize("args, message", [
    (["train", "--model", "bret", "--out", "x", "--data", "."], "unknown model 'bret'"),
    (["evaluate", "--predictor", "no-such-dir"], "does not exist"),
    (["predict", "--predictor", "p"], "either TEXT arguments or --input"),
])
def test_user_errors_are_one_line_and_exit_1(args, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.main(args) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and message in err and "\n" not in err


def test_missing_data_folder_from_a_real_process(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "ktrain_recipes", "train", "--model", "minilm", "--data",
                           str(tmp_path / "nope"), "--out", str(tmp_path / "o")], capture_output=True, text=True)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("error: data folder")


def test_evaluate_json_and_predict(tiny_predictor, small_data, tmp_path, capsys):
    out = tmp_path / "m.json"
    assert cli.main(["evaluate", "--predictor", str(tiny_predictor), "--data", str(small_data), "--json",
                     str(out)]) == 0
    metrics = json.loads(out.read_text())
    assert metrics["n"] == 60 and 0 <= metrics["accuracy"] <= 1 and "macro_f1" in metrics
    texts = tmp_path / "in.txt"
    texts.write_text("i am happy\ni am sad\n")
    capsys.readouterr()
    assert cli.main(["predict", "--predictor", str(tiny_predictor), "--input", str(texts), "--proba"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2 and lines[0].endswith("\ti am happy") and "joy=" in lines[0]
