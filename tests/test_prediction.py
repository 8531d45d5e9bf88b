import numpy as np
import pandas as pd
import pytest

import ktrain_recipes as kr
from ktrain_recipes import RecipesError
from ktrain_recipes.inference.prediction import check_texts


@pytest.mark.parametrize("texts, message", [
    ([], "at least one text"),
    (["fine", "   "], "text 1 is empty"),
    (["fine", 3], "text 1 is a int"),
    (None, "at least one text"),
    (["\x00\x00"], "text 0 is empty or only whitespace/invisible"),
    (["ok", "\u200b\u200b"], "text 1 is empty"),
    # letters and marks that print as nothing (Hangul fillers, blank Braille, a variation selector, lone marks)
    (["ok", "\u3164\u3164"], "text 1 is empty"),
    (["\u115f"], "text 0 is empty"),
    (["\uffa0 \u2800"], "text 0 is empty"),
    (["\ufe0f"], "text 0 is empty"),
    (["\u0301\u0308"], "text 0 is empty"),
])
def test_bad_prediction_input_is_rejected(texts, message):
    with pytest.raises(RecipesError, match=message):
        check_texts(texts)


def test_a_letter_with_its_marks_is_a_text():
    assert check_texts(["e\u0301", "\u2764\ufe0f", "\ud55c\uae00"]) == ["e\u0301", "\u2764\ufe0f", "\ud55c\uae00"]


def test_a_single_string_is_a_list_of_one():
    assert check_texts("hello") == ["hello"]


def test_sequences_of_strings_are_accepted():
    assert check_texts(pd.Series(["a", "b"])) == ["a", "b"]
    assert check_texts(np.array(["a", "b"])) == ["a", "b"] and check_texts(("a",)) == ["a"]


def test_long_texts_are_truncated_and_counted(tiny_predictor, capsys):
    predictor = kr.load_checked_predictor(tiny_predictor)
    labels = kr.classify(predictor, ["short", "very long " * 400])
    assert len(labels) == 2
    assert "1 of 2 texts exceed maxlen" in capsys.readouterr().err


def test_ktrains_explain_works_with_the_pinned_eli5(tiny_predictor):
    """The notebooks call predictor.explain: with eli5 missing or broken, ktrain only warns and returns None."""
    import warnings

    import ktrain

    predictor = ktrain.load_predictor(str(tiny_predictor))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # ktrain's "requires a forked version of eli5" would be one
        shown = predictor.explain("i feel so lucky and happy today", n_samples=50)
    assert shown is not None and "lucky" in shown.data


# kr.classify's inputs
def test_classify_refuses_tables_and_sets_and_takes_a_0d_array(exported):
    import pandas as pd

    model = kr.open_predictor(exported, int8=True)
    with pytest.raises(RecipesError, match="pass its text column"):
        kr.classify(model, pd.DataFrame({"text": ["i am happy"]}))
    with pytest.raises(RecipesError, match="a set has no order"):
        kr.classify(model, {"i am happy", "so sad"})
    assert kr.classify(model, np.array("i am happy")) == kr.classify(model, ["i am happy"])
    with pytest.raises(RecipesError, match="classifies single texts, and was given text pairs"):
        kr.classify(model, [["i am happy", "so sad"]])
    tf_model = kr.load_checked_predictor(exported)
    with pytest.raises(RecipesError, match="classifies single texts"):
        kr.classify(tf_model, [["i am happy", "so sad"]])


# a huge text is cut before it is tokenized
def test_a_huge_text_is_cut_before_tokenizing(exported, capsys):
    model = kr.open_predictor(exported, int8=True)
    seen = []
    tokenizer = model.tokenizer
    original = type(tokenizer).__call__

    def watching(self, *args, **kwargs):
        seen.extend(len(t) for t in args[0])
        return original(self, *args, **kwargs)

    type(tokenizer).__call__ = watching
    try:
        huge = "i am so happy today " * 500_000  # 10 MB
        assert kr.classify(model, [huge]) == kr.classify(model, [huge[:100 * model.maxlen]])
    finally:
        type(tokenizer).__call__ = original
    assert max(seen) <= 100 * model.maxlen
    assert "indexing errors" not in capsys.readouterr().err


@pytest.mark.parametrize("blank", [" ", "\u200b", "\u00ad"])
def test_a_text_whose_start_is_a_long_blank_run_is_refused_not_read_as_empty(exported, blank):
    """3,300 spaces (or zero-width spaces, soft hyphens) then a sentence: the cut by characters before tokenizing kept
    only the blank run, and the text was classified as empty and reported 'tokens 2, truncated False'."""
    from ktrain_recipes.inference.prediction import CHARS_PER_TOKEN

    model = kr.open_predictor(exported, int8=True)
    text = blank * (CHARS_PER_TOKEN * model.maxlen + 100) + "i feel happy and loved today"
    with pytest.raises(RecipesError, match="text 1 has nothing to read in its first"):
        kr.classify(model, ["i feel fine", text])
    long = "i feel happy " * (CHARS_PER_TOKEN * model.maxlen // 13 + 10)  # readable, and cut by characters
    rows = kr.classify(model, [long, "i feel fine"], report=True)
    assert rows[0]["truncated"] is True and rows[0]["tokens"] == model.maxlen and rows[1]["truncated"] is False
