"""compare: runs side by side, a corrupt metrics.json skipped, label sets kept apart, the committed fallback."""

import json
import shutil
from pathlib import Path

import pytest

from ktrain_recipes import RecipesError
from ktrain_recipes_tools import compare_runs, recommend
import ktrain_recipes_tools as krt
from ktrain_recipes_tools import cli


DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_corrupt_runs_are_skipped_and_other_label_sets_not_ranked(tiny_predictor, tmp_path, capsys):
    shutil.copytree(tiny_predictor, tmp_path / "a")
    shutil.copytree(tiny_predictor, tmp_path / "b")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "metrics.json").write_text("{not json")
    table = compare_runs(tmp_path)
    assert set(table.index) == {"a", "b"} and "skipped" in capsys.readouterr().err  # a note: stderr
    assert "best accuracy" in recommend(table)
    metrics = json.loads((tmp_path / "b" / "metrics.json").read_text())
    (tmp_path / "b" / "metrics.json").write_text(json.dumps({**metrics, "label_names": ["neg", "pos"]}))
    assert "not comparable" in recommend(compare_runs(tmp_path))


def test_a_fresh_machine_gets_the_committed_results_and_is_told(tmp_path, capsys):
    table = compare_runs(tmp_path / "none", fallback=DOCS / "results.json")
    assert "minilm-full-4ep" in table.index and table.loc["minilm-full-4ep", "accuracy"] == 0.9335
    assert "showing the results committed in" in capsys.readouterr().err
    with pytest.raises(RecipesError, match="no runs"):
        compare_runs(tmp_path / "none")


def test_the_record_joins_your_runs_each_named_as_such(tiny_predictor, tmp_path):
    import json
    import shutil

    shutil.copytree(tiny_predictor, tmp_path / "runs" / "mine")
    table = compare_runs(tmp_path / "runs", committed=DOCS / "results.json")
    record = json.loads((DOCS / "results.json").read_text())["runs"]
    assert set(table.index) == {"mine", *(f"{name} (record)" for name in record)}
    assert table.loc["quickstart-3ep (record)", "train_seconds"] == record["quickstart-3ep"]["train_seconds"]
    assert list(table["accuracy"]) == sorted(table["accuracy"], reverse=True)
    alone = compare_runs(tmp_path / "empty", committed=DOCS / "results.json")
    assert len(alone) == len(record)


def test_compare_writes_csv_and_json(tiny_predictor, tmp_path):
    import pandas as pd

    from ktrain_recipes_tools import cli

    assert cli.main(["compare", "--runs", str(tiny_predictor.parent), "--table", str(tmp_path / "t.csv")]) == 0
    saved = json.loads((tiny_predictor / "metrics.json").read_text())["accuracy"]
    assert pd.read_csv(tmp_path / "t.csv", index_col=0).loc["bert", "accuracy"] == pytest.approx(saved)
    assert cli.main(["compare", "--runs", str(tiny_predictor.parent), "--table", str(tmp_path / "t.json")]) == 0
    assert "bert" in json.loads((tmp_path / "t.json").read_text())


def test_compare_skips_unreadable_scores_with_a_note(tiny_predictor, tmp_path, capsys):
    runs = tmp_path / "runs"
    for name in ("good", "string", "empty"):
        shutil.copytree(tiny_predictor, runs / name)
    metrics = json.loads((runs / "good" / "metrics.json").read_text())
    (runs / "string" / "metrics.json").write_text(json.dumps({**metrics, "accuracy": "high"}))
    (runs / "empty" / "metrics.json").write_text(json.dumps({"settings": {}}))
    table = krt.compare_runs(runs)
    assert list(table.index) == ["good"]
    assert capsys.readouterr().err.count("note: skipped") == 2
    assert cli.main(["compare", "--runs", str(runs), "--table", str(tmp_path / "missing" / "t.csv")]) == 1
    assert "cannot write" in capsys.readouterr().err


def test_a_smoke_column_shows_only_when_a_smoke_run_is_in_the_table(tiny_predictor, tmp_path):
    for name in ("real", "smoke"):
        shutil.copytree(tiny_predictor, tmp_path / name)
    for name, smoke in (("real", False), ("smoke", True)):
        path = tmp_path / name / "metrics.json"
        metrics = json.loads(path.read_text())
        path.write_text(json.dumps({**metrics, "smoke": smoke, "settings": {**metrics.get("settings", {}),
                                                                            "smoke": smoke}}))
    both = compare_runs(tmp_path)
    assert both.loc["smoke", "smoke"] and not both.loc["real", "smoke"]
    assert "smoke runs of tiny random models" in recommend(both)
    shutil.rmtree(tmp_path / "smoke")
    real = compare_runs(tmp_path)
    assert "smoke" not in real.columns and "smoke runs" not in recommend(real)
    assert "smoke" not in compare_runs(tmp_path / "none", fallback=DOCS / "results.json").columns


def test_a_run_is_recorded_once_with_the_figures_compare_shows(tiny_predictor, tmp_path):
    """scripts/record_result.py copies a run's row into the record; the record's row then joins compare_runs with
    the same figures, and a second write of that name is refused unless asked for."""
    import importlib.util
    import shutil

    spec = importlib.util.spec_from_file_location("record_result", DOCS.parent / "scripts" / "record_result.py")
    record_result = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(record_result)
    results = tmp_path / "results.json"
    shutil.copy(DOCS / "results.json", results)
    run = tmp_path / "runs" / "mine"
    shutil.copytree(tiny_predictor, run)
    record_result.main([str(run), "mine-1ep", "--results", str(results), "--about", "mine-1ep is a tiny run."])
    saved = json.loads(results.read_text())
    assert saved["about"].endswith("mine-1ep is a tiny run.")
    table = compare_runs(tmp_path / "runs", committed=results)
    mine, recorded = table.loc["mine"], table.loc["mine-1ep (record)"]
    for column in ["accuracy", "macro_f1", "train_seconds", "latency_p50_ms", "n_train", "epochs", "labels"]:
        assert recorded[column] == pytest.approx(mine[column], rel=1e-3) if column != "labels" \
            else recorded[column] == mine[column], column
    with pytest.raises(SystemExit, match="already in"):
        record_result.main([str(run), "mine-1ep", "--results", str(results)])
    with pytest.raises(SystemExit, match="no readable metrics.json"):
        record_result.main([str(tmp_path / "runs" / "absent"), "x", "--results", str(results)])


def test_seed_pairs_judges_a_change_seed_by_seed_with_a_t_interval(tmp_path, seed_pairs):
    import json

    # three seeds run both ways (and a fourth run one way only, left out): differences +1.0, +0.4, +0.7 points
    for way, accuracies in {"augment": {42: 0.935, 43: 0.934, 44: 0.937, 45: 0.99},
                            "labels": {42: 0.925, 43: 0.930, 44: 0.930}}.items():
        for seed, accuracy in accuracies.items():
            (tmp_path / f"student-{way}-s{seed}.json").write_text(json.dumps({"accuracy": accuracy}))
    assert list(seed_pairs.pairs(tmp_path, "student-", "augment", "labels")) == [42, 43, 44]
    text = seed_pairs.report(tmp_path, "student-", "augment", "labels", target=0.5)
    # mean 0.7, sample sd 0.3, sem 0.3 / sqrt(3), t(0.975, 2 df) = 4.3027: 0.7 -/+ 0.745
    assert "| 43 | 0.9300 | 0.9340 | +0.40 |" in text
    assert "3 seeds: mean +0.70 points, 95% interval -0.05 to +1.45" in text
    assert "the interval holds zero; the target (+0.5 points, supported by the interval) is not met" in text
    assert "lies above the -0.1-point target: met" in seed_pairs.report(tmp_path, "student-", "augment", "labels",
                                                                       target=-0.1)
    record = seed_pairs.summary(tmp_path, "student-", "augment", "labels", target=0.5)
    assert record["pairs"]["43"] == {"labels": 0.930, "augment": 0.934, "difference_points": 0.4}
    assert (record["n"], round(record["mean"], 4), round(record["low"], 2), round(record["high"], 2)) == (
        3, 0.7, -0.05, 1.45)
    assert record["excludes_zero"] is False and record["target_met"] is False
