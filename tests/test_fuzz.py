"""Garbage in: every loader and predict either works or raises RecipesError, never anything else."""

import random

import pytest

import ktrain_recipes as kr
from ktrain_recipes import RecipesError
from ktrain_recipes.data import read_texts

ALPHABET = "abc xyz;,\"'\t\\é漢字🙂\x00\r" + "".join(kr.EMOTION_LABELS)


def garbage_line(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.3:
        return f"{''.join(rng.choices(ALPHABET, k=rng.randint(0, 40)))};{rng.choice(kr.EMOTION_LABELS)}"
    if kind < 0.5:
        return rng.choice(["", ";", ";;", "text;", ";joy", "a;b;c", "x" * 5000 + ";joy", "\ufeffhi;joy"])
    return "".join(rng.choices(ALPHABET, k=rng.randint(0, 80)))


@pytest.mark.parametrize("seed", range(15))
@pytest.mark.parametrize("name", ["train.txt", "val.txt", "train.csv"])
def test_loaders_never_crash_uncontrolled(tmp_path, seed, name):
    rng = random.Random(seed)
    (tmp_path / name).write_text("\n".join(garbage_line(rng) for _ in range(rng.randint(0, 12))), encoding="utf-8")
    for load in (kr.load_emotion, lambda p: read_texts(p / name)):
        try:
            load(tmp_path)
        except RecipesError as exc:
            assert "\n" not in str(exc)


def test_predict_on_random_strings(tiny_predictor):
    predictor = kr.load_checked_predictor(tiny_predictor)
    rng = random.Random(0)
    texts = ["".join(rng.choices(ALPHABET, k=rng.randint(1, 3000))) for _ in range(25)] + ["🙂", "\x00", "漢字"]
    for text in texts:
        try:
            assert kr.classify(predictor, [text])[0] in kr.EMOTION_LABELS
        except RecipesError as exc:  # blank-only strings are rejected on purpose
            assert "empty or only whitespace" in str(exc) and not text.strip("\x00 \t\r\n")
