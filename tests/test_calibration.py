"""How sure a predictor is: calibration measured, a temperature fitted on validation and recorded in the folder,
applied wherever probabilities leave it (Python, the CLI, int8, /predict, /classify), and answers withheld under a
confidence chosen on validation."""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest

import ktrain_recipes
from ktrain_recipes.errors import RecipesError
from ktrain_recipes.inference import calibration as cal


def _softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _overconfident(n=3000, labels=6, true_t=2.0, seed=0):
    """Probabilities from logits whose labels were drawn at ``true_t``: a model over-confident by that much."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, labels)) * 3
    truth = np.array([rng.choice(labels, p=p) for p in _softmax(logits / true_t)])
    return _softmax(logits), truth


def test_temperature_recovers_the_one_the_labels_were_drawn_at_and_lowers_the_error():
    probs, truth = _overconfident()
    t = cal.fit_temperature(probs, truth)
    assert abs(t - 2.0) < 0.15
    before, after = cal.calibration_scores(probs, truth), cal.calibration_scores(cal.scaled(probs, t), truth)
    assert after["ece"] < before["ece"] / 3 and after["log_loss"] < before["log_loss"]
    assert after["accuracy"] == before["accuracy"]


def test_scaling_never_changes_a_label_and_one_changes_nothing():
    probs, _ = _overconfident(500)
    for t in (0.3, 0.9, 1.7, 6.0):
        q = cal.scaled(probs, t)
        assert (q.argmax(axis=1) == probs.argmax(axis=1)).all()
        assert np.allclose(q.sum(axis=1), 1, atol=1e-5)
    assert np.array_equal(cal.scaled(probs, None), probs.astype(np.float32))
    assert np.array_equal(cal.scaled(probs, 1.0), probs.astype(np.float32))
    logits = np.log(probs)
    assert np.allclose(cal.scaled(probs, 2.5), _softmax(logits / 2.5), atol=1e-6)


def test_ece_by_hand():
    # two bins used of 10: (0.5, 0.6] holds 2 texts at 0.55, one right; (0.9, 1.0] holds 2 at 0.95, both right
    probs = np.array([[0.55, 0.45], [0.55, 0.45], [0.95, 0.05], [0.05, 0.95]])
    truth = np.array([0, 1, 0, 1])
    assert cal.expected_calibration_error(probs, truth, bins=10) == pytest.approx(0.5 * 0.05 + 0.5 * 0.05)
    rows = cal.reliability(probs, truth, bins=10)
    assert [(r["n"], r["accuracy"]) for r in rows] == [(2, 0.5), (2, 1.0)]


def test_the_threshold_is_the_lowest_that_reaches_the_accuracy_asked():
    conf = np.linspace(0.55, 0.99, 200)
    probs = np.c_[conf, 1 - conf]
    truth = np.where(np.arange(200) < 100, 1, 0)  # the 100 least sure are wrong, the 100 surest right
    chosen = cal.choose_min_confidence(probs, truth, 1.0)
    assert chosen["min_confidence"] == pytest.approx(conf[100]) and chosen["coverage"] == 0.5
    assert cal.selective_scores(probs, truth, chosen["min_confidence"])["accuracy_answered"] == 1.0
    curve = cal.coverage_curve(probs, truth)
    assert curve["coverage"][0] == 1.0 and curve["accuracy"][0] == 0.5


def test_bad_values_are_refused_in_one_line():
    probs, truth = _overconfident(300)
    for bad in (0, -1, float("nan"), float("inf"), "2", True):
        with pytest.raises(RecipesError, match="positive finite"):
            cal.check_temperature(bad)
    for bad in (0, 1.5, -0.1, float("nan")):
        with pytest.raises(RecipesError, match=r"\(0, 1\]"):
            cal.check_min_confidence(bad)
    with pytest.raises(RecipesError, match="too few"):
        cal.fit_temperature(probs[:50], truth[:50])
    wrong = np.c_[np.full(300, 0.9), np.full(300, 0.1)]
    with pytest.raises(RecipesError, match="withhold everything"):
        cal.choose_min_confidence(wrong, np.ones(300, int), 0.9)


@pytest.fixture(scope="module")
def val_data(emotion, tmp_path_factory):
    """Emotion's train lines and 300 validation lines: enough to fit a temperature on."""
    folder = tmp_path_factory.mktemp("calib-data")
    for split, name, n in [("train", "train.txt", 150), ("validation", "val.txt", 300), ("test", "test.txt", 200)]:
        source = "validation" if split == "test" else split
        texts, labels = ktrain_recipes.sample(emotion.texts(source), emotion.labels(source), n, seed=5)
        (folder / name).write_text("".join(f"{t};{y}\n" for t, y in zip(texts, labels)))
    return folder


@pytest.fixture()
def scaled_copy(exported, tmp_path):
    folder = tmp_path / "pred"
    shutil.copytree(exported, folder)
    return folder


def _temperature_in(folder):
    return json.loads((folder / "manifest.json").read_text()).get("temperature")


def test_a_recorded_temperature_is_applied_by_every_loader_and_changes_no_label(scaled_copy):
    from ktrain_recipes.inference.prediction import classify, open_predictor
    from ktrain_recipes.predictor.staging import record_temperature

    texts = ["i feel so happy today", "i am scared of the dark", "this makes me furious", "i miss her so much"]
    raw = {int8: classify(open_predictor(scaled_copy, int8=int8), texts, proba=True) for int8 in (False, True)}
    import ktrain

    plain = ktrain.load_predictor(str(scaled_copy))  # ktrain's own predict: no temperature of ours before
    assert np.allclose(raw[False], np.asarray(plain.predict(texts, return_proba=True)), atol=1e-6)
    record_temperature(scaled_copy, 0.25, {"how": "test"})
    assert _temperature_in(scaled_copy) == 0.25
    assert json.loads((scaled_copy / "metrics.json").read_text())["calibration"] == {"how": "test"}
    for int8 in (False, True):
        now = classify(open_predictor(scaled_copy, int8=int8), texts, proba=True)
        assert np.allclose(now, cal.scaled(raw[int8], 0.25), atol=1e-5)
        assert not np.allclose(now, raw[int8], atol=1e-3)
        assert (now.argmax(axis=1) == raw[int8].argmax(axis=1)).all()
        assert classify(open_predictor(scaled_copy, int8=int8), texts) == \
            [open_predictor(scaled_copy, int8=int8).get_classes()[i] for i in raw[int8].argmax(axis=1)]
    with pytest.raises(RecipesError, match="--overwrite"):
        record_temperature(scaled_copy, 2.0, {})
    assert _temperature_in(scaled_copy) == 0.25
    record_temperature(scaled_copy, 2.0, {}, overwrite=True)
    assert _temperature_in(scaled_copy) == 2.0


@pytest.mark.parametrize("bad", [-1, 0, "warm", None])
def test_a_temperature_that_is_not_a_positive_number_is_a_corrupt_folder(scaled_copy, bad):
    from ktrain_recipes.inference.prediction import open_predictor

    manifest = json.loads((scaled_copy / "manifest.json").read_text())
    manifest["temperature"] = bad
    (scaled_copy / "manifest.json").write_text(json.dumps(manifest))
    if bad is None:  # "no temperature": answers as before
        open_predictor(scaled_copy, int8=True)
        return
    for int8 in (False, True):
        with pytest.raises(RecipesError, match="positive finite number.*corrupt"):
            open_predictor(scaled_copy, int8=int8)


def test_withholding_from_python(exported):
    from ktrain_recipes.inference.prediction import classify, open_predictor

    model = open_predictor(exported, int8=True)
    texts = ["i feel so happy today", "i am scared of the dark", "this makes me furious"]
    probs = classify(model, texts, proba=True)
    middle = float(np.sort(probs.max(axis=1))[1])  # the second surest: it and the surest are answered
    labels = classify(model, texts, min_confidence=middle)
    assert [label is None for label in labels] == list(probs.max(axis=1) < middle)
    assert sum(label is None for label in labels) == 1
    rows = classify(model, texts, report=True, proba=True, min_confidence=middle)
    assert [r["withheld"] for r in rows] == [label is None for label in labels]
    assert all(len(r["probabilities"]) == len(model.classes) for r in rows)
    assert "withheld" not in classify(model, texts, report=True)[0]
    with pytest.raises(RecipesError, match=r"\(0, 1\]"):
        classify(model, texts, min_confidence=0)


def test_calibrate_command_measures_records_and_predict_withholds(scaled_copy, val_data, capsys):
    from ktrain_recipes_tools.cli import main

    out = scaled_copy.parent / "calibration.json"
    assert main(["calibrate", "--predictor", str(scaled_copy), "--data", str(val_data), "--test", "--record",
                 "--json", str(out), "--int8"]) == 1  # --record fits on the model itself
    assert "leave out --int8" in capsys.readouterr().err
    assert main(["calibrate", "--predictor", str(scaled_copy), "--data", str(val_data), "--test", "--record",
                 "--accuracy", "0.2", "--json", str(out)]) == 0
    shown = capsys.readouterr().out
    found = json.loads(out.read_text())
    assert f"temperature fitted on validation: {found['temperature']:.4f}" in shown
    assert found["validation"]["before"]["n"] == 300 and found["test"]["before"]["n"] == 200
    assert found["validation"]["after"]["log_loss"] <= found["validation"]["before"]["log_loss"] + 1e-9
    assert found["validation"]["after"]["accuracy"] == found["validation"]["before"]["accuracy"]
    assert _temperature_in(scaled_copy) == found["temperature"]
    assert main(["calibrate", "--predictor", str(scaled_copy), "--data", str(val_data), "--record"]) == 1
    assert "--overwrite" in capsys.readouterr().err
    # evaluate now reports the calibration at the recorded temperature
    assert main(["evaluate", "--predictor", str(scaled_copy), "--data", str(val_data), "--int8"]) == 0
    assert f"temperature {found['temperature']}" in capsys.readouterr().out
    # predict: a text under the threshold is shown '-' and counted withheld
    assert main(["predict", "--predictor", str(scaled_copy), "--int8", "--min-confidence", "1",
                 "--format", "json", "i feel so happy today"]) == 0
    record = json.loads(capsys.readouterr().out)[0]
    assert record["label"] is None and record["withheld"] is True
    assert main(["predict", "--predictor", str(scaled_copy), "--int8", "--min-confidence", "1",
                 "i feel so happy today"]) == 0
    assert capsys.readouterr().out.startswith("-\t")
    for bad in ("0", "1.5", "nan", "most"):
        with pytest.raises(SystemExit) as stopped:
            main(["predict", "--predictor", str(scaled_copy), "--int8", "--min-confidence", bad, "hi"])
        assert stopped.value.code == 2 and "(0, 1]" in capsys.readouterr().err


def test_the_service_scales_withholds_counts_and_gives_raw_logits(scaled_copy):
    from fastapi.testclient import TestClient

    from ktrain_recipes.inference.prediction import classify, open_predictor
    from ktrain_recipes.predictor.staging import record_temperature
    from ktrain_recipes_tools.service.app import create_app
    from ktrain_recipes_tools.service.settings import ServiceSettings

    texts = ["i feel so happy today", "i am scared of the dark", "this makes me furious"]
    raw = classify(open_predictor(scaled_copy, int8=True), texts, proba=True)
    record_temperature(scaled_copy, 0.3, {})
    expected = cal.scaled(raw, 0.3)
    with TestClient(create_app(ServiceSettings(str(scaled_copy), reload_interval=0))) as c:
        assert c.get("/metadata").json()["temperature"] == 0.3
        answer = c.post("/predict", json={"texts": texts}).json()["predictions"]
        names = list(answer[0]["probabilities"])
        got = np.array([[p["probabilities"][n] for n in names] for p in answer])
        assert np.allclose(got, expected, atol=1e-5)
        assert all(p.get("withheld") is None for p in answer)  # asked nothing: none withheld, none said
        middle = float(np.sort(expected.max(axis=1))[1])
        answer = c.post("/predict", json={"texts": texts, "min_confidence": middle}).json()["predictions"]
        assert [p["withheld"] for p in answer] == list(expected.max(axis=1) < middle)
        assert [p["label"] is None for p in answer] == [p["withheld"] for p in answer]
        assert "ktrain_recipes_withheld_texts_total 1.0" in c.get("/metrics").text
        for bad in (0, 1.5, "high"):
            refused = c.post("/predict", json={"texts": texts, "min_confidence": bad})
            assert refused.status_code == 422 and "min_confidence" in refused.text
        data = c.post("/classify", json={"input": texts}).json()["data"]
        assert np.allclose([d["probs"] for d in data], expected, atol=1e-5)
        logits = np.array([d["probs"] for d in c.post("/classify", json={"input": texts,
                                                                         "use_activation": False}).json()["data"]])
        assert np.allclose(_softmax(logits), raw, atol=1e-4)  # the model's own logits, the temperature taken off
        assert np.allclose(_softmax(logits / 0.3), expected, atol=1e-4)


def test_several_labels_per_text_say_what_applies(tmp_path):
    from ktrain_recipes.inference.prediction import classify

    class Multi:
        classes, maxlen, tokenizer, multilabel, thresholds = ["a", "b"], 16, None, True, None

        def predict_proba(self, texts):
            return np.full((len(texts), 2), 0.7, np.float32)

    with pytest.raises(RecipesError, match="several labels per text"):
        classify(Multi(), ["some text"], min_confidence=0.5)
    assert math.isclose(float(cal.scaled(np.array([[0.5, 0.5]]), 3.0)[0, 0]), 0.5)
