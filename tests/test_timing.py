from ktrain_recipes.timing import time_inference, timed


def test_time_inference_counts_calls():
    calls = []
    result = time_inference(lambda texts: calls.append(len(texts)), ["a", "b", "c", "d"], n_single=2, warmup=1)
    assert calls == [1, 4, 1, 1] and result["n"] == 4 and result["latency_p95_ms"] >= result["latency_p50_ms"]


def test_timed_prints_and_keeps_the_seconds(capsys):
    with timed("block") as t:
        sum(range(1000))
    assert t.seconds > 0 and capsys.readouterr().out.startswith("block: ")
