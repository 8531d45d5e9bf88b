"""The second adversarial battery's findings: each case gives a one-line error or the right answer."""

import json
import shutil

import pytest

import ktrain_recipes as kr
from ktrain_recipes import RecipeConfig, RecipesError, cli
from ktrain_recipes.data.loading import Columns, load_data


def test_structured_text_columns_are_refused_not_stringified(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"text": {"body": "hi"}, "label": "a"}\n{"text": {"body": "yo"}, "label": "b"}\n')
    with pytest.raises(RecipesError, match="column 'text' holds a dict, not text"):
        load_data(path)
    path = tmp_path / "l.jsonl"
    path.write_text('{"text": ["a", "b"], "label": "a"}\n{"text": ["c"], "label": "b"}\n')
    with pytest.raises(RecipesError, match="holds a list, not text"):
        load_data(path)


def test_list_labels_are_one_line(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"text": "hi", "label": ["a"]}\n{"text": "yo", "label": ["b"]}\n')
    with pytest.raises(RecipesError, match="the label in column 'label' is a list"):
        load_data(path)


def test_duplicate_label_names_are_refused(capsys):
    with pytest.raises(SystemExit):
        cli.main(["train", "--out", "x", "--labels", "joy,sadness,joy"])
    assert "joy is given twice" in capsys.readouterr().err
    with pytest.raises(RecipesError, match="name each label once"):
        RecipeConfig(labels=["joy", "sadness", "joy"])  # checked where it is written


def test_integer_labels_are_positions_in_the_names_given(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("text,label\n" + "".join(f"text {i},{i % 2}\n" for i in range(20)))
    ds = load_data(path, Columns(), ["1", "0"])  # label 0 is the first name, "1", as the README says
    texts = ds.texts("train") + ds.texts("validation")
    labels = ds.labels("train") + ds.labels("validation")
    assert all(y == ("1" if int(t.split()[1]) % 2 == 0 else "0") for t, y in zip(texts, labels))
    path.write_text("text,label\n" + "".join(f"text {i},{i % 5}\n" for i in range(20)))
    ds = load_data(path, Columns(), ["1", "2", "3", "4", "5"])  # 0-4 named 1-5: no complaint about "5"
    assert set(ds.labels("train")) == {"1", "2", "3", "4", "5"}
    with pytest.raises(RecipesError, match="label 4 is an id beyond the 4 label names"):
        load_data(path, Columns(), ["a", "b", "c", "d"])


def test_a_header_only_csv_says_so(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("text,label\n")
    with pytest.raises(RecipesError, match="no rows below the header"):
        load_data(path)


def test_evaluate_can_score_a_whole_file(tiny_predictor, emotion, tmp_path, capsys):
    texts, labels = kr.sample(emotion.texts("validation"), emotion.labels("validation"), 120, seed=2)
    path = tmp_path / "all.csv"
    import pandas as pd

    pd.DataFrame({"text": texts, "label": labels}).to_csv(path, index=False)
    out = tmp_path / "m.json"
    assert cli.main(["evaluate", "--predictor", str(tiny_predictor), "--data", str(path), "--split", "all",
                     "--json", str(out)]) == 0
    assert json.loads(out.read_text())["n"] == 120
    assert cli.main(["evaluate", "--predictor", str(tiny_predictor), "--data", str(path), "--json", str(out)]) == 0
    assert json.loads(out.read_text())["n"] == 12  # the default still scores the held-out 10%


def test_distill_refuses_what_it_would_ignore_or_crash_on(tiny_predictor, tiny_models, small_data, tmp_path, capsys):
    from ktrain_recipes.training.distill import DistillSettings

    with pytest.raises(SystemExit):  # the student reads with the teacher's maxlen: no flag to ignore
        cli.main(["distill", "--teacher", str(tiny_predictor), "--out", str(tmp_path / "s"), "--maxlen", "9"])
    with pytest.raises(RecipesError, match="--temperature must be a finite number"):
        DistillSettings(str(tiny_predictor), temperature=float("inf")).check()
    capsys.readouterr()
    # 4 training texts cannot hold 6 classes: refused before training, as train refuses it
    assert cli.main(["distill", "--teacher", str(tiny_predictor), "--data", str(small_data), "--limit", "4",
                     "--out", str(tmp_path / "s"), "--epochs", "1"]) == 1
    assert "the training texts have no example of" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()


def test_compare_skips_unreadable_scores_with_a_note(tiny_predictor, tmp_path, capsys):
    runs = tmp_path / "runs"
    for name in ("good", "string", "empty"):
        shutil.copytree(tiny_predictor, runs / name)
    metrics = json.loads((runs / "good" / "metrics.json").read_text())
    (runs / "string" / "metrics.json").write_text(json.dumps({**metrics, "accuracy": "high"}))
    (runs / "empty" / "metrics.json").write_text(json.dumps({"settings": {}}))
    table = kr.compare_runs(runs)
    assert list(table.index) == ["good"]
    assert capsys.readouterr().err.count("note: skipped") == 2
    assert cli.main(["compare", "--runs", str(runs), "--table", str(tmp_path / "missing" / "t.csv")]) == 1
    assert "cannot write" in capsys.readouterr().err


@pytest.mark.parametrize("content", ["", "a,b,c\nd\n"])
def test_bad_utilitarianism_files_are_one_line(tmp_path, content):
    from ktrain_recipes.studies.ethics_data import read_pairs

    (tmp_path / "util_test.csv").write_text(content)
    with pytest.raises(RecipesError, match="util_test.csv"):
        read_pairs(tmp_path / "util_test.csv")


def test_bench_checks_its_predictors_before_training(tiny_predictor, small_data, tmp_path, capsys):
    import json as json_

    other = tmp_path / "other"
    shutil.copytree(tiny_predictor, other)
    from ktrain_recipes.predictor.manifest import MANIFEST, write_manifest

    manifest = json_.loads((other / MANIFEST).read_text())
    write_manifest(other, list(reversed(manifest["label_names"])), manifest["maxlen"], {"model_id": "x"})
    for flags, words in [(["--predictor", str(other)], "but the data's labels are"),
                         (["--students", str(tmp_path / "missing")], "does not exist")]:
        assert cli.main(["bench", "--data", str(small_data), "--out", str(tmp_path / "b"), *flags]) == 1
        assert words in capsys.readouterr().err
        assert not (tmp_path / "b").exists()  # refused before any training row
