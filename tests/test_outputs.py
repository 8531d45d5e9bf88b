"""No command writes onto one of its own inputs, into a predictor folder it does not own, through a symbolic link,
or over a folder that is not a predictor: each is refused with one line before any work, and nothing changes."""

import json
import shutil

import pytest

import ktrain_recipes as kr
from ktrain_recipes import RecipesError
from ktrain_recipes_tools import cli
import os
import signal
import subprocess
import sys
import time


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
    # a new file inside the data folder being scored: the next load of that folder would read it as a split
    assert cli.main(["evaluate", "--predictor", str(predictor), "--data", str(data), "--json",
                     str(data / "test.json")]) == 1
    assert "inside the folder" in capsys.readouterr().err and contents(data) == before[0]


def test_an_output_named_as_a_folder_is_refused_and_any_other_manifest_is_not_a_predictor(tmp_path, capsys):
    from ktrain_recipes_tools.inference.output import check_output_file

    with pytest.raises(RecipesError, match="names a folder that does not exist.*newdir/predictions.csv"):
        check_output_file(f"{tmp_path}/newdir/")
    assert not (tmp_path / "newdir").exists()
    web = tmp_path / "web-app"
    web.mkdir()
    (web / "manifest.json").write_text('{"name": "my app", "icons": []}')  # a web app's, not a predictor's
    assert check_output_file(web / "predictions.csv") == web / "predictions.csv"
    (web / "manifest.json").write_text('{"files": {}, "labels_sha256": "x", "label_names": ["a"]}')
    with pytest.raises(RecipesError, match="inside the predictor folder"):
        check_output_file(web / "predictions.csv")


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
    # export rewrites the folder its --predictor names, and says so by that name (it has no --out)
    (tmp_path / "current").symlink_to(tiny_predictor)
    assert cli.main(["export", "--predictor", str(tmp_path / "current")]) == 1
    err = capsys.readouterr().err
    assert "--predictor '" in err and "is a symbolic link" in err and "--out" not in err
    assert (tmp_path / "current").is_symlink()


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


def predict(exported, *args) -> int:
    return cli.main(["predict", "--predictor", str(exported), "--int8", *args])


# --output naming a FIFO or a device node: refused, and both stay what they were
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


# --output equal to --input
def test_the_output_may_not_be_the_input(exported, tmp_path, capsys):
    for name, content in [("in.txt", "i am happy\n\nso sad\n"), ("in.csv", "text\ni am happy\n")]:
        path = tmp_path / name
        path.write_text(content)
        assert predict(exported, "--input", str(path), "--output", str(path)) == 1
        assert "is one of this command's inputs" in capsys.readouterr().err
        assert path.read_text() == content


# a kill part-way leaves a partial file; the next run in that folder removes it
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


# an --output suffix names its format, or is refused
def test_the_output_suffix_chooses_a_known_format_or_is_refused(exported, tmp_path, capsys):
    (tmp_path / "in.txt").write_text("i am happy\nso sad\n")
    assert predict(exported, "--input", str(tmp_path / "in.txt"), "--output", str(tmp_path / "o.json")) == 0
    assert [r["text"] for r in json.loads((tmp_path / "o.json").read_text())] == ["i am happy", "so sad"]
    assert predict(exported, "i am happy", "--output", str(tmp_path / "t.json")) == 0
    assert json.loads((tmp_path / "t.json").read_text())[0]["text"] == "i am happy"
    assert predict(exported, "--input", str(tmp_path / "in.txt"), "--output", str(tmp_path / "o.xlsx")) == 1
    assert "cannot tell the format from '.xlsx'" in capsys.readouterr().err
    assert not (tmp_path / "o.xlsx").exists()


# integer and boolean columns are written as JSON
@pytest.mark.parametrize("output", ["o.jsonl", "o.json"])
def test_numpy_integers_are_written_as_json(exported, tmp_path, output):
    import pandas as pd

    table = pd.DataFrame({"id": [1, 2], "ok": [True, False], "text": ["i am happy", "so sad"]})
    table.to_parquet(tmp_path / "in.parquet")
    assert predict(exported, "--input", str(tmp_path / "in.parquet"), "--output", str(tmp_path / output)) == 0
    text = (tmp_path / output).read_text()
    records = [json.loads(line) for line in text.splitlines()] if output.endswith("l") else json.loads(text)
    assert [(r["id"], r["ok"]) for r in records] == [(1, True), (2, False)]


# texts on the command line with an --output in a missing folder: refused before classifying
def test_a_missing_output_folder_is_found_before_the_model_loads(tmp_path, capsys):
    assert cli.main(["predict", "--predictor", str(tmp_path / "no-such-predictor"), "i am happy", "--output",
                     str(tmp_path / "missing" / "out.txt")]) == 1
    assert "its folder does not exist" in capsys.readouterr().err


@pytest.mark.parametrize("manifest, is_predictor", [
    ({"name": "my app", "icons": []}, False),                                  # a web app's manifest.json
    ({"files": {}, "labels_sha256": "x"}, False),                              # no label names
    ({"files": [], "labels_sha256": "x", "label_names": ["a"]}, False),        # files not a mapping
    ({"files": {}, "labels_sha256": "x", "label_names": ["a"]}, True),
])
def test_one_rule_says_which_folder_is_a_predictor(tmp_path, manifest, is_predictor):
    """Writing a file beside a predictor and --overwrite replacing a folder read the same rule: a folder is a
    predictor for both, or for neither."""
    from ktrain_recipes_tools.inference.output import check_output_file
    from ktrain_recipes.predictor.staging import check_out_dir

    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps(manifest))
    before = contents(folder)
    if is_predictor:
        with pytest.raises(RecipesError, match="inside the predictor folder"):
            check_output_file(folder / "out.csv")
        assert check_out_dir(folder, overwrite=True) == folder
    else:
        assert check_output_file(folder / "out.csv") == folder / "out.csv"
        with pytest.raises(RecipesError, match="not a predictor saved by ktrain_recipes"):
            check_out_dir(folder, overwrite=True)
    assert contents(folder) == before
