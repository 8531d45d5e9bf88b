"""No command writes onto one of its own inputs, into a predictor folder it does not own, through a symbolic link,
or over a folder that is not a predictor: each is refused with one line before any work, and nothing changes."""

import json
import shutil

import pytest

import ktrain_recipes as kr
from ktrain_recipes import RecipesError, cli


def contents(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_evaluate_json_never_replaces_the_data_or_the_predictors_metrics(tiny_predictor, small_data, tmp_path,
                                                                         capsys):
    data = tmp_path / "data"
    shutil.copytree(small_data, data)
    predictor = tmp_path / "pred"
    shutil.copytree(tiny_predictor, predictor)
    before = contents(data), contents(predictor)
    for target, says in [(data / "val.txt", "is one of this command's inputs"),
                         (predictor / "metrics.json", "inside the predictor folder")]:
        assert cli.main(["evaluate", "--predictor", str(predictor), "--data", str(data), "--json", str(target)]) == 1
        assert says in capsys.readouterr().err
    assert (contents(data), contents(predictor)) == before
    assert kr.load_checked_predictor(predictor)  # still whole


def test_compare_table_never_writes_into_a_run(tiny_predictor, tmp_path, capsys):
    runs = tmp_path / "runs"
    shutil.copytree(tiny_predictor, runs / "a")
    before = contents(runs)
    assert cli.main(["compare", "--runs", str(runs), "--table", str(runs / "a" / "metrics.json")]) == 1
    assert "inside the predictor folder" in capsys.readouterr().err
    assert cli.main(["compare", "--runs", str(runs), "--chart", str(tmp_path / "chart.txt")]) == 1
    assert "must end with .png" in capsys.readouterr().err
    assert contents(runs) == before


def test_outputs_through_symbolic_links_are_refused(tiny_predictor, tmp_path, capsys):
    target = tmp_path / "real.json"
    target.write_text("{}")
    (tmp_path / "link.json").symlink_to(target)
    assert cli.main(["evaluate", "--predictor", str(tiny_predictor), "--json", str(tmp_path / "link.json")]) == 1
    assert "is a symbolic link" in capsys.readouterr().err
    (tmp_path / "real-out").mkdir()
    (tmp_path / "link-out").symlink_to(tmp_path / "real-out")
    with pytest.raises(RecipesError, match="is a symbolic link"):
        kr.save_checked_predictor(kr.load_checked_predictor(tiny_predictor), tmp_path / "link-out", {},
                                  overwrite=True)
    assert target.read_text() == "{}" and (tmp_path / "link-out").is_symlink()


def test_overwrite_never_replaces_a_folder_with_someone_elses_manifest(tiny_predictor, tmp_path):
    app = tmp_path / "webapp"
    app.mkdir()
    (app / "manifest.json").write_text(json.dumps({"name": "my app", "icons": []}))
    (app / "index.html").write_text("<html></html>")
    with pytest.raises(RecipesError, match="is not a predictor saved by ktrain_recipes .it holds index.html"):
        kr.save_checked_predictor(kr.load_checked_predictor(tiny_predictor), app, {}, overwrite=True)
    assert sorted(p.name for p in app.iterdir()) == ["index.html", "manifest.json"]
    # one of ours with a stranger's file added is not replaced either
    ours = tmp_path / "ours"
    shutil.copytree(tiny_predictor, ours)
    (ours / "notes.txt").write_text("mine")
    with pytest.raises(RecipesError, match="it holds notes.txt"):
        kr.save_checked_predictor(kr.load_checked_predictor(tiny_predictor), ours, {}, overwrite=True)
    assert (ours / "notes.txt").read_text() == "mine"


def test_distill_never_writes_its_student_over_its_teacher(tiny_predictor, small_data, tmp_path, capsys):
    teacher = tmp_path / "teacher"
    shutil.copytree(tiny_predictor, teacher)
    before = contents(teacher)
    assert cli.main(["distill", "--teacher", str(teacher), "--data", str(small_data), "--out", str(teacher),
                     "--overwrite", "--epochs", "1"]) == 1
    assert "is the teacher" in capsys.readouterr().err
    assert contents(teacher) == before
