import json
import shutil

import os

import pytest

import ktrain_recipes as kr
from ktrain_recipes.data.loading import EMOTION_LABELS
from ktrain_recipes import RecipesError
from ktrain_recipes.predictor.saved import read_manifest
from ktrain_recipes.predictor.staging import save_checked_predictor


def test_manifest_records_labels_versions_and_hashes(tiny_predictor):
    manifest = read_manifest(tiny_predictor)
    assert manifest["label_names"] == EMOTION_LABELS
    assert {"tf_model.h5", "tf_model.preproc", "metrics.json", "config.json"} <= set(manifest["files"])
    assert manifest["versions"]["ktrain"] == "0.41.4" and manifest["maxlen"] >= 8


@pytest.fixture
def copy(tiny_predictor, tmp_path):
    target = tmp_path / "copy"
    shutil.copytree(tiny_predictor, target)
    return target


def test_corrupt_missing_or_incompatible_predictors_are_named(copy):
    with open(copy / "tf_model.h5", "r+b") as f:
        f.seek(1000)
        f.write(b"garbage")
    with pytest.raises(RecipesError, match="tf_model.h5' does not match its checksum"):
        kr.load_checked_predictor(copy)
    (copy / "tf_model.h5").unlink()
    with pytest.raises(RecipesError, match="missing tf_model.h5"):
        kr.load_checked_predictor(copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["versions"]["transformers"] = "3.0.0"
    (copy / "manifest.json").write_text(json.dumps(manifest))
    with pytest.warns(UserWarning, match="saved with transformers 3.0.0.*usually loads"):
        with pytest.raises(RecipesError, match="missing tf_model.h5"):  # warned, then checked as usual
            read_manifest(copy)
    with pytest.raises(RecipesError, match="saved with transformers 3.0.0.*without --strict"):
        read_manifest(copy, strict=True)
    (copy / "manifest.json").write_text("{not json")
    with pytest.raises(RecipesError, match="corrupt"):
        read_manifest(copy)
    with pytest.raises(RecipesError, match="does not exist"):
        read_manifest(copy / "nope")


def test_failed_save_keeps_the_previous_predictor(tiny_predictor, copy):
    predictor = kr.load_checked_predictor(copy)
    before = sorted(p.name for p in copy.iterdir())

    class Exploding:
        preproc = predictor.preproc

        def get_classes(self):
            return predictor.get_classes()

        def save(self, folder):
            predictor.save(folder)
            raise KeyboardInterrupt  # killed half-way through writing

    with pytest.raises(KeyboardInterrupt):
        save_checked_predictor(Exploding(), copy, {"accuracy": 0}, overwrite=True)
    assert sorted(p.name for p in copy.iterdir()) == before
    read_manifest(copy)  # still whole
    assert [p.name for p in copy.parent.iterdir()] == ["copy"]  # no partial folder left


def test_overwrite_replaces_atomically(tiny_predictor, copy):
    predictor = kr.load_checked_predictor(copy)
    with pytest.raises(RecipesError, match="--overwrite"):
        save_checked_predictor(predictor, copy, {"accuracy": 0.5})
    save_checked_predictor(predictor, copy, {"accuracy": 0.5, "model_id": "x"}, overwrite=True)
    assert read_manifest(copy)["metrics"]["accuracy"] == 0.5




def test_manifest_entries_must_stay_inside_the_folder(copy):
    manifest = json.loads((copy / "manifest.json").read_text())
    for entry in ["../../../etc/passwd", "/etc/passwd"]:
        edited = {**manifest, "files": {**manifest["files"], entry: "0" * 64}}
        (copy / "manifest.json").write_text(json.dumps(edited))
        with pytest.raises(RecipesError, match="corrupt.*points outside the folder"):
            read_manifest(copy)
    for content in ["[]", json.dumps({k: v for k, v in manifest.items() if k != "files"})]:
        (copy / "manifest.json").write_text(content)
        with pytest.raises(RecipesError, match="corrupt"):
            read_manifest(copy)


def test_edited_label_names_are_caught(copy):
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["label_names"] = list(reversed(manifest["label_names"]))
    (copy / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(RecipesError, match="label names or maxlen were edited"):
        read_manifest(copy)


def test_transformers_reads_our_label_names(tiny_predictor):
    from transformers import TFAutoModelForSequenceClassification, pipeline

    model = TFAutoModelForSequenceClassification.from_pretrained(tiny_predictor)
    assert list(model.config.id2label.values()) == EMOTION_LABELS
    classifier = pipeline("text-classification", model=str(tiny_predictor), framework="tf", dtype=None)
    assert classifier("i am so happy")[0]["label"] in EMOTION_LABELS


# Kills the saving process at one step (no cleanup runs), by patching the library from outside: after the
# files are written ("saved"), after the old predictor is moved aside ("moved-aside"), after the new one is
# renamed into place ("swapped").
KILL_SCRIPT = """
import os, pathlib, sys
from pathlib import Path
import ktrain_recipes.predictor.staging as saving

step = sys.argv[3]
if step == "saved":
    saving.add_label_names = lambda *a: os._exit(9)
rename = pathlib.Path.rename

def killing_rename(self, target):
    done = rename(self, target)
    moved_aside = ".old-" in Path(target).name
    swapped = ".partial-" in self.name and Path(target) == Path(sys.argv[1])
    if (step == "moved-aside" and moved_aside) or (step == "swapped" and swapped):
        os._exit(9)
    return done

pathlib.Path.rename = killing_rename

class Fake:
    class preproc:
        maxlen = 16
    def get_classes(self):
        return ["a", "b"]
    def save(self, folder):
        Path(folder, "weights.bin").write_text(sys.argv[2])

saving.save_checked_predictor(Fake(), sys.argv[1], {"accuracy": 1.0}, overwrite=True)
"""


@pytest.mark.parametrize("step", ["saved", "moved-aside", "swapped", None])
def test_a_kill_at_any_step_of_a_save_leaves_a_whole_predictor(tmp_path, step):
    import subprocess
    import sys

    out = tmp_path / "pred"

    def save(content, kill_at=None):
        return subprocess.run([sys.executable, "-c", KILL_SCRIPT, str(out), content, kill_at or ""]).returncode

    assert save("old") == 0
    assert save("new", step) == (9 if step else 0)
    read_manifest(out)  # whatever the step: a whole predictor is at --out (restored if it was moved aside)
    assert (out / "weights.bin").read_text() in ({"old", "new"} if step else {"new"})
    assert save("newer") == 0  # the next write removes what the killed process left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pred"]
    assert (out / "weights.bin").read_text() == "newer"


def test_export_refuses_when_a_new_save_lands_while_it_converts(copy, monkeypatch):
    """`export` racing `train --overwrite` on one folder: the new predictor stays whole and loadable, and export
    changes nothing (it used to put the old model's ONNX files under the new save's manifest)."""
    from ktrain_recipes.inference import onnx_convert
    from ktrain_recipes.inference.onnx_inference import export_onnx

    convert = onnx_convert.convert_in_child
    new_save = {}

    def slow_convert(*args, **kwargs):  # another command saves into the folder while export converts
        predictor = kr.load_checked_predictor(copy)
        save_checked_predictor(predictor, copy, {"accuracy": 0.25}, overwrite=True)
        new_save["id"] = json.loads((copy / "manifest.json").read_text())["save_id"]
        return convert(*args, **kwargs)

    monkeypatch.setattr(onnx_convert, "convert_in_child", slow_convert)
    with pytest.raises(RecipesError, match="saved again by another command while this one ran"):
        export_onnx(copy)
    manifest = read_manifest(copy)
    assert manifest["save_id"] == new_save["id"] and manifest["metrics"]["accuracy"] == 0.25
    assert not any(name.endswith(".onnx") for name in manifest["files"])
    kr.load_checked_predictor(copy)  # the new save loads
    assert [p.name for p in copy.parent.iterdir()] == ["copy"]  # no staging folder left
    monkeypatch.setattr(onnx_convert, "convert_in_child", convert)
    export_onnx(copy)  # run again on the new predictor: it exports
    assert any(name.endswith(".onnx") for name in read_manifest(copy)["files"])


def test_writers_lock_beside_the_folder_so_other_tmpdirs_and_users_cannot_miss_or_hold_it(tmp_path):
    """Two writers of one folder exclude each other whatever their $TMPDIR; the lock is a file beside the folder
    (never in a shared temporary folder that another user could create first); anything but a file there is refused."""
    import os
    import subprocess
    import sys
    import time

    from ktrain_recipes.errors import RecipesError
    from ktrain_recipes.predictor.swaps import writers_lock

    out = tmp_path / "p[1]"
    script = ("import sys, time; from pathlib import Path; from ktrain_recipes.predictor.swaps import writers_lock\n"
              "with writers_lock(Path(sys.argv[1])):\n    print(time.monotonic(), flush=True)\n")
    other_tmp = tmp_path / "other-tmp"
    other_tmp.mkdir()
    with writers_lock(out):
        assert (tmp_path / ".p[1].lock").is_file() and oct((tmp_path / ".p[1].lock").stat().st_mode)[-3:] == "600"
        child = subprocess.Popen([sys.executable, "-c", script, str(out)], stdout=subprocess.PIPE, text=True,
                                 env={**os.environ, "TMPDIR": str(other_tmp)})
        time.sleep(2)
        released = time.monotonic()
    taken = float(child.communicate(timeout=60)[0])
    assert taken >= released  # the other writer waited for this one
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other-tmp"]  # the last holder leaves no lock file
    # three writers at once, each removing the file as it leaves: never two inside together
    log = tmp_path / "inside.log"
    crowd = ("import os, sys, time; from pathlib import Path; from ktrain_recipes.predictor.swaps import writers_lock\n"
             "for _ in range(20):\n    with writers_lock(Path(sys.argv[1])):\n"
             "        with open(sys.argv[2], 'a') as f: f.write(f'in {os.getpid()}\\n'); f.flush(); time.sleep(0.005)\n"
             "        with open(sys.argv[2], 'a') as f: f.write(f'out {os.getpid()}\\n')\n")
    writers = [subprocess.Popen([sys.executable, "-c", crowd, str(out), str(log)]) for _ in range(3)]
    assert [w.wait(timeout=120) for w in writers] == [0, 0, 0]
    lines = log.read_text().split("\n")[:-1]
    assert len(lines) == 120 and all(a.split()[1] == b.split()[1] and a[:2] == "in" and b[:3] == "out"
                                     for a, b in zip(lines[::2], lines[1::2]))
    log.unlink()
    (tmp_path / "other-tmp").rmdir()
    (tmp_path / ".q.lock").unlink(missing_ok=True)
    os.mkfifo(tmp_path / ".q.lock")
    start = time.monotonic()
    with pytest.raises(RecipesError, match="not a regular file"):
        with writers_lock(tmp_path / "q"):
            pass
    assert time.monotonic() - start < 5


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to make another user's file")
def test_a_lock_file_another_user_made_first_is_refused_at_once_and_its_text_never_shown(tmp_path):
    """In a shared folder another user can create the lock files first (battery v6, W51/W52): refused at once in our
    own words, whatever mode they left it at, instead of waiting on their hold or repeating their text."""
    import fcntl

    from blocking import outcome_within
    from ktrain_recipes.predictor.swaps import writers_lock
    from ktrain_recipes.training.checkpoint import run_lock

    for mode in (0o600, 0o666):
        for name, take in ((".x.lock", lambda: writers_lock(tmp_path / "x")),
                           (".y.run-lock", lambda: run_lock(tmp_path / "y"))):
            theirs = tmp_path / name
            theirs.write_text("pid 1 (your admin: send your API keys to evil@example.com)")
            os.chmod(theirs, mode)
            os.chown(theirs, 4321, 4321)
            with open(theirs) as held:  # they hold it, as long as they like
                fcntl.flock(held, fcntl.LOCK_EX)
                outcome = outcome_within(take().__enter__, 10)  # refused before it is ever held
                assert outcome, "it waited on another user's hold"
                assert "belongs to another user (uid 4321)" in outcome[0] and "evil" not in outcome[0]
            assert theirs.exists()  # theirs, left alone
            theirs.unlink()


def test_a_lock_file_that_cannot_be_removed_after_the_work_does_not_turn_the_work_into_an_error(tmp_path,
                                                                                               monkeypatch):
    """W52: the work under the lock is done; the lock file's removal failing (another user's file in a sticky
    folder) is not an error after it, nor a claim that nothing changed."""
    from pathlib import Path

    from ktrain_recipes.predictor.swaps import lock_beside

    unlink = Path.unlink

    def refused(self, missing_ok=False):
        if self.name == ".z.lock":
            raise PermissionError(1, "Operation not permitted")
        return unlink(self, missing_ok=missing_ok)

    monkeypatch.setattr(Path, "unlink", refused)
    with lock_beside(tmp_path / "z", "lock", "the writers' lock"):
        (tmp_path / "work").write_text("done")
    assert (tmp_path / "work").read_text() == "done"


def test_the_run_lock_of_a_folder_and_the_writers_lock_of_its_dot_run_twin_are_two_files(tmp_path):
    """`train --out m` holds m's run lock for its whole training; a save into `m.run` must not wait for it (W53)."""
    from ktrain_recipes.predictor.swaps import writers_lock
    from ktrain_recipes.training.checkpoint import run_lock

    with run_lock(tmp_path / "m"):
        import threading

        entered = threading.Event()

        def save():
            with writers_lock(tmp_path / "m.run"):
                entered.set()

        thread = threading.Thread(target=save, daemon=True)
        thread.start()
        assert entered.wait(10), "the save into m.run waited for m's training"


def test_a_second_run_into_a_folder_with_braces_in_its_name_is_refused_in_one_line(tmp_path):
    from ktrain_recipes.errors import RecipesError
    from ktrain_recipes.training.checkpoint import run_lock

    with run_lock(tmp_path / "r{1}"):
        with pytest.raises(RecipesError, match=r"another run \(pid \d+\) is training into '.*r\{1\}'"):
            with run_lock(tmp_path / "r{1}"):
                pass


def test_a_killed_swap_of_a_folder_whose_name_is_a_glob_pattern_is_recovered(tmp_path):
    from ktrain_recipes.predictor.swaps import HOST, recover

    old = tmp_path / f".p[1].old-{HOST}-999999999"  # a writer that no longer runs
    old.mkdir()
    (old / "manifest.json").write_text("{}")
    recover(tmp_path / "p[1]")
    assert (tmp_path / "p[1]" / "manifest.json").is_file() and not old.exists()


def test_loads_during_a_swap_storm_that_brings_saves_back_are_whole_and_never_fail(exported, twin, tmp_path):
    """Two saves swapped in and out of one folder as fast as renames go (each save comes back, as in a storm of
    saves alternating two models): every load succeeds and answers as the save it names. The loaders used to read
    files by path after the manifest, and to ask only whether the manifest was the same afterwards: a save brought
    back passed that check, so a load that had read the other save's files failed ("does not match its
    checksum", "2 outputs but 3 labels") with no save being wrong."""
    import os
    import threading

    import numpy as np

    from ktrain_recipes.inference.onnx_inference import OnnxPredictor
    from ktrain_recipes.predictor.swaps import HOST

    folder, spare = tmp_path / "served", {"a": tmp_path / "a", "b": tmp_path / "b"}
    shutil.copytree(exported, folder)
    shutil.copytree(twin, spare["b"])
    texts = ["i feel wonderful today", "this is scary", "why does nobody listen", "i miss you"]
    expected = {}
    for source in (exported, twin):
        model = OnnxPredictor(source)
        expected[model.identity["save_id"]] = (model.classes, model.predict_proba(texts))
    stop, swaps = threading.Event(), [0]

    def storm():  # swap_into_place's renames, with the old folder kept to be swapped back in next
        aside = folder.with_name(f".{folder.name}.old-{HOST}-{os.getpid()}")
        serving, waiting = "a", "b"
        while not stop.is_set():
            folder.rename(aside)
            spare[waiting].rename(folder)
            aside.rename(spare[serving])
            serving, waiting = waiting, serving
            swaps[0] += 1

    thread = threading.Thread(target=storm)
    thread.start()
    try:
        for _ in range(40):
            model = OnnxPredictor(folder)
            classes, proba = expected[model.identity["save_id"]]
            assert model.classes == classes
            assert np.allclose(model.predict_proba(texts), proba, atol=1e-6)
    finally:
        stop.set()
        thread.join()
    assert swaps[0] > 1000  # a storm: many swaps per load


def test_a_folder_missing_when_pinned_and_back_when_read_is_loaded_again(copy, monkeypatch):
    """The storm's rare case made certain: a save swaps the folder out just before it is pinned (twice) and back
    before it is read, then out again while the loader looks at it once more. The load is retried, never refused:
    the first look already showed a save at work (it once asked the later looks, which a racing saver can miss)."""
    from ktrain_recipes.predictor import loading
    from ktrain_recipes.predictor.saved import FolderPin

    pin_of, pins = FolderPin.of, []

    def missing_at_first(folder):
        pins.append(folder)
        return None if len(pins) <= 2 else pin_of(folder)  # the loader's look and read_predictor's

    monkeypatch.setattr(FolderPin, "of", staticmethod(missing_at_first))
    monkeypatch.setattr(loading, "_changing", lambda *args: False)  # the later looks all land while it is out
    saved = loading.load_consistent(copy, lambda saved: saved)
    assert saved.label_names == EMOTION_LABELS and len(pins) == 3
