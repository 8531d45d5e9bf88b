"""Time inference the way a user feels it: batch throughput and single-text latency after warm-up."""

from __future__ import annotations

import time
from contextlib import contextmanager

import numpy as np


def time_inference(predict_fn, texts: list[str], n_single: int = 50, warmup: int = 3) -> dict:
    """Time batch throughput and single-text latency (p50/p95 after warm-up).

    Args:
      predict_fn: a function from a list of texts to predictions.
      texts: texts to classify; all of them for throughput, the first n_single one by one.
    """
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
