"""manifest.json is read without ever blocking: a FIFO, a device-like file or a huge file where the manifest should be
is refused (or, for the reloader's digest, seen as no manifest), at once."""

import os
import shutil
import threading

import pytest

from ktrain_recipes import RecipesError
from ktrain_recipes.predictor.manifest import MAX_MANIFEST_BYTES, manifest_digest
from ktrain_recipes.predictor.saved import read_manifest


def finishes(call, seconds: float = 5.0):
    """Run ``call`` in a thread; return its outcome, or fail if it is still blocked after ``seconds``."""
    outcome = {}

    def run():
        try:
            outcome["value"] = call()
        except Exception as exc:  # noqa: BLE001
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "blocked reading the manifest"
    return outcome


@pytest.mark.parametrize("kind", ["fifo", "huge"])
def test_a_manifest_that_is_not_a_small_regular_file_is_refused_at_once(tiny_predictor, tmp_path, kind):
    folder = tmp_path / "pred"
    shutil.copytree(tiny_predictor, folder)
    (folder / "manifest.json").unlink()
    if kind == "fifo":
        os.mkfifo(folder / "manifest.json")  # our own FIFO in a temporary folder: reading it would wait for ever
    else:
        with open(folder / "manifest.json", "wb") as f:
            f.truncate(MAX_MANIFEST_BYTES + 1)
    assert finishes(lambda: manifest_digest(folder)) == {"value": None}
    outcome = finishes(lambda: read_manifest(folder))
    assert isinstance(outcome.get("error"), RecipesError) and "is corrupt" in str(outcome["error"])


def test_the_digest_of_a_real_manifest(tiny_predictor):
    import hashlib

    expected = hashlib.sha256((tiny_predictor / "manifest.json").read_bytes()).hexdigest()
    assert manifest_digest(tiny_predictor) == expected
