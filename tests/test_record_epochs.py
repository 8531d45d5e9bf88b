"""scripts/record_epochs.py: a long run's finished epochs recorded from its checkpoint, with the CPU."""

import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "record_epochs.py"
spec = importlib.util.spec_from_file_location("record_epochs", SCRIPT)
record_epochs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(record_epochs)


def checkpoint(tmp_path: Path, done: int, seconds: float) -> Path:
    folder = tmp_path / ".run.resume"
    folder.mkdir()
    run = {"run_id": "x", "epochs_completed": done, "train_seconds": seconds, "per_epoch": [],
           "history": {"val_accuracy": [0.91, 0.93][:done], "loss": [1.0, 0.5][:done]},
           "identity": {"model": "mpnet", "epochs": 3, "batch_size": 16}}
    (folder / "run.json").write_text(json.dumps(run))
    return folder


def test_the_record_holds_the_finished_epochs_their_time_and_the_cpu(tmp_path):
    out = tmp_path / "epochs.json"
    record_epochs.main([str(checkpoint(tmp_path, 2, 9000.0)), str(out), "two epochs alone"])
    got = json.loads(out.read_text())
    assert got["epochs_completed"] == 2 and got["epochs"] == 3 and got["train_seconds"] == 9000.0
    assert got["seconds_per_epoch"] == 4500.0 and got["val_accuracy"] == [0.91, 0.93]
    assert got["cpu"] and isinstance(got["cpu_features"], list) and got["about"] == "two epochs alone"
    with pytest.raises(SystemExit, match="written once"):  # a figure is written once
        record_epochs.main([str(tmp_path / ".run.resume"), str(out), "again"])


def test_a_checkpoint_without_a_finished_epoch_is_refused(tmp_path):
    with pytest.raises(SystemExit, match="no finished epoch"):
        record_epochs.main([str(checkpoint(tmp_path, 0, 0.0)), str(tmp_path / "e.json"), "none"])
    with pytest.raises(SystemExit, match="no run.json"):
        record_epochs.main([str(tmp_path), str(tmp_path / "e.json"), "none"])
