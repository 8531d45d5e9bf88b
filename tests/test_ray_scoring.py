"""Scoring a file on Ray Data (``--engine ray``): the same answers and columns as the local engine, settings
checked before Ray starts."""

import time

import pytest

from ktrain_recipes_tools import cli


def predict(exported, *args) -> int:
    return cli.main(["predict", "--predictor", str(exported), "--int8", *args])


# Ray's address and chunk size are checked before Ray starts
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


# a Ray address nothing answers: one line at once, not minutes of retries
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


# Ray writes the rows by the local engine's rules: a .csv's columns stay text as written ("007"), a user's p_<label>
# column is refused, not replaced; a .jsonl row keeps its own fields (no "score": null added) and its ints (1, not
# 1.0); errors name the file's line. One Ray for all (each start costs half a minute)
@pytest.mark.ray
@pytest.mark.slow
def test_ray_follows_the_local_engines_rules_for_columns_values_and_lines(exported, tmp_path):
    import json

    import ray

    from ktrain_recipes.errors import RecipesError
    from ktrain_recipes_tools.inference.ray_scoring import predict_with_ray

    rows = [{"text": "i am so happy", "score": 1}, {"text": "i feel awful", "score": None, "note": "late"},
            {"text": "what a day", "id": "x7"}]
    (tmp_path / "in.jsonl").write_text("\n".join(json.dumps(r) for r in rows[:2]) + "\n\n" + json.dumps(rows[2]) + "\n")
    (tmp_path / "p.csv").write_text("text,p_joy\ni am so happy,mine\n")
    (tmp_path / "blank.jsonl").write_text('{"text": "fine"}\n\n{"text": "   "}\n')
    (tmp_path / "in.csv").write_text("id,flag,text\n007,true,i am so happy\n010,false,12345\n")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        assert predict(exported, "--input", str(tmp_path / "in.csv"), "--output", str(tmp_path / "local.csv")) == 0
        predict_with_ray(str(exported), tmp_path / "in.csv", str(tmp_path / "ray.csv"))
        assert (tmp_path / "ray.csv").read_text() == (tmp_path / "local.csv").read_text()
        assert "007,true," in (tmp_path / "ray.csv").read_text()

        assert predict(exported, "--input", str(tmp_path / "in.jsonl"), "--output", str(tmp_path / "local.jsonl")) == 0
        assert predict_with_ray(str(exported), tmp_path / "in.jsonl", str(tmp_path / "ray.jsonl"), proba=False) == 3
        assert (tmp_path / "ray.jsonl").read_text() == (tmp_path / "local.jsonl").read_text()
        written = [json.loads(line) for line in (tmp_path / "ray.jsonl").read_text().splitlines()]
        assert [{k: v for k, v in r.items() if k in rows[i]} for i, r in enumerate(written)] == rows
        assert "score" not in written[2] and isinstance(written[0]["score"], int)

        with pytest.raises(RecipesError, match="has a 'p_joy' column, which the probabilities would overwrite"):
            predict_with_ray(str(exported), tmp_path / "p.csv", str(tmp_path / "p-out.csv"))
        assert not (tmp_path / "p-out.csv").exists()
        with pytest.raises(RecipesError, match=r"blank.jsonl: line 3 is empty"):
            predict_with_ray(str(exported), tmp_path / "blank.jsonl", str(tmp_path / "b-out.csv"))
    finally:
        ray.shutdown()
