"""--distribute: MirroredStrategy over 2 logical CPU devices trains, saves and reloads in one process;
MultiWorkerMirroredStrategy with 2 worker processes on 127.0.0.1. Each runs in a fresh process, because
logical devices and a cluster can only be set up before TensorFlow starts."""

import json
import os
import subprocess
import sys

import pytest

from ktrain_recipes import RecipeConfig, RecipesError
import signal
import time


SCRIPT = """
import json, sys
import ktrain_recipes as kr
config = kr.RecipeConfig(**json.loads(sys.argv[1]))
metrics = kr.run_recipe(config)
report = {"accuracy": metrics["accuracy"], "confusion": metrics.get("confusion_matrix")}
if sys.argv[2] == "reload":
    predictor = kr.load_checked_predictor(config.out)  # in the same process as the distributed training
    ds = kr.load_data_for(config)
    texts, labels = kr.sample(ds.texts("validation"), ds.labels("validation"), config.eval_limit, config.seed)
    report["reloaded_accuracy"] = sum(p == y for p, y in zip(kr.classify(predictor, texts), labels)) / len(labels)
print("REPORT " + json.dumps(report))
"""


def run(settings: dict, mode: str = "reload", env=None, timeout: float = 600):
    return subprocess.Popen([sys.executable, "-c", SCRIPT, json.dumps(settings), mode], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env={**os.environ, **(env or {})})


def report(proc, timeout: float = 600) -> tuple[dict, str]:
    out = proc.communicate(timeout=timeout)[0]
    assert proc.returncode == 0, out[-3000:]
    line = next(line for line in out.splitlines() if line.startswith("REPORT "))
    return json.loads(line[len("REPORT "):]), out


def test_settings_are_checked():
    with pytest.raises(RecipesError, match="--distribute must be"):
        RecipeConfig(distribute="tpu").check()
    with pytest.raises(RecipesError, match="--devices .* only applies with --distribute mirrored"):
        RecipeConfig(devices=2).check()
    with pytest.raises(RecipesError, match="--lr-find runs on one device"):
        RecipeConfig(distribute="mirrored", lr_find=True).check()


@pytest.mark.slow
def test_mirrored_on_two_logical_devices_trains_saves_and_reloads(tiny_models, small_data, tmp_path):
    base = {"model": tiny_models["bert"], "data": str(small_data), "epochs": 1, "batch_size": 8, "lr": 1e-3,
            "seed": 3, "eval_limit": 60}
    mirrored, out = report(run({**base, "out": str(tmp_path / "m"), "distribute": "mirrored", "devices": 2}))
    assert "mirrored: 2 replica(s), global batch 16 (8 per device)" in out
    assert mirrored["reloaded_accuracy"] == pytest.approx(mirrored["accuracy"])
    single, _ = report(run({**base, "out": str(tmp_path / "s"), "batch_size": 16}))  # the same global batch
    assert abs(mirrored["accuracy"] - single["accuracy"]) <= 0.1  # a tiny random model: close, not equal
    manifest = json.loads((tmp_path / "m" / "manifest.json").read_text())
    assert manifest["label_names"] and (tmp_path / "m" / "tf_model.h5").is_file()


@pytest.mark.slow
def test_multiworker_two_processes_on_loopback(tiny_models, small_data, tmp_path):
    from servers import free_port

    ports = [free_port(), free_port()]
    cluster = {"worker": [f"127.0.0.1:{p}" for p in ports]}
    settings = {"model": tiny_models["bert"], "data": str(small_data), "epochs": 1, "batch_size": 8, "lr": 1e-3,
                "seed": 3, "eval_limit": 60, "distribute": "multiworker", "out": str(tmp_path / "mw")}
    procs = [run(settings, "reload" if i == 0 else "none",
                 env={"TF_CONFIG": json.dumps({"cluster": cluster, "task": {"type": "worker", "index": i}})})
             for i in range(2)]
    (chief, chief_out), (worker, worker_out) = report(procs[0], 600), report(procs[1], 600)
    assert "multiworker: 2 replica(s)" in chief_out and "the chief (worker 0) saves" in worker_out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mw"]  # one predictor, saved by the chief
    # the chief's saved predictor answers as the worker's own weights did, on the same validation texts
    assert chief["reloaded_accuracy"] == pytest.approx(worker["accuracy"])
    assert chief["confusion"] == worker["confusion"]


def lone_worker(tiny_models, small_data, tmp_path, timeout_s: float):
    """`train` as worker 0 of a two-worker TF_CONFIG whose worker 1 never starts."""
    from servers import free_port

    ports = [free_port(), free_port()]
    tf_config = {"cluster": {"worker": [f"127.0.0.1:{p}" for p in ports]}, "task": {"type": "worker", "index": 0}}
    args = ["train", "--model", tiny_models["bert"], "--data", str(small_data), "--epochs", "1", "--batch-size", "8",
            "--distribute", "multiworker", "--worker-timeout-s", str(timeout_s), "--out", str(tmp_path / "mw")]
    proc = subprocess.Popen([sys.executable, "-m", "ktrain_recipes", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "TF_CONFIG": json.dumps(tf_config)})
    return proc, ports[1]


@pytest.mark.slow
def test_a_worker_that_never_starts_is_named_and_the_wait_ends(tiny_models, small_data, tmp_path):
    proc, port = lone_worker(tiny_models, small_data, tmp_path, 15)
    out = proc.communicate(timeout=300)[0]
    assert proc.returncode == 1, out[-2000:]
    assert f"waiting for worker 1 (127.0.0.1:{port}) to start" in out  # said while waiting
    assert f"the cluster did not form within 15 s: worker 1 (127.0.0.1:{port}) did not start" in out
    assert "Traceback" not in out and not (tmp_path / "mw").exists()


@pytest.mark.slow
def test_sigterm_stops_the_wait_for_workers(tiny_models, small_data, tmp_path):

    proc, _ = lone_worker(tiny_models, small_data, tmp_path, 600)
    lines, end = [], time.monotonic() + 240
    while time.monotonic() < end:  # until it says it waits (10 s into the wait)
        line = proc.stdout.readline()
        lines.append(line)
        if "waiting for worker 1" in line or not line:
            break
    proc.send_signal(signal.SIGTERM)
    out = "".join(lines) + proc.communicate(timeout=60)[0]
    assert proc.returncode == 1, out[-2000:]
    assert "stopped by SIGTERM while waiting for the other workers" in out and "Traceback" not in out


def test_one_task_saves_whether_or_not_the_cluster_names_a_chief():
    from ktrain_recipes.training.distribute import chief_task

    with_chief = ["chief", "worker"]
    assert [chief_task(with_chief, t, i) for t, i in [("chief", 0), ("worker", 0), ("worker", 1)]] == [True, False,
                                                                                                          False]
    workers = ["worker"]
    assert [chief_task(workers, "worker", i) for i in range(3)] == [True, False, False]
    assert chief_task(["worker", "evaluator"], "evaluator", 0) is False
    assert chief_task([], None, None) is True  # not a multi-worker run


@pytest.mark.parametrize("address", ["localhost:99999", "localhost:0", "localhost:8²", "localhost:", ":2222",
                                     "localhost:８０８０"])
def test_tf_config_addresses_need_a_host_and_a_port_from_1_to_65535(address):
    from ktrain_recipes.training.distribute import check_tf_config

    config = {"cluster": {"worker": [address]}, "task": {"type": "worker", "index": 0}}
    with pytest.raises(RecipesError, match="'host:port' addresses"):
        check_tf_config(json.dumps(config))
    config["cluster"]["worker"] = ["localhost:2222"]
    assert check_tf_config(json.dumps(config))["cluster"]["worker"] == ["localhost:2222"]


# TF_CONFIG's shape is checked before TensorFlow reads it
@pytest.mark.parametrize("raw, message", [
    ("[]", "must be a JSON object"),
    ('"x"', "must be a JSON object"),
    ('{"clusters": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 0}}', "unknown: clusters"),
    ('{"cluster": {"worker": "a:1,b:2"}, "task": {"type": "worker", "index": 0}}', "list of 'host:port'"),
    ('{"cluster": {"worker": ["a:1"]}, "task": {"type": "boss", "index": 0}}', "'task' must be"),
    ('{"cluster": {"worker": ["a:1", "b:2"]}, "task": {"type": "worker", "index": 2}}', "task index 2 is past"),
])
def test_a_malformed_tf_config_is_refused(raw, message):
    from ktrain_recipes.training.distribute import check_tf_config

    with pytest.raises(RecipesError, match=message):
        check_tf_config(raw)
    good = '{"cluster": {"worker": ["a:1", "b:2"]}, "task": {"type": "worker", "index": 1}}'
    assert check_tf_config(good)["task"]["index"] == 1
