"""Already fine-tuned models scored as they are (ktrain's tutorial A3), on a folder we save: the hub's
fine-tuned emotion models are the same kind of folder."""

import json
import shutil

import pytest

import ktrain_recipes as kr
from ktrain_recipes import RecipesError
from ktrain_recipes_tools.studies.finetuned import compare_finetuned, label_order, wrap_finetuned


def test_label_order_maps_by_name_takes_generic_names_in_data_order_and_refuses_others(capsys):
    names = ["sadness", "joy", "love", "anger", "fear", "surprise"]
    shuffled = {i: n for i, n in enumerate(reversed(names))}
    assert label_order(shuffled, names) == list(reversed(names))
    assert label_order({i: f"LABEL_{i}" for i in range(6)}, names) == names
    assert "taking them in the data's order" in capsys.readouterr().err
    with pytest.raises(RecipesError, match="6 outputs but the data has 2 labels"):
        label_order(shuffled, ["neg", "pos"])
    with pytest.raises(RecipesError, match="are not the data's"):
        label_order({i: n for i, n in enumerate(["a", "b", "c", "d", "e", "f"])}, names)


def test_a_saved_folder_scores_as_our_own_predictor_does(tiny_predictor, small_data):
    ds = kr.load_emotion(small_data)
    maxlen = json.loads((tiny_predictor / "metrics.json").read_text())["maxlen"]
    table = compare_finetuned({"as a transformers folder": tiny_predictor,
                               "our predictor": kr.open_predictor(tiny_predictor)},
                              ds, split="validation", cards={"as a transformers folder": 0.5}, maxlen=maxlen)
    assert list(table.columns[:3]) == ["accuracy", "macro_f1", "n"]
    assert table.loc["as a transformers folder", "accuracy"] == table.loc["our predictor", "accuracy"]
    assert table.loc["as a transformers folder", "card_accuracy"] == 0.5
    texts, truth = ds.splits["validation"]  # the accuracy, counted here from the predictor's own labels
    expected = sum(p == t for p, t in zip(kr.classify(kr.open_predictor(tiny_predictor), texts), truth)) / len(truth)
    assert table.loc["our predictor", "accuracy"] == pytest.approx(expected)
    assert table.loc["our predictor", "n"] == len(truth)
    with pytest.raises(RecipesError, match="no 'test' split"):
        compare_finetuned({"x": tiny_predictor}, ds, split="test")


def test_a_model_whose_labels_come_in_another_order_is_read_by_name(tiny_predictor, small_data, tmp_path):
    ds = kr.load_emotion(small_data)
    texts = ds.texts("validation")[:20]
    original = wrap_finetuned(tiny_predictor, ds.label_names)
    renamed = tmp_path / "renamed"
    shutil.copytree(tiny_predictor, renamed)
    config = json.loads((renamed / "config.json").read_text())
    names = [config["id2label"][str(i)] for i in range(len(config["id2label"]))]
    config["id2label"] = {str(i): n for i, n in enumerate(reversed(names))}  # output i now means another label
    config["label2id"] = {n: int(i) for i, n in config["id2label"].items()}
    (renamed / "config.json").write_text(json.dumps(config))
    swapped = wrap_finetuned(renamed, ds.label_names)
    assert swapped.get_classes() == list(reversed(names))
    before, after = kr.classify(original, texts), kr.classify(swapped, texts)
    assert after == [list(reversed(names))[names.index(label)] for label in before]


# compare_finetuned refuses a loaded predictor that does not fit the data, instead of a 0.0 row
def test_compare_finetuned_refuses_a_predictor_of_other_labels_or_kind(exported, small_data):
    from ktrain_recipes_tools.studies.finetuned import compare_finetuned

    ds = kr.load_emotion(small_data)
    model = kr.open_predictor(exported, int8=True)
    model.classes = ["0", "1", "2", "3", "4", "5"]  # another label set
    with pytest.raises(RecipesError, match="predicts 0, 1, 2, 3, 4, 5, but the data's labels are sadness"):
        compare_finetuned({"other labels": model}, ds, split="validation")
    single = kr.open_predictor(exported, int8=True)
    ds.splits["validation"] = ([(t, t) for t in ds.texts("validation")], ds.labels("validation"))
    with pytest.raises(RecipesError, match="classifies single texts, but the data holds pairs"):
        compare_finetuned({"single": single}, ds, split="validation")
