import json

import pytest

from ktrain_recipes import RecipeConfig
from ktrain_recipes_tools import cli
from ktrain_recipes_tools import compare_runs, recommend
from ktrain_recipes_tools.studies.bench import PeakRSS, run_bench
import shutil
from ktrain_recipes import RecipesError


ROW_KEYS = ["name", "train_examples_per_s", "val_accuracy", "val_macro_f1", "latency_p50_ms", "latency_p95_ms",
            "throughput_per_s", "size_mb", "params", "peak_rss_mb"]


@pytest.mark.slow
def test_bench_tiny_mode_writes_json_table_and_chart(tiny_models, tiny_predictor, small_data, tmp_path):
    """One bench run: the four rows, and a student's rows and its side-by-side timing against the predictor (any
    smaller predictor is a student to the bench; `distill` makes real ones)."""
    teacher, student = tmp_path / "teacher", tmp_path / "student"
    for copy in (teacher, student):  # the shared predictor is not written into (bench exports int8 beside it)
        shutil.copytree(tiny_predictor, copy)
    config = RecipeConfig(tiny_models["bert"], data=str(small_data), limit=48, eval_limit=30, epochs=1, smoke=True)
    result = run_bench(config, predictor=str(teacher), out=tmp_path / "bench", assets=tmp_path / "assets",
                       students=[str(student)])
    saved = json.loads((tmp_path / "bench" / "bench.json").read_text())
    assert saved["ratios"] == pytest.approx(result["ratios"])
    assert [r["name"] for r in saved["rows"]] == ["a_tutorial_recipe", "b_default_recipe", "c_ktrain_predictor",
                                                  "d_onnx_int8", "student student", "student student int8"]
    for kind in ("fp32", "int8"):  # teacher and student timed in alternation at each precision
        side = result["side_by_side"][kind]
        assert set(side) == {f"teacher {kind}", f"student {kind}"}
        assert side[f"teacher {kind}"]["throughput_vs_teacher"] == 1.0 and side[f"student {kind}"]["n_single"] > 0
    assert "int8, timed in alternation" in (tmp_path / "bench" / "bench.md").read_text()
    for row in saved["rows"]:
        assert list(row) == ROW_KEYS and row["peak_rss_mb"] > 100
    a, b, c, d = saved["rows"][:4]
    assert d["size_mb"] < c["size_mb"] and 0 < saved["ratios"]["size_ratio"] < 1  # int8 is the smaller file
    assert set(saved["ratios"]) == {"train_speedup", "latency_speedup", "throughput_speedup", "size_ratio",
                                    "accuracy_delta"}
    # 48 texts: batch 6 makes 8 updates, the default batch (32) 2; both are reported
    assert saved["optimizer_steps"] == {"a_tutorial_recipe": 8, "b_default_recipe": 2}
    assert "| a_tutorial_recipe |" in (tmp_path / "bench" / "bench.md").read_text()
    assert "optimizer steps, a_tutorial_recipe: 8" in (tmp_path / "bench" / "bench.md").read_text()
    assert (tmp_path / "assets" / "bench.png").stat().st_size > 1000
    table = compare_runs(tmp_path / "bench")  # the two trained recipes, read from their metrics.json
    assert set(table.index) == {"a_tutorial_recipe", "b_default_recipe"} and table["smoke"].all()
    assert "best accuracy" in recommend(table) and "smoke runs" in recommend(table)


def test_compare_cli_prints_table_and_saves_chart(tiny_predictor, tmp_path, capsys):
    chart = tmp_path / "chart.png"
    assert cli.main(["compare", "--runs", str(tiny_predictor.parent), "--chart", str(chart)]) == 0
    out = capsys.readouterr().out
    assert "bert" in out and "best accuracy" in out and chart.stat().st_size > 1000
    assert cli.main(["compare", "--runs", str(tmp_path / "none")]) == 1


def test_peak_rss_sees_an_allocation():
    with PeakRSS() as rss:
        block = bytearray(200 * 2**20)
        block[::4096] = b"x" * len(block[::4096])
    assert rss.mb > 200


def test_bench_cli_delegates(monkeypatch):
    seen = {}
    monkeypatch.setattr("ktrain_recipes_tools.studies.bench.run_bench",
                        lambda config, **kw: seen.update(kw, config=config))
    assert cli.main(["bench", "--limit", "10", "--epochs", "1", "--predictor", "p"]) == 0
    config = seen["config"]
    assert (config.limit, config.epochs, config.model, seen["predictor"]) == (10, 1, "minilm", "p")
    assert cli.main(["bench"]) == 0 and (seen["config"].limit, seen["config"].epochs) == (400, 2)
    assert cli.main(["bench", "--limit", "all", "--epochs", "4"]) == 0
    assert (seen["config"].limit, seen["config"].epochs) == (None, 4)
    with pytest.raises(SystemExit):
        cli.main(["bench", "--limit", "lots"])
    assert cli.main(["bench", "--epochs", "0"]) == 1  # refused at once, not after minutes of training


def test_bench_refuses_an_out_folder_that_is_not_a_bench_run(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(kr_error()):
        run_bench(RecipeConfig(), out=tmp_path)
    assert (tmp_path / "notes.txt").read_text() == "mine"


def kr_error():

    return RecipesError


def test_the_ratios_read_each_way_round():
    from ktrain_recipes_tools.studies.bench import ratios

    a = {"train_examples_per_s": 2.0}  # the tutorial's recipe
    b = {"train_examples_per_s": 52.0}  # ours: 26x faster
    c = {"latency_p50_ms": 80.0, "throughput_per_s": 50.0, "size_mb": 91.0, "val_accuracy": 0.930}  # ktrain
    d = {"latency_p50_ms": 2.0, "throughput_per_s": 450.0, "size_mb": 23.0, "val_accuracy": 0.927}  # int8
    assert ratios(a, b, c, d) == pytest.approx({"train_speedup": 26.0, "latency_speedup": 40.0,
                                                "throughput_speedup": 9.0, "size_ratio": 23 / 91,
                                                "accuracy_delta": -0.003})


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


def test_side_by_side_scores_each_model_both_ways_and_times_them_in_turn(exported, small_data, monkeypatch):
    """Notebook 09's table: a fp32 and an int8 row per model, scored on the texts, timed by time_side_by_side (every
    predictor in turn), with the model's size on disk per kind."""
    import ktrain_recipes.inference.timing as timing
    from ktrain_recipes.data.loading import load_emotion
    from ktrain_recipes_tools.studies.bench import side_by_side

    ds = load_emotion(str(small_data))
    val = (ds.texts("validation")[:24], ds.labels("validation")[:24])
    timed, real = [], timing.time_side_by_side
    monkeypatch.setattr(timing, "time_side_by_side", lambda fns, texts, **kw: timed.append(list(fns)) or real(
        fns, texts, **{**kw, "n_single": 4}))
    table = side_by_side({"a": exported, "b": exported}, val, ds.label_names, rounds=1)
    assert list(table.index) == ["a fp32", "a int8", "b fp32", "b int8"] and timed == [list(table.index)]
    assert {"val_accuracy", "val_macro_f1", "latency_p50_ms", "throughput_per_s", "size_mb"} <= set(table.columns)
    assert (table["throughput_per_s"] > 0).all() and (table["latency_p50_ms"] <= table["latency_p95_ms"]).all()
    assert table.loc["a fp32", "size_mb"] > table.loc["a int8", "size_mb"]  # each kind's own weights on disk
    assert table.loc["a int8", "val_accuracy"] == table.loc["b int8", "val_accuracy"]  # the same model, scored alike
