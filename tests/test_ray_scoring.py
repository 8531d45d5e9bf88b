"""Scoring a file on Ray Data (``--engine ray``): the same answers and columns as the local engine, settings
checked before Ray starts."""

import time

import pytest

from ktrain_recipes import cli


def predict(exported, *args) -> int:
    return cli.main(["predict", "--predictor", str(exported), "--int8", *args])


# Ray keeps the input's other columns as written, and classifies numeric-looking text as the local engine
@pytest.mark.ray
@pytest.mark.slow
def test_ray_keeps_columns_as_text_like_the_local_engine(exported, tmp_path):
    from ktrain_recipes.inference.ray_scoring import predict_with_ray

    (tmp_path / "in.csv").write_text("id,flag,text\n007,true,i am so happy\n010,false,12345\n")
    assert predict(exported, "--input", str(tmp_path / "in.csv"), "--output", str(tmp_path / "local.csv")) == 0
    predict_with_ray(str(exported), tmp_path / "in.csv", str(tmp_path / "ray.csv"), num_cpus=2)
    assert (tmp_path / "ray.csv").read_text() == (tmp_path / "local.csv").read_text()
    assert "007,true," in (tmp_path / "ray.csv").read_text()


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
