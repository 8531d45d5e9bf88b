import argparse
import dataclasses
import json
import subprocess
import sys

import pytest

import ktrain_recipes as kr
from ktrain_recipes import RecipeConfig, RecipesError
from ktrain_recipes_tools import cli
from ktrain_recipes.config import GROUPS


def test_train_delegates_flags_to_run_recipe(monkeypatch):
    seen = {}
    monkeypatch.setattr("ktrain_recipes.training.recipe.run_recipe", lambda config: seen.update(config=config))
    assert cli.main(["train", "--model", "bert", "--out", "o", "--maxlen", "64", "--batch-size", "8", "--lr",
                     "3e-5", "--epochs", "2", "--limit", "100", "--seed", "1", "--lr-find", "--data", "d"]) == 0
    assert seen["config"] == RecipeConfig(model="bert", data="d", out="o", maxlen=64, batch_size=8, lr=3e-5, epochs=2,
                                          limit=100, eval_limit=None, seed=1, lr_find=True, overwrite=False,
                                          resume=False, bucketing=True)
    # the tutorial's recipe from the command line: every text padded to 512, batch 6
    cli.main(["train", "--out", "o", "--maxlen", "max", "--batch-size", "6", "--no-bucketing"])
    assert (seen["config"].maxlen, seen["config"].batch_size, seen["config"].bucketing) == ("max", 6, False)


def test_every_setting_has_a_flag_with_help_and_its_default():
    parser = cli.build_parser()
    train = parser._subparsers._group_actions[0].choices["train"]
    flags = {a.dest: a for a in train._actions}
    assert {f.name for group in GROUPS for f in dataclasses.fields(group)} == \
        {f.name for f in dataclasses.fields(RecipeConfig)}  # RecipeConfig is its groups, no field outside them
    for f in dataclasses.fields(RecipeConfig):
        assert f.name in flags, f"RecipeConfig.{f.name} has no train flag"
        shown = argparse.SUPPRESS if f.metadata["hidden"] else f.metadata["help"]
        assert flags[f.name].help == shown and flags[f.name].default == f.default
    assert "--smoke" not in train.format_help()  # the test harness's flag, not the learner's
    assert "(default: auto)" in train.format_help().replace("\n", " ").replace("  ", " ")


@pytest.mark.parametrize("flags, message", [
    (["--lr", "nan"], "--lr must be a finite number above 0"),
    (["--lr", "-1"], "--lr must be a finite number above 0"),
    (["--lr", "0"], "--lr must be a finite number above 0"),
    (["--batch-size", "0"], "--batch-size must be at least 1"),
    (["--batch-size", "-1"], "--batch-size must be at least 1"),
    (["--epochs", "0"], "--epochs must be at least 1, got 0"),
    (["--epochs", "-1"], "--epochs must be at least 1"),
    (["--seed", "-1"], "--seed must be at least 0"),
    (["--limit", "0"], "--limit must be at least 1"),
    (["--eval-limit", "0"], "--eval-limit must be at least 1"),
    (["--maxlen", "4"], "--maxlen must be at least 8"),
    (["--maxlen", "513"], "--maxlen must be at most 512 tokens"),
])
def test_settings_out_of_range_are_refused_at_parse_time(flags, message, capsys, monkeypatch):
    monkeypatch.setattr("ktrain_recipes.training.recipe.run_recipe", lambda config: pytest.fail("should not train"))
    assert cli.main(["train", "--out", "o", *flags]) == 1
    err = capsys.readouterr().err.strip()
    assert err == f"error: {message}" or (err.startswith(f"error: {message}") and "\n" not in err)


def test_version(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--version"])
    assert capsys.readouterr().out.startswith("ktrain-recipes ")


def test_models_lists_the_registry(capsys):
    assert cli.main(["models"]) == 0
    out = capsys.readouterr().out
    assert "minilm" in out and "google/electra-base-discriminator" in out


@pytest.mark.parametrize("args, message", [
    (["train", "--model", "bret", "--out", "x", "--data", "."], "unknown model 'bret'"),
    (["evaluate", "--predictor", "no-such-dir"], "does not exist"),
    (["predict", "--predictor", "p"], "either TEXT arguments or --input"),
    (["evaluate", "--predictor", "p", "--json", "/no/such/dir/out.json"], "cannot write '/no/such/dir/out.json'"),
    (["train", "--out", "/proc/x/pred", "--data", "."], "cannot write in '/proc/x'"),
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
    assert proc.stderr.strip().splitlines()[-1].startswith("error: data ")
    assert "does not exist" in proc.stderr


def test_evaluate_json_and_predict(tiny_predictor, small_data, tmp_path, capsys):
    out = tmp_path / "m.json"
    assert cli.main(["evaluate", "--predictor", str(tiny_predictor), "--data", str(small_data), "--json",
                     str(out)]) == 0
    metrics = json.loads(out.read_text())
    ds = kr.load_emotion(small_data)
    texts, labels = ds.texts("validation"), ds.labels("validation")
    right = sum(p == y for p, y in zip(kr.classify(kr.load_checked_predictor(tiny_predictor), texts), labels))
    assert metrics["n"] == 60 and metrics["accuracy"] == pytest.approx(right / 60) and "macro_f1" in metrics
    texts = tmp_path / "in.txt"
    texts.write_text("i am happy\ni am sad\n")
    capsys.readouterr()
    assert cli.main(["predict", "--predictor", str(tiny_predictor), "--input", str(texts), "--proba"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2 and lines[0].endswith("\ti am happy") and "joy=" in lines[0]
    # a newline or tab inside a text cannot break the one-line-per-text output
    assert cli.main(["predict", "--predictor", str(tiny_predictor), "two\nlines\tand a tab"]) == 0
    assert capsys.readouterr().out.strip().split("\t")[1] == "two\\nlines\\tand a tab"


def test_predict_json_and_csv_output_parse_back(tiny_predictor, tmp_path, capsys):
    import csv

    table = tmp_path / "in.csv"
    table.write_text('id,text\n7,"i am happy, really"\n8,i am sad\n')
    assert cli.main(["predict", "--predictor", str(tiny_predictor), "--input", str(table), "--format", "json",
                     "--proba"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in records] == ["7", "8"] and records[0]["text"] == "i am happy, really"
    assert abs(sum(records[0][f"p_{n}"] for n in ["sadness", "joy", "love", "anger", "fear", "surprise"]) - 1) < 1e-3
    out = tmp_path / "out.csv"
    assert cli.main(["predict", "--predictor", str(tiny_predictor), "--input", str(table), "--format", "csv",
                     "--output", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    assert list(rows[0])[:3] == ["id", "text", "label"] and "p_surprise" in rows[0] and len(rows) == 2
    assert rows[1]["label"] == records[1]["label"]


def test_own_csv_with_other_columns_trains_from_the_cli(tiny_models, tmp_path, capsys):
    rows = [f"review number {i} was {'great' if i % 5 else 'awful'},{i % 5 + 1}" for i in range(120)]
    (tmp_path / "reviews.csv").write_text("review,stars\n" + "\n".join(rows) + "\n")
    out = tmp_path / "stars"
    assert cli.main(["train", "--model", tiny_models["bert"], "--data", str(tmp_path / "reviews.csv"),
                     "--text-column", "review", "--label-column", "stars", "--epochs", "1", "--lr", "1e-3",
                     "--batch-size", "16", "--out", str(out)]) == 0
    assert "held out 12 of 120 training texts" in capsys.readouterr().err
    assert json.loads((out / "config.json").read_text())["id2label"] == {str(i): str(i + 1) for i in range(5)}
    assert cli.main(["predict", "--predictor", str(out), "--format", "json", "a great review"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["label"] in {"1", "2", "3", "4", "5"}


def test_binary_labels_with_names_and_sentence_pairs(tiny_models, tmp_path, capsys):
    rows = [f"question {i},answer {'yes' if i % 2 else 'no'} {i},{i % 2}" for i in range(80)]
    (tmp_path / "train.csv").write_text("q,a,label\n" + "\n".join(rows) + "\n")
    out = tmp_path / "pairs"
    assert cli.main(["train", "--model", tiny_models["bert"], "--data", str(tmp_path / "train.csv"),
                     "--text-column", "q", "--pair-column", "a", "--labels", "no,yes", "--epochs", "1",
                     "--lr", "1e-3", "--batch-size", "16", "--out", str(out)]) == 0
    (tmp_path / "in.csv").write_text("text,second\nquestion 1,answer yes 1\nquestion 2,answer no 2\n")
    capsys.readouterr()
    assert cli.main(["predict", "--predictor", str(out), "--input", str(tmp_path / "in.csv"), "--pair-column",
                     "second", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "text,second,label,p_no,p_yes" and len(lines) == 3
    assert {line.split(",")[2] for line in lines[1:]} <= {"no", "yes"}


def test_a_bad_setting_fails_where_it_is_written():
    from ktrain_recipes import RecipesError

    with pytest.raises(RecipesError, match="--lr must be a finite number above 0"):
        RecipeConfig(lr=-1)
    with pytest.raises(RecipesError, match="--val-fraction must be between 0 and 1"):
        RecipeConfig(val_fraction=2)
    for field, value in [("text_column", None), ("out", None), ("label_column", ""), ("model", 3), ("out", " ")]:
        with pytest.raises(RecipesError, match=f"--{field.replace('_', '-')} must be a non-empty name, got"):
            RecipeConfig(**{field: value})
    with pytest.raises(RecipesError, match="--pair-column must be a non-empty name or left out"):
        RecipeConfig(pair_column="")


def test_tensorflow_start_up_lines_do_not_reach_the_terminal(tiny_predictor):
    run = subprocess.run([sys.executable, "-m", "ktrain_recipes", "predict", "--predictor", str(tiny_predictor),
                          "i am happy"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-1000:]
    for noise in ("absl::InitializeLog", "oneDNN custom operations", "cudart_stub"):
        assert noise not in run.stderr, run.stderr[:500]


@pytest.mark.parametrize("argv, kind, own", [
    (["evaluate", "--predictor", "p", "--limit", "5", "--data", "d"], "DataSettings", {"data": "d"}),
    (["bench", "--out", "elsewhere", "--limit", "7", "--epochs", "3"], "RecipeConfig", {"limit": 7}),
    (["ethics", "--task", "justice", "--data", "e", "--out", "o", "--lr", "2e-5"], "RecipeConfig", {"lr": 2e-5}),
    (["distill", "--teacher", "t", "--out", "s", "--resume", "--epochs", "1"], "RecipeConfig",
     {"out": "s", "resume": True, "epochs": 1}),
])
def test_a_commands_config_holds_only_its_own_groups_flags(argv, kind, own):
    """evaluate takes the data group alone (a DataSettings); the others a RecipeConfig of their groups' flags."""
    import dataclasses

    from ktrain_recipes import config as settings_module
    from ktrain_recipes_tools.commands.flags import settings_from_args

    settings_class = getattr(settings_module, kind)
    args = cli.build_parser().parse_args(argv)
    config = settings_from_args(args, settings_class)
    defaults = settings_class()
    changed = {k: v for k, v in dataclasses.asdict(config).items() if v != getattr(defaults, k)}
    assert changed == own  # evaluate's --limit and bench's --out are the command's, not the config's
    assert set(getattr(args, f"{kind}_flags")) <= set(dataclasses.asdict(config))



@pytest.mark.parametrize("flags, message", [
    (["--layers", "0"], "--layers must be a whole number of at least 1, got 0"),
    (["--alpha", "2"], "--alpha must be between 0 and 1, got 2.0"),
    (["--alpha", "nan"], "--alpha must be between 0 and 1, got nan"),
    (["--temperature", "0"], "--temperature must be a finite number above 0"),
    (["--temperature", "inf"], "--temperature must be a finite number above 0"),
])
def test_distill_settings_out_of_range_fail_before_anything_loads(flags, message, tmp_path, capsys, monkeypatch):
    # the teacher and the data do not exist: a check made after loading would name them instead
    monkeypatch.setattr("ktrain_recipes_tools.training.distill.distill", lambda *a: pytest.fail("should not distill"))
    assert cli.main(["distill", "--teacher", str(tmp_path / "no-teacher"), "--data", str(tmp_path / "no-data"),
                     "--out", str(tmp_path / "s"), *flags]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {message}") and err.count("\n") == 1


def test_every_distill_setting_is_a_flag_with_its_fields_default():
    import dataclasses

    from ktrain_recipes_tools.training.distill import DistillSettings

    sub = cli.build_parser()._subparsers._group_actions[0].choices["distill"]
    flags = {a.dest: a for a in sub._actions}
    for f in dataclasses.fields(DistillSettings):
        assert flags[f.name].help == f.metadata["help"]
        assert flags[f.name].required if f.default is dataclasses.MISSING else flags[f.name].default == f.default


@pytest.mark.parametrize("argv, message", [
    (["serve-bench", "--predictor", "p", "--seconds", "-1"], "--seconds must be a number of seconds above 0"),
    (["serve-bench", "--predictor", "p", "--seconds", "nan"], "--seconds must be a number of seconds above 0"),
    (["serve-bench", "--predictor", "p", "--concurrency", "0"], "--concurrency must be a whole number of at least 1"),
    (["scale-bench", "--predictor", "p", "--in-memory", "-1"], "--in-memory must be at least 1"),
])
def test_bench_settings_out_of_range_are_one_line(argv, message, capsys):
    assert cli.main(argv) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize("pair, which", [("q", "text"), ("label", "label")])
def test_a_pair_column_that_is_the_text_or_label_column_is_refused(pair, which):
    with pytest.raises(RecipesError, match=f"--pair-column '{pair}' is the {which} column"):
        RecipeConfig(text_column="q", pair_column=pair)


def test_a_text_column_that_is_the_label_column_is_refused(tmp_path, capsys):
    with pytest.raises(RecipesError, match="--text-column 'label' is the label column"):
        RecipeConfig(text_column="label")
    with pytest.raises(RecipesError, match="--text-column 'y' is the label column"):
        RecipeConfig(text_column="y", label_column="y")
    assert cli.main(["train", "--model", "minilm", "--text-column", "label", "--out", str(tmp_path / "m")]) == 1
    assert "is the label column" in capsys.readouterr().err and not (tmp_path / "m").exists()


@pytest.mark.parametrize("pair", ["text", "label"])
def test_predict_refuses_a_pair_column_that_is_the_text_or_label_column(tmp_path, capsys, pair):
    (tmp_path / "in.csv").write_text("text,b\nhello,world\n")
    assert cli.main(["predict", "--predictor", str(tmp_path / "none"), "--input", str(tmp_path / "in.csv"),
                     "--pair-column", pair]) == 1
    assert f"--pair-column '{pair}' is the {pair} column" in capsys.readouterr().err


def test_a_command_whose_extra_is_not_installed_says_which_in_one_line(monkeypatch, capsys, tmp_path):
    import builtins

    real_import = builtins.__import__

    def without_fastapi(name, *args, **kwargs):
        if name == "fastapi" or name.startswith("fastapi."):
            raise ModuleNotFoundError("No module named 'fastapi'", name="fastapi")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", without_fastapi)
    monkeypatch.setattr("ktrain_recipes_tools.service.server.serve",
                        lambda *a, **k: __import__("fastapi"))  # what serving imports first
    (tmp_path / "p").mkdir()
    code = cli.main(["serve", "--predictor", str(tmp_path / "p")])
    err = capsys.readouterr().err
    assert code == 1 and 'pip install -e ".[serve]"' in err and "Traceback" not in err and err.count("\n") == 1
