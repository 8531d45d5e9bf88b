"""Segment ids: which models read them, pair batches that carry them, and pair predictors that keep them when saved,
re-loaded, exported to int8 and served."""

import json

import httpx
import numpy as np
import pandas as pd
import pytest

import ktrain_recipes as kr
from ktrain_recipes import RecipesError
from ktrain_recipes.inference.onnx_inference import export_onnx, load_int8_predictor
from ktrain_recipes.segments import takes_segment_ids


@pytest.mark.parametrize("family, expected", [("bert", True), ("albert", True), ("electra", True),
                                              ("distilbert", False), ("roberta", False)])
def test_the_decision_follows_the_model_not_ktrains_check(family, expected, tiny_models):
    from transformers import AutoConfig, TFAutoModelForSequenceClassification

    config = AutoConfig.from_pretrained(tiny_models[family])
    assert takes_segment_ids(config) is expected
    # ktrain 0.41.4's own check, which this replaces, says False for every model on transformers 4.57
    model_class = type(TFAutoModelForSequenceClassification.from_config(config))
    assert "token_type_ids" not in model_class.call.__code__.co_varnames


def pair_folder(ethics_dir, folder):
    """Deontology's (scenario, excuse) pairs as a folder of train.csv and val.csv with a pair column."""
    rows = pd.read_csv(ethics_dir / "deontology" / "deontology_train.csv").head(240)
    rows = rows.rename(columns={"scenario": "text"})
    folder.mkdir()
    rows.iloc[:192].to_csv(folder / "train.csv", index=False)
    rows.iloc[192:].to_csv(folder / "val.csv", index=False)
    return folder


@pytest.mark.parametrize("family, carries", [("bert", True), ("distilbert", False), ("roberta", False)])
def test_a_pair_batch_carries_segment_1_on_the_second_sentence(family, carries, tiny_models):
    from ktrain_recipes.training.recipe import transformer_preprocessor

    t = transformer_preprocessor(tiny_models[family], 32, ["0", "1"], 8)
    data = t.preprocess_train([("the first sentence", "and the second one")] * 2, [0, 1], verbose=0)
    batch = next(iter(data.to_tfdataset(train=False)))[0]  # what the model is fed
    assert ("token_type_ids" in batch) is carries
    if carries:
        ids, mask, segments = (np.asarray(batch[k][0]) for k in ("input_ids", "attention_mask", "token_type_ids"))
        sep = t.get_tokenizer().sep_token_id
        first_sep = list(ids).index(sep)
        assert set(segments[: first_sep + 1]) == {0}  # [CLS] first [SEP]
        real = int(mask.sum())
        assert set(segments[first_sep + 1: real]) == {1}  # second [SEP]


@pytest.fixture(scope="module")
def pair_predictor(tiny_models, ethics_dir, tmp_path_factory):
    base = tmp_path_factory.mktemp("pairs")
    config = kr.RecipeConfig(tiny_models["bert"], data=str(pair_folder(ethics_dir, base / "data")),
                             pair_column="excuse", out=str(base / "pred"), epochs=1, batch_size=16, lr=1e-3, seed=3)
    kr.run_recipe(config)
    export_onnx(base / "pred")
    return base / "pred"


PAIRS = [("Aren't you supposed to be cooking dinner?", "No because I ordered a pizza."),
         ("Could you feed the dog?", "But the dog was fed an hour ago."),
         ("Aren't you supposed to be cooking dinner?", "No because the oven is broken.")]


def test_a_pair_predictor_records_and_reloads_its_segment_ids(pair_predictor):
    from transformers import AutoTokenizer, TFAutoModelForSequenceClassification

    manifest = json.loads((pair_predictor / "manifest.json").read_text())
    assert manifest["segment_ids"] is True and manifest["pairs"] is True
    assert "token_type_ids" in manifest["onnx_inputs"]
    predictor = kr.load_checked_predictor(pair_predictor)
    assert predictor.preproc.use_token_type_ids is True
    probs = predictor.predict(PAIRS, return_proba=True)
    # the same weights fed by transformers directly, with and without the second segment's ids
    tok = AutoTokenizer.from_pretrained(pair_predictor)
    model = TFAutoModelForSequenceClassification.from_pretrained(pair_predictor)
    enc = tok([a for a, _ in PAIRS], [b for _, b in PAIRS], padding=True, return_tensors="tf")
    with_ids, without = fed_both_ways(model, enc)
    # the predictor's answers are those of the model fed the segment ids, not of the model fed without them
    assert distance(probs, with_ids) * 10 < distance(probs, without)


def test_single_texts_given_to_a_pair_predictor_are_refused(pair_predictor):
    with pytest.raises(RecipesError, match="classifies sentence pairs, and was given single texts"):
        kr.classify(kr.load_checked_predictor(pair_predictor), [PAIRS[0][0]])
    with pytest.raises(RecipesError, match="classifies sentence pairs"):
        kr.classify(load_int8_predictor(pair_predictor), [PAIRS[0][0]])
    assert len(kr.classify(load_int8_predictor(pair_predictor), PAIRS)) == len(PAIRS)


def fed_both_ways(model, enc):
    """The model's probabilities fed with the tokenizer's segment ids, and without them."""
    def softmax(logits):
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    with_ids = softmax(model(dict(enc)).logits.numpy())
    without = softmax(model({k: v for k, v in enc.items() if k != "token_type_ids"}).logits.numpy())
    assert distance(with_ids, without) > 1e-6  # the ids change the answer: the comparisons above can fail
    return with_ids, without


def distance(a, b) -> float:
    return float(np.abs(np.asarray(a) - np.asarray(b)).max())


@pytest.mark.network
def test_a_pair_predictor_answers_the_same_in_process_in_onnx_and_over_http(pair_predictor):
    from servers import running

    in_process = kr.load_checked_predictor(pair_predictor).predict(PAIRS, return_proba=True)
    fp32 = load_int8_predictor(pair_predictor, int8=False).predict_proba(PAIRS)
    int8 = load_int8_predictor(pair_predictor).predict_proba(PAIRS)
    from transformers import AutoTokenizer, TFAutoModelForSequenceClassification

    enc = AutoTokenizer.from_pretrained(pair_predictor)([a for a, _ in PAIRS], [b for _, b in PAIRS], padding=True,
                                                        return_tensors="tf")
    with_ids, without = fed_both_ways(TFAutoModelForSequenceClassification.from_pretrained(pair_predictor), enc)
    assert distance(fp32, in_process) * 10 < distance(fp32, without)  # ONNX takes the segment ids too
    assert np.allclose(int8, in_process, atol=0.05)  # int8 weights: close, not equal
    with running(["-m", "ktrain_recipes", "serve", "--predictor", str(pair_predictor)],
                 health="/health/ready") as (url, _):
        answer = httpx.post(url + "/predict", json={"pairs": [list(p) for p in PAIRS]}, timeout=30).json()
    names = kr.load_checked_predictor(pair_predictor).get_classes()
    served = np.array([[p["probabilities"][n] for n in names] for p in answer["predictions"]])
    assert answer["model"]["backend"] == "int8"
    assert np.allclose(served, int8, atol=1e-5)


def test_a_folder_saved_without_the_record_keeps_answering_as_it_did(pair_predictor, tmp_path):
    """A predictor saved before segment ids were recorded was trained without them: it is still fed without them."""
    import shutil

    from predictor_copies import rewrite_manifest

    old = tmp_path / "old"
    shutil.copytree(pair_predictor, old)
    rewrite_manifest(old, drop=("segment_ids",))
    assert "segment_ids" not in json.loads((old / "manifest.json").read_text())
    predictor = kr.load_checked_predictor(old)
    assert predictor.preproc.use_token_type_ids is False
    from transformers import AutoTokenizer, TFAutoModelForSequenceClassification

    tok = AutoTokenizer.from_pretrained(old)
    model = TFAutoModelForSequenceClassification.from_pretrained(old)
    enc = tok([a for a, _ in PAIRS], [b for _, b in PAIRS], padding=True, return_tensors="tf")
    with_ids, without = fed_both_ways(model, enc)
    probs = predictor.predict(PAIRS, return_proba=True)
    assert distance(probs, without) * 10 < distance(probs, with_ids)
