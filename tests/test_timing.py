import pytest

from ktrain_recipes.inference.timing import time_inference, timed


def test_time_inference_counts_calls_and_reports_known_durations(monkeypatch):
    import ktrain_recipes.inference.timing as timing

    clock = [0.0]
    monkeypatch.setattr(timing.time, "perf_counter", lambda: clock[0])
    singles = iter([0.010, 0.020, 0.030, 0.040])  # seconds each single-text call takes, after warm-up
    calls = []

    def predict(texts):
        calls.append(len(texts))
        if len(calls) == 2:
            clock[0] += 2.0  # the batch of 4 takes 2 s
        elif len(calls) > 2:
            clock[0] += next(singles)

    result = time_inference(predict, ["a", "b", "c", "d"], n_single=4, warmup=1)
    assert calls == [1, 4, 1, 1, 1, 1] and result["n"] == 4
    assert result["throughput_per_s"] == pytest.approx(2.0) and result["ms_per_text"] == pytest.approx(500)
    assert result["latency_p50_ms"] == pytest.approx(25.0)  # the median of 10, 20, 30, 40 ms
    assert result["latency_p95_ms"] == pytest.approx(38.5)  # linear interpolation: 30 + 0.85 x 10


def test_timed_prints_and_keeps_the_seconds(capsys):
    import time

    with timed("block") as t:
        time.sleep(0.2)
    assert 0.19 <= t.seconds < 5  # a lower bound that a wrong clock (or none) fails; the upper one is generous
    out = capsys.readouterr().out
    assert out.startswith("block: ") and f"{t.seconds:.1f}" in out


def test_side_by_side_alternates_the_predictors():
    from ktrain_recipes.inference.timing import time_side_by_side

    calls = []
    fns = {name: (lambda texts, n=name: calls.append((n, len(texts)))) for name in ["teacher", "student"]}
    result = time_side_by_side(fns, ["a", "b", "c"], rounds=2, n_single=2, warmup=1)
    assert calls[:2] == [("teacher", 1), ("student", 1)]  # warm-up
    # each round: both on all texts, then text by text, one predictor after the other
    round_calls = [("teacher", 3), ("student", 3), ("teacher", 1), ("student", 1), ("teacher", 1), ("student", 1)]
    assert calls[2:] == round_calls * 2
    assert result["student"]["n_single"] == 4 and result["teacher"]["rounds"] == 2
    assert result["teacher"]["calls"] == ["teacher", "student", "teacher", "student"]


def test_a_note_the_timed_classifier_makes_on_every_call_is_said_once(capsys):
    """Battery v6 W89: the final timing of a run printed the truncation note once per timed text (20+ lines)."""
    from ktrain_recipes.errors import note
    from ktrain_recipes.inference.timing import time_inference, time_side_by_side

    def classify(texts):
        note(f"note: {len(texts)} of {len(texts)} texts exceed maxlen=32 tokens and were truncated")
        return ["joy"] * len(texts)

    time_inference(classify, ["a long text"] * 30, n_single=20)
    said = capsys.readouterr().err.splitlines()
    assert said == ["note: 1 of 1 texts exceed maxlen=32 tokens and were truncated",
                    "note: 30 of 30 texts exceed maxlen=32 tokens and were truncated"]
    time_side_by_side({"a": classify, "b": classify}, ["a long text"] * 5, rounds=2, n_single=3)
    assert len(capsys.readouterr().err.splitlines()) == 2
    note("said again outside the timing")
    note("said again outside the timing")
    assert len(capsys.readouterr().err.splitlines()) == 2
