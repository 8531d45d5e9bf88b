"""Time inference the way a user feels it: batch throughput and single-text latency after warm-up."""

from __future__ import annotations

import time
from contextlib import contextmanager

import numpy as np

from ktrain_recipes.errors import once_each


def time_inference(predict_fn, texts: list[str], n_single: int = 50, warmup: int = 3) -> dict:
    """Time batch throughput and single-text latency (p50/p95 after warm-up).

    Args:
      predict_fn: a function from a list of texts to predictions.
      texts: texts to classify; all of them for throughput, the first n_single one by one.
    """
    with once_each():  # the same texts again and again: a note (a text cut at maxlen) is said once
        for text in texts[:warmup]:
            predict_fn([text])
        start = time.perf_counter()
        predict_fn(texts)
        batch_s = time.perf_counter() - start
        single = []
        for text in texts[:n_single]:
            t0 = time.perf_counter()
            predict_fn([text])
            single.append((time.perf_counter() - t0) * 1000)
    return {
        "n": len(texts),
        "throughput_per_s": len(texts) / batch_s,
        "ms_per_text": batch_s * 1000 / len(texts),
        "latency_p50_ms": float(np.percentile(single, 50)),
        "latency_p95_ms": float(np.percentile(single, 95)),
    }


@once_each()  # each predictor sees the same texts in every round: its notes are said once
def time_side_by_side(predict_fns: dict, texts: list[str], rounds: int = 5, n_single: int = 100,
                      warmup: int = 3) -> dict[str, dict]:
    """Time several predictors in alternation, so that a shared machine's slow moments hit each alike.

    Each round calls every predictor once on all ``texts`` (throughput) and then, text by text, on the first
    ``n_single`` in turn (latency). Returns, per name, the median throughput over rounds and the p50/p95
    of all its single-text latencies, with ``calls``: the order the predictors were called in.
    """
    for fn in predict_fns.values():
        for text in texts[:warmup]:
            fn([text])
    batch = {name: [] for name in predict_fns}
    single = {name: [] for name in predict_fns}
    calls = []
    for _ in range(rounds):
        for name, fn in predict_fns.items():
            start = time.perf_counter()
            fn(texts)
            batch[name].append(len(texts) / (time.perf_counter() - start))
            calls.append(name)
        for text in texts[:n_single]:
            for name, fn in predict_fns.items():
                t0 = time.perf_counter()
                fn([text])
                single[name].append((time.perf_counter() - t0) * 1000)
    return {name: {"throughput_per_s": float(np.median(batch[name])),
                   "latency_p50_ms": float(np.percentile(single[name], 50)),
                   "latency_p95_ms": float(np.percentile(single[name], 95)),
                   "rounds": rounds, "n_single": len(single[name]), "calls": calls}
            for name in predict_fns}


class Timer:
    """What ``timed`` yields: the block's wall-clock seconds, in ``seconds`` once the block ends."""

    seconds: float = 0.0


@contextmanager
def timed(label: str = ""):
    """Time a block (``with timed("fit") as t: ...``), print how long it took, and leave it in ``t.seconds``."""
    timer = Timer()
    start = time.perf_counter()
    try:
        yield timer
    finally:
        timer.seconds = time.perf_counter() - start
        if label:
            print(f"{label}: {timer.seconds:.1f} s")
