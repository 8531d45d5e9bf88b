from ktrain_recipes.inference.timing import time_inference, timed


def test_time_inference_counts_calls():
    calls = []
    result = time_inference(lambda texts: calls.append(len(texts)), ["a", "b", "c", "d"], n_single=2, warmup=1)
    assert calls == [1, 4, 1, 1] and result["n"] == 4 and result["latency_p95_ms"] >= result["latency_p50_ms"]


def test_timed_prints_and_keeps_the_seconds(capsys):
    with timed("block") as t:
        sum(range(1000))
    assert t.seconds > 0 and capsys.readouterr().out.startswith("block: ")


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
