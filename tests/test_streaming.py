"""predict --input streams files in chunks (constant memory, order and columns kept, nothing half-written), and
--engine ray gives the single process's answers."""

import csv
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from ktrain_recipes import RecipesError
from ktrain_recipes_tools import cli
from ktrain_recipes.inference.onnx_inference import load_int8_predictor
from ktrain_recipes.inference.input_files import read_chunks
from ktrain_recipes_tools.inference.streaming import predict_file
import os
import ktrain_recipes as kr


@pytest.fixture(scope="module")
def texts(emotion):
    return emotion.texts("validation")[:300]


def test_every_format_streams_in_order_with_its_columns(exported, texts, tmp_path):
    model = load_int8_predictor(exported)
    table = pd.DataFrame({"id": [str(i) for i in range(len(texts))], "text": texts})
    table.to_csv(tmp_path / "in.csv", index=False)
    table.to_json(tmp_path / "in.jsonl", orient="records", lines=True)
    table.to_parquet(tmp_path / "in.parquet")
    (tmp_path / "in.txt").write_text("\n".join(texts) + "\n")
    outputs = {}
    for name in ["in.csv", "in.jsonl", "in.parquet", "in.txt"]:
        out = tmp_path / f"out-{name}.csv"
        assert predict_file(model, tmp_path / name, str(out), proba=True, chunk_size=64, progress=False) == 300
        outputs[name] = pd.read_csv(out, dtype={"id": str}, keep_default_na=False)
    reference = outputs["in.csv"]
    assert list(reference["id"]) == list(table["id"]) and list(reference["text"]) == texts
    for name, frame in outputs.items():
        assert list(frame["label"]) == list(reference["label"]), name
        assert list(frame["text"]) == texts
    assert "id" in outputs["in.parquet"].columns and "id" not in outputs["in.txt"].columns
    out = tmp_path / "out.parquet"
    predict_file(model, tmp_path / "in.parquet", str(out), chunk_size=64, progress=False)
    assert list(pd.read_parquet(out)["label"]) == list(reference["label"])
    out = tmp_path / "out.json"
    predict_file(model, tmp_path / "in.csv", str(out), fmt="json", chunk_size=64, progress=False)
    assert [r["label"] for r in json.loads(out.read_text())] == list(reference["label"])


def test_the_output_keeps_the_inputs_values_as_given(exported, tmp_path):
    """Mixed-key .jsonl rows keep their own fields and ints; nullable ints and null timestamps of a parquet file
    are null, not NaN or "NaT"; a user's p_<label> column and a header naming a column twice are refused."""
    model = load_int8_predictor(exported)
    rows = [{"text": "i am so happy", "id": 3}, {"text": "i feel awful", "id": 4, "note": "late"}]
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out.jsonl"
    predict_file(model, tmp_path / "in.jsonl", str(out), progress=False)
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert [{k: v for k, v in r.items() if k != "label"} for r in written] == rows  # no "note": NaN, no 3.0
    table = pd.DataFrame({"text": ["i am so happy", "i feel awful"], "n": pd.array([1, None], dtype="Int64"),
                          "when": pd.to_datetime(["2026-01-02", None]), "x": [0.5, 1.5]})
    table.to_parquet(tmp_path / "in.parquet")
    out = tmp_path / "out.json"
    predict_file(model, tmp_path / "in.parquet", str(out), progress=False)
    text = out.read_text()
    assert "NaN" not in text and "NaT" not in text
    written = json.loads(text)
    assert [r["n"] for r in written] == [1, None] and written[1]["when"] is None and written[0]["x"] == 0.5
    assert isinstance(written[0]["n"], int)
    out = tmp_path / "out.jsonl"  # battery v4 N70: the .jsonl writer gave "n": 1.0 for a nullable int column
    predict_file(model, tmp_path / "in.parquet", str(out), progress=False)
    lines = out.read_text().splitlines()
    assert [json.loads(line)["n"] for line in lines] == [1, None] and '"n": 1,' in lines[0]
    pd.DataFrame({"text": ["i am so happy"], "p_joy": ["mine"]}).to_csv(tmp_path / "p.csv", index=False)
    with pytest.raises(RecipesError, match="has a 'p_joy' column, which the probabilities would overwrite"):
        predict_file(model, tmp_path / "p.csv", str(tmp_path / "p-out.csv"), progress=False)
    assert not (tmp_path / "p-out.csv").exists()
    (tmp_path / "twice.csv").write_text("id,text,id\n1,i am so happy,2\n")
    with pytest.raises(RecipesError, match="names the column 'id' 2 times"):
        predict_file(model, tmp_path / "twice.csv", str(tmp_path / "t-out.csv"), progress=False)


def test_decimals_keep_their_digits_binary_is_refused_and_a_nested_surrogate_is_named(exported, tmp_path):
    import decimal

    import pyarrow as pa
    import pyarrow.parquet as pq

    model = load_int8_predictor(exported)
    price = pa.array([decimal.Decimal("12.345")], pa.decimal128(6, 3))
    pq.write_table(pa.table({"text": ["i am so happy"], "price": price}), tmp_path / "d.parquet")
    predict_file(model, tmp_path / "d.parquet", str(tmp_path / "d.jsonl"), progress=False)
    assert json.loads((tmp_path / "d.jsonl").read_text())["price"] == "12.345"
    pq.write_table(pa.table({"text": ["i am so happy"], "blob": [b"\x00\x01"]}), tmp_path / "b.parquet")
    with pytest.raises(RecipesError, match="a column of binary values, which JSON cannot hold"):
        predict_file(model, tmp_path / "b.parquet", str(tmp_path / "b.jsonl"), progress=False)
    assert not (tmp_path / "b.jsonl").exists()
    (tmp_path / "s.jsonl").write_text('{"text": "fine", "meta": {"tags": ["ok", "\\ud800"]}}\n')
    with pytest.raises(RecipesError, match="line 1 holds a lone surrogate"):
        predict_file(model, tmp_path / "s.jsonl", str(tmp_path / "s-out.jsonl"), progress=False)


def test_lines_split_on_newlines_only(exported, tmp_path, capsys):
    (tmp_path / "in.txt").write_text("one\u2028still one\ntwo\x0cstill two\r\nthree\x85still three\n\n")
    assert cli.main(["predict", "--predictor", str(exported), "--int8", "--input", str(tmp_path / "in.txt")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and lines[0].endswith("one\\u2028still one")  # escaped: one prediction per line


@pytest.mark.parametrize("content, name, words", [
    ('{"text": {"body": "hi"}}\n', "in.jsonl", "line 1 has a dict in 'text'"),
    ("text,label\nhello,joy\n", "in.csv", "has a 'label' column"),
    ("id,body\n1,hello\n", "in.csv", "no 'text' column"),
    ('text\nfine\n"   "\n', "in.csv", "row 2 is empty"),
])
def test_bad_rows_are_named_and_nothing_is_written(exported, tmp_path, capsys, content, name, words):
    (tmp_path / name).write_text(content)
    out = tmp_path / "out.csv"
    assert cli.main(["predict", "--predictor", str(exported), "--int8", "--input", str(tmp_path / name),
                     "--output", str(out)]) == 1
    assert words in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # no output, no partial file


def test_output_problems_are_found_before_the_work(exported, tmp_path, capsys):
    (tmp_path / "in.txt").write_text("hello\n")
    for output in [tmp_path / "missing" / "out.csv", tmp_path]:
        assert cli.main(["predict", "--predictor", str(exported), "--int8", "--input", str(tmp_path / "in.txt"),
                         "--output", str(output)]) == 1
        assert "error:" in capsys.readouterr().err


MEMORY = """
import resource, sys
from ktrain_recipes.inference.onnx_inference import load_int8_predictor
from ktrain_recipes_tools.inference.streaming import predict_file
model = load_int8_predictor(sys.argv[1])
predict_file(model, sys.argv[2], sys.argv[3], fmt="csv", proba=True, chunk_size=2000, progress=False)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


@pytest.mark.slow
def test_memory_does_not_grow_with_the_file(exported, texts, tmp_path):
    peaks = {}
    for n in (20_000, 200_000):
        path = tmp_path / f"in-{n}.txt"
        with open(path, "w") as f:
            for i in range(n):
                f.write(texts[i % len(texts)] + "\n")
        run = subprocess.run([sys.executable, "-c", MEMORY, str(exported), str(path), str(tmp_path / f"out-{n}.csv")],
                             capture_output=True, text=True, timeout=900)
        assert run.returncode == 0, run.stderr[-2000:]
        peaks[n] = int(run.stdout.split()[-1]) / 1024  # MB
        with open(tmp_path / f"out-{n}.csv") as f:
            assert sum(1 for _ in csv.reader(f)) == n + 1
    assert peaks[200_000] < peaks[20_000] + 60, peaks  # 10x the texts, within 60 MB of the same peak


@pytest.mark.slow
@pytest.mark.ray
def test_ray_gives_the_single_process_answers(exported, texts, tmp_path):
    from ktrain_recipes_tools.inference.ray_scoring import predict_with_ray

    table = pd.DataFrame({"id": [str(i) for i in range(len(texts))], "text": texts})
    table.to_csv(tmp_path / "in.csv", index=False)
    model = load_int8_predictor(exported)
    predict_file(model, tmp_path / "in.csv", str(tmp_path / "one.csv"), proba=True, chunk_size=100, progress=False)
    assert predict_with_ray(str(exported), tmp_path / "in.csv", str(tmp_path / "ray.csv"), proba=True,
                            num_cpus=2, chunk_size=100) == 300
    one = pd.read_csv(tmp_path / "one.csv", dtype={"id": str})
    ray_ = pd.read_csv(tmp_path / "ray.csv", dtype={"id": str})
    assert list(ray_["id"]) == list(one["id"])  # order kept
    assert list(ray_["label"]) == list(one["label"])
    p = [c for c in one.columns if c.startswith("p_")]
    # int8 quantizes activations per model call, so a text's probabilities move slightly with its batch
    # company (Ray's blocks split batches elsewhere): labels agree, probabilities to 1e-4
    assert np.abs(ray_[p].to_numpy() - one[p].to_numpy()).max() < 1e-4
    bad = table.copy()
    bad.loc[123, "text"] = "   "
    bad.to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(RecipesError, match="row 124 is empty"):
        predict_with_ray(str(exported), tmp_path / "bad.csv", str(tmp_path / "bad-out.csv"), num_cpus=2)
    assert not (tmp_path / "bad-out.csv").exists()


def test_read_chunks_refuses_what_is_not_a_file(tmp_path):

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(RecipesError, match="not a regular file"):
        list(read_chunks(fifo))


@pytest.mark.slow
@pytest.mark.ray
def test_scale_bench_measures_the_three_paths(exported, emotion_dir, tmp_path):
    from ktrain_recipes_tools.studies.scale_bench import run_scale_bench

    result = run_scale_bench(str(exported), str(emotion_dir), texts=3000, in_memory=2000, ray_texts=500,
                             work=str(tmp_path), out=str(tmp_path))
    rows = result["rows"]
    assert rows["b_streaming_int8"]["texts"] == 3000 and rows["a_in_memory_int8"]["texts"] == 2000
    assert rows["c_ray_local"]["texts"] == 500
    assert all(r["texts_per_s"] > 0 and r["peak_rss_mb"] > 50 for r in rows.values())
    assert sum(1 for _ in open(tmp_path / "scored.csv")) == 3001


def test_scale_bench_writes_only_into_a_work_folder_of_its_own(tiny_predictor, tmp_path, capsys):
    """--work holding a user's corpus.txt, or a predictor folder, is refused before any work, and left as it was;
    a new folder is made and marked, so a second run may write there again."""
    from ktrain_recipes_tools import cli
    from ktrain_recipes_tools.studies.scale_bench import work_folder

    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "corpus.txt").write_text("my own corpus\n")
    for work in (mine, tiny_predictor):
        before = sorted(p.name for p in work.iterdir())
        assert cli.main(["scale-bench", "--predictor", str(tiny_predictor), "--work", str(work), "--texts", "10"]) == 1
        err = capsys.readouterr().err
        assert "holds files scale-bench did not write" in err and len(err.strip().splitlines()) == 1
        assert sorted(p.name for p in work.iterdir()) == before
    assert (mine / "corpus.txt").read_text() == "my own corpus\n"
    fresh = work_folder(tmp_path / "new" / "scale")
    (fresh / "corpus.txt").write_text("made by a first run\n")
    assert work_folder(fresh) == fresh  # its own folder, again


@pytest.mark.parametrize("name, content", [("in.tsv", "text\tid\ni am happy\t1\n"),
                                           ("in.json", '[{"text": "i am happy"}]\n')])
def test_tables_predict_does_not_read_are_refused_not_read_as_lines(exported, tmp_path, capsys, name, content):
    from ktrain_recipes_tools import cli

    path = tmp_path / name
    path.write_text(content)
    assert cli.main(["predict", "--predictor", str(exported), "--input", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"is a {path.suffix} table" in err and "Traceback" not in err


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16"])
def test_a_line_past_the_limit_is_refused_without_reading_it_whole(tmp_path, encoding):
    """A "line" of 20 million characters (a file without newlines) is refused naming its line, and reading it
    never holds more than about the limit in memory; a line of exactly the limit is read."""
    import tracemalloc

    from ktrain_recipes.inference.input_files import MAX_LINE_CHARS

    path = tmp_path / "texts.txt"
    path.write_text("a short text\n" + "é" * MAX_LINE_CHARS + "\n" + "x" * (20 * MAX_LINE_CHARS) + "\n",
                    encoding=encoding)
    tracemalloc.start()
    try:
        with pytest.raises(RecipesError, match=r"line 3 is longer than 1,000,000 characters .*split it"):
            for chunk in read_chunks(path, encoding=encoding, chunk_size=1):
                assert len(chunk.text[0]) in (len("a short text"), MAX_LINE_CHARS)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 30 * MAX_LINE_CHARS  # about 4 bytes a character of the longest line read, never the 20M one


def predict(exported, *args) -> int:
    return cli.main(["predict", "--predictor", str(exported), "--int8", *args])


# --chunk-size below 1
@pytest.mark.parametrize("size", ["0", "-1"])
@pytest.mark.parametrize("name", ["in.txt", "in.csv"])
def test_a_chunk_size_below_one_is_refused(exported, tmp_path, capsys, size, name):
    (tmp_path / name).write_text("text\nhello\n")
    assert predict(exported, "--input", str(tmp_path / name), "--chunk-size", size) == 1
    assert capsys.readouterr().err.strip() == f"error: --chunk-size must be at least 1, got {size}"


# lone surrogates: refused by name, never dropped or a traceback
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


# errors name the file's line (blank lines counted), a null, and a header-only .csv
def test_errors_name_the_line_a_null_and_an_empty_table(exported, tmp_path, capsys):
    (tmp_path / "in.txt").write_text("fine\n\n\nok\n\n\u200b\u200b\nmore\n")
    assert predict(exported, "--input", str(tmp_path / "in.txt")) == 1
    assert "in.txt: line 6 is empty" in capsys.readouterr().err
    (tmp_path / "in.jsonl").write_text('{"text": "fine"}\n\n\n{"text": null}\n')  # a .jsonl names lines, blank ones too
    assert predict(exported, "--input", str(tmp_path / "in.jsonl")) == 1
    assert "in.jsonl: line 4 has no text (null) in 'text'" in capsys.readouterr().err
    (tmp_path / "gap.jsonl").write_text('{"text": "fine"}\n\n{"text": "\\u200b"}\n')
    assert predict(exported, "--input", str(tmp_path / "gap.jsonl")) == 1
    assert "gap.jsonl: line 3 is empty" in capsys.readouterr().err
    (tmp_path / "head.csv").write_text("text\n")
    assert predict(exported, "--input", str(tmp_path / "head.csv")) == 1
    assert "the input holds no text to classify" in capsys.readouterr().err


def test_parquet_chunks_are_whole_whatever_its_row_groups(tmp_path):
    """Every format comes in chunks of exactly --chunk-size rows (the last fewer): the Ray engine lines its batches
    up with them. A parquet file's own batches end at its row groups."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ktrain_recipes.inference.input_files import read_chunks

    texts = [f"text {i}" for i in range(12)]
    pq.write_table(pa.table({"text": texts, "n": pa.array([1, None] * 6, pa.int64())}), tmp_path / "in.parquet",
                   row_group_size=3)
    chunks = list(read_chunks(tmp_path / "in.parquet", chunk_size=5))
    assert [len(c) for c in chunks] == [5, 5, 2]
    assert [t for c in chunks for t in c["text"]] == texts


@pytest.mark.parametrize("when", ["write", "close"])
def test_a_full_disk_is_one_line_and_leaves_no_partial_file(tmp_path, monkeypatch, when):
    """Battery v6 W62: `predict --output` on a full disk gave an OSError traceback and left the partial file."""
    import errno

    import numpy as np

    from ktrain_recipes_tools.inference.writer import PredictionWriter

    class Full:
        def __init__(self, real):
            self.real = real

        def write(self, text):
            if when == "write":
                raise OSError(errno.ENOSPC, "No space left on device")
            return self.real.write(text)

        def close(self):
            self.real.close()
            if when == "close":
                raise OSError(errno.ENOSPC, "No space left on device")

    out = tmp_path / "out.jsonl"
    writer = PredictionWriter(str(out), "jsonl", ["joy", "sadness"], False)
    monkeypatch.setattr(writer, "_open", lambda: Full(open(writer.partial, "w", encoding="utf-8")))
    with pytest.raises(RecipesError, match=r"cannot write '.*out.jsonl' \(No space left on device\): free some "
                                           r"space or choose another --output; nothing was written"):
        with writer:
            writer.write(["i am so happy"], np.array([[0.9, 0.1]], np.float32))
    assert sorted(p.name for p in tmp_path.iterdir()) == []
