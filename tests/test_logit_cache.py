"""--logits-cache: a teacher's logits per text, computed once for the runs of one teacher save."""

import json

import numpy as np
import pytest

import ktrain_recipes as kr
from ktrain_recipes import RecipesError
from ktrain_recipes_tools import cli
from ktrain_recipes_tools.training.logit_cache import cache_file, cached_logits, text_keys


def fake_teacher(asked: list):
    """Logits that depend on the text alone, recording which texts were computed."""
    def compute(texts):
        asked.append(list(texts))
        return np.array([[len(t), t.count("a"), -len(t)] for t in texts], np.float32)
    return compute


def through(folder, save_id, texts, compute):
    return cached_logits(folder, save_id, texts, 3, lambda rows: compute([texts[i] for i in rows]))


def test_a_text_is_computed_once_per_teacher_save_and_read_back_in_order(tmp_path):
    asked = []
    compute = fake_teacher(asked)
    first = ["i feel fine", "so angry", "i feel fine", "a calm day"]  # a repeated text is computed once
    assert np.array_equal(through(tmp_path, "abc123", first, compute), compute(first))
    assert asked[0] == ["i feel fine", "so angry", "a calm day"]
    asked.clear()
    second = ["a calm day", "new text here", "so angry"]  # another seed's copies beside texts already kept
    assert np.array_equal(through(tmp_path, "abc123", second, compute), compute(second))
    assert asked[0] == ["new text here"]
    asked.clear()
    through(tmp_path, "abc123", first + second, compute)
    assert asked == []  # everything kept: the teacher is not run
    through(tmp_path, "def456", ["so angry"], compute)  # another save of the teacher shares nothing
    assert asked[0] == ["so angry"]
    with np.load(cache_file(tmp_path, "abc123")) as kept:
        assert sorted(kept["keys"].tolist()) == sorted(text_keys(["i feel fine", "so angry", "a calm day",
                                                                  "new text here"]).tolist())


def test_a_cache_that_cannot_be_read_is_set_aside_and_computed_again(tmp_path, capsys):
    asked = []
    path = cache_file(tmp_path, "abc123")
    path.write_bytes(b"not an npz")
    assert np.array_equal(through(tmp_path, "abc123", ["so angry"], fake_teacher(asked)),
                          fake_teacher([])(["so angry"]))
    assert asked == [["so angry"]] and "could not be read" in capsys.readouterr().err
    assert path.with_name(path.name + ".unreadable").read_bytes() == b"not an npz"  # kept for a look, not trusted
    np.savez(path, keys=text_keys(["so angry"]), logits=np.zeros((1, 5), np.float32))  # another teacher's shape
    through(tmp_path, "abc123", ["so angry"], fake_teacher(asked))
    assert len(asked) == 2


def test_a_sentence_pair_has_a_key_of_its_own():
    keys = text_keys([("a b", "c"), ("a", "b c"), "a b c", ("a b", "c")]).tolist()
    assert keys[0] == keys[3] and len(set(keys[:3])) == 3  # a pair is not its parts joined another way, nor a text
    # whatever a weaker key would join the parts with (a tab, a newline, a JSON list), no pair shares a key with
    # another pair or with a text, and the order of the two sentences counts
    tricky = [("a\tb", "c"), ("a", "b\tc"), "a\tb\tc", ("a\nb", "c"), ("a", "b\nc"), "a\nb\nc", ("a", "b"),
              '["a", "b"]', "a\tb", "a\nb", ("b", "a"), "ab", "a b"]
    assert len(set(text_keys(tricky).tolist())) == len(tricky)


def test_a_teacher_without_a_save_id_is_refused(tmp_path):
    for bad in ("", None, "../x"):
        with pytest.raises(RecipesError, match="save_id"):
            cache_file(tmp_path, bad)


def test_a_cached_teacher_teaches_a_student_of_another_tokenizer_what_it_would_uncached(
        tiny_predictor, tiny_models, small_data, tmp_path, monkeypatch):
    from ktrain_recipes_tools.training import distill as distilling

    teacher = kr.load_checked_predictor(tiny_predictor)
    texts = ["i feel fine", "a much longer text about how awful and lonely and sad i feel today", "joy", "so angry"]
    plain = distilling.logits_of(teacher, None, texts, [0] * 4)
    cache = tmp_path / "logits"
    assert np.allclose(distilling.logits_of(teacher, str(cache), texts[:2], [0, 0]), plain[:2], atol=1e-5)
    assert np.allclose(distilling.logits_of(teacher, str(cache), texts, [0] * 4), plain, atol=1e-5)

    runs = []
    real = distilling.teacher_logits
    monkeypatch.setattr(distilling, "teacher_logits", lambda model, data: runs.append(len(data.x)) or real(model, data))
    # all of small_data's texts for both seeds (--limit would draw other ones for another seed)
    flags = ["distill", "--teacher", str(tiny_predictor), "--student", tiny_models["roberta"], "--layers", "2",
             "--data", str(small_data), "--epochs", "1", "--batch-size", "16", "--logits-cache", str(cache)]
    assert cli.main([*flags, "--out", str(tmp_path / "a"), "--augment", "1", "--seed", "1"]) == 0
    # the training texts and one copy of each, then the validation texts (a copy may happen to equal a text)
    assert len(runs) == 2 and 150 < runs[0] <= 300 and runs[1] <= 60
    first = sum(runs)
    runs.clear()
    assert cli.main([*flags, "--out", str(tmp_path / "b"), "--augment", "1", "--seed", "2"]) == 0
    assert len(runs) == 1 and 0 < runs[0] <= 150  # another seed: only its own copies are new, validation is kept
    with np.load(cache_file(cache, teacher.saved.manifest["save_id"])) as kept:
        assert len(kept["keys"]) == len(texts) + first + runs[0]  # each text kept once
    metrics = json.loads((tmp_path / "b" / "metrics.json").read_text())
    assert metrics["distillation"]["logits_cache"] == str(cache)


def test_a_student_of_the_teachers_own_checkpoint_is_taught_through_the_cache_too(tiny_predictor, small_data,
                                                                                   tmp_path):
    cache = tmp_path / "logits"
    assert cli.main(["distill", "--teacher", str(tiny_predictor), "--layers", "1", "--data", str(small_data),
                     "--epochs", "1", "--batch-size", "16", "--limit", "40", "--eval-limit", "20",
                     "--logits-cache", str(cache), "--out", str(tmp_path / "s")]) == 0
    teacher = kr.load_checked_predictor(tiny_predictor)
    with np.load(cache_file(cache, teacher.saved.manifest["save_id"])) as kept:
        assert 40 < len(kept["keys"]) <= 60  # the 40 training texts and the 20 validation texts (a text once)


def test_a_fifo_in_the_cache_is_refused_at_once_instead_of_blocking(tmp_path):
    """Battery v6 W39: np.load would wait for ever on a FIFO named as the cache file."""
    import os

    from blocking import outcome_within

    os.mkfifo(cache_file(tmp_path, "abc123"))
    outcome = outcome_within(lambda: through(tmp_path, "abc123", ["so angry"], fake_teacher([])), 10)
    assert outcome and "not a regular file" in outcome[0]


def test_a_cache_that_cannot_keep_the_logits_or_would_damage_a_folder_is_refused_before_any_work(tmp_path):
    """W37 (a file), W40 (inside the teacher's predictor), W41 (inside --out), W38 (read-only): one line each,
    from check_cache_folder, which distill's check_request calls before it loads anything."""
    import os

    from ktrain_recipes_tools.training.logit_cache import check_cache_folder

    (tmp_path / "afile").write_text("x")
    teacher, out = tmp_path / "teacher", tmp_path / "student"
    teacher.mkdir()
    cases = {tmp_path / "afile": "is a file", teacher: "inside the teacher's folder", teacher / "logits":
             "inside the teacher's folder", out: "inside --out", out / "logits": "inside --out"}
    for folder, said in cases.items():
        with pytest.raises(RecipesError, match=said):
            check_cache_folder(folder, out, teacher)
    check_cache_folder(tmp_path / "cache", out, teacher)  # a folder of its own, not made yet: fine
    if os.geteuid() != 0:  # root writes anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o555)
        with pytest.raises(RecipesError, match="read-only"):
            check_cache_folder(locked / "cache", out, teacher)


def test_distill_refuses_a_cache_inside_its_out_before_loading_the_teacher(tmp_path):
    from ktrain_recipes_tools.training.distill import DistillSettings, distill

    config = kr.RecipeConfig(out=str(tmp_path / "s"))
    settings = DistillSettings(teacher=str(tmp_path / "no-such-teacher"), logits_cache=str(tmp_path / "s" / "logits"))
    with pytest.raises(RecipesError, match="inside --out"):  # not "no such predictor": refused before any load
        distill(config, settings)


def test_a_cache_that_cannot_be_written_leaves_the_logits_computed_and_says_so(tmp_path, monkeypatch, capsys):
    """W38: a full or read-only disk when the logits are kept: the run goes on with them, in one note."""
    from ktrain_recipes_tools.training import logit_cache

    def full(path, kept):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(logit_cache, "write_kept", full)
    logits = through(tmp_path, "abc123", ["so angry"], fake_teacher([]))
    assert np.array_equal(logits, fake_teacher([])(["so angry"]))
    assert "could not be kept" in capsys.readouterr().err
