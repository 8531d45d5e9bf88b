"""Garbage in: every loader and predict either works or raises RecipesError, never anything else."""

import random

import pytest

import ktrain_recipes as kr
from ktrain_recipes.data.loading import EMOTION_LABELS
from ktrain_recipes import RecipesError
from ktrain_recipes.inference.input_files import read_texts

ALPHABET = "abc xyz;,\"'\t\\é漢字🙂\x00\r" + "".join(EMOTION_LABELS)


def garbage_line(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.3:
        return f"{''.join(rng.choices(ALPHABET, k=rng.randint(0, 40)))};{rng.choice(EMOTION_LABELS)}"
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
    names = list(predictor.get_classes())
    answered = 0
    for text in texts:
        try:
            label = kr.classify(predictor, [text])[0]
        except RecipesError as exc:  # blank-only strings are rejected on purpose
            assert "empty or only whitespace" in str(exc) and not text.strip("\x00 \t\r\n")
            continue
        # the label is the one the model's own probabilities for that text put first, not merely some label
        probs = kr.classify(predictor, [text], proba=True)[0]
        assert label == names[int(probs.argmax())] and abs(float(probs.sum()) - 1) < 1e-4, (text[:40], label, probs)
        answered += 1
    assert answered >= 20


@pytest.mark.parametrize("seed", range(10))
def test_random_numeric_flags_are_accepted_in_range_or_refused_in_one_line(seed, monkeypatch, capsys):
    from ktrain_recipes_tools import cli

    rng = random.Random(seed)
    values = ["0", "-1", "nan", "inf", "-inf", "1e-4", "3", "1e999", "2.5", "", "x", "-0"]
    flags = {flag: rng.choice(values) for flag in ["--lr", "--batch-size", "--epochs", "--seed", "--limit",
                                                   "--eval-limit", "--maxlen", "--val-fraction"]}
    seen = []
    monkeypatch.setattr("ktrain_recipes.training.recipe.run_recipe", lambda config: seen.append(config))
    try:
        status = cli.main(["train", "--out", "o", *[part for item in flags.items() for part in item]])
    except SystemExit as exc:  # argparse: a value of the wrong type (its own usage message)
        assert exc.code == 2
        return
    if status == 1:
        err = capsys.readouterr().err.strip()
        assert err.startswith("error: --") and "\n" not in err and not seen
    else:
        config = seen[0]
        assert config.lr > 0 and config.lr != float("inf") and config.batch_size >= 1 and config.epochs >= 1
        assert config.seed >= 0 and 0 < config.val_fraction < 1


@pytest.mark.parametrize("seed", range(8))
def test_random_bytes_as_input_file_are_read_or_refused_in_one_line(tmp_path, seed):
    rng = random.Random(seed)
    name = rng.choice(["in.txt", "in.csv", "IN.CSV", "in.tsv"])
    (tmp_path / name).write_bytes(bytes(rng.randrange(256) for _ in range(rng.randint(0, 300))))
    try:
        table = read_texts(tmp_path / name)
        assert "text" in table.columns
    except RecipesError as exc:
        assert "\n" not in str(exc)
