"""Shared fixtures: the real emotion folder, small data folders, tiny models, an isolated cache."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import ktrain_recipes  # noqa: F401  (compat shims before anything imports TensorFlow)

ROOT = Path(__file__).resolve().parent.parent
EMOTION = Path(os.environ.get("EMOTION_DATA") or ROOT.parent / "shared" / "data" / "emotion")


def pytest_configure(config):
    os.environ.setdefault("KTRAIN_RECIPES_CACHE", str(ROOT / ".cache"))
    os.environ["HF_HUB_OFFLINE"] = "1"  # tests never download; hub paths are tested explicitly
    os.environ["HF_DATASETS_OFFLINE"] = "1"


@pytest.fixture(scope="session")
def emotion_dir() -> Path:
    if not (EMOTION / "train.txt").is_file():
        pytest.fail(f"emotion data not found at {EMOTION}: set EMOTION_DATA to ../shared/data/emotion")
    return EMOTION


@pytest.fixture(scope="session")
def emotion(emotion_dir):
    return ktrain_recipes.load_emotion(emotion_dir)


@pytest.fixture(scope="session")
def small_data(emotion, tmp_path_factory) -> Path:
    """A folder with 150 train and 60 val lines of the real data, in the original txt format."""
    folder = tmp_path_factory.mktemp("small")
    for split, name, n in [("train", "train.txt", 150), ("validation", "val.txt", 60)]:
        texts, labels = ktrain_recipes.sample(emotion.texts(split), emotion.labels(split), n, seed=1)
        (folder / name).write_text("".join(f"{t};{y}\n" for t, y in zip(texts, labels)))
    return folder


@pytest.fixture(scope="session")
def tiny_models(emotion) -> dict[str, str]:
    """Tiny random checkpoints of every family (built once, cached)."""
    from ktrain_recipes import tiny

    texts = emotion.texts("train")[:3000]
    return {f: tiny.tiny_model(f, texts) for f in tiny.FAMILIES}


@pytest.fixture(scope="session")
def tiny_predictor(tiny_models, small_data, tmp_path_factory) -> Path:
    """A predictor trained (one epoch) from the tiny BERT, shared by predictor and CLI tests."""
    out = tmp_path_factory.mktemp("pred") / "bert"
    ktrain_recipes.run_recipe(tiny_models["bert"], data=str(small_data), out=out, epochs=1, batch_size=16,
                              lr=1e-3, seed=3)
    return out
