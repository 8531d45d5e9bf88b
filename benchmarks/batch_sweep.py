"""The int8 model's time per call against the texts in the call and their padded length, on the threads the service
gives it. Two figures of the batching policy come from it: what a call costs before any text is read, in padded
tokens' worth of work (``batch_policy.CALL_COST_TOKENS``: when a batch is worth splitting by length), and the call
size past which a token costs more (``batch_policy.CALL_TOKENS``: the batcher's and the groups' token budget).

    python benchmarks/batch_sweep.py PREDICTOR_FOLDER OUT.json [--threads 1]

Each cell is the median of repeated calls on random token ids (the time of a call does not depend on which tokens
it reads). The fit is least squares of t = a + b * texts * length on relative error (small calls count as much as
large ones); the call cost is a / b. The budget is the largest call (texts x length) whose time per token is within
5% of the cheapest cell's.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

BATCHES = [1, 2, 4, 8, 16, 32, 64]
LENGTHS = [8, 16, 24, 32, 48, 64, 96, 128]


def time_call(session, inputs: list[str], n: int, length: int, vocab: int, repeats: int) -> float:
    rng = np.random.default_rng(n * 1000 + length)
    feed = {"input_ids": rng.integers(1000, vocab, (n, length)).astype(np.int32),
            "attention_mask": np.ones((n, length), np.int32), "token_type_ids": np.zeros((n, length), np.int32)}
    feed = {k: feed[k] for k in inputs}
    session.run(None, feed)  # warm up this shape
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        session.run(None, feed)
        times.append(time.perf_counter() - start)
    return float(np.median(times)) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("predictor")
    parser.add_argument("out")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    from ktrain_recipes.inference.onnx_inference import load_int8_predictor
    from ktrain_recipes.inference.timing import cpu_features
    from ktrain_recipes_tools.studies.measure import describe_machine

    model = load_int8_predictor(args.predictor, threads=args.threads)
    vocab = len(model.tokenizer)
    rows = []
    for length in LENGTHS:
        for n in BATCHES:
            repeats = max(5, min(200, int(4000 / (n * length))))
            rows.append({"texts": n, "length": length,
                         "ms": round(time_call(model.session, model.inputs, n, length, vocab, repeats), 3)})
    x = np.array([[1, r["texts"] * r["length"]] for r in rows], float)
    y = np.array([r["ms"] for r in rows])
    (a, b), *_ = np.linalg.lstsq(x / y[:, None], np.ones(len(y)), rcond=None)  # relative error
    worst = float(np.max(np.abs(x @ np.array([a, b]) - y) / y))
    per_token = {r["texts"] * r["length"]: [] for r in rows}
    for r in rows:
        per_token[r["texts"] * r["length"]].append(r["ms"] / (r["texts"] * r["length"]))
    cheapest = min(min(v) for v in per_token.values())
    budget = max(tokens for tokens, v in per_token.items() if min(v) <= 1.05 * cheapest)
    result = {"predictor": Path(args.predictor).name, "threads": args.threads, "cpu": describe_machine(),
              "cpu_features": cpu_features(),
              "fit": {"call_ms": round(float(a), 4), "ms_per_token": round(float(b), 6),
                      "worst_relative_error": round(worst, 3)},
              "call_cost_tokens": round(float(a / b)), "cheapest_ms_per_token": round(cheapest, 4),
              "call_tokens_budget": budget, "cells": rows}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print("| length | " + " | ".join(f"{n} texts" for n in BATCHES) + " |")
    print("|---|" + "---|" * len(BATCHES))
    for length in LENGTHS:
        print(f"| {length} | " + " | ".join(f"{r['ms']:.2f}" for r in rows if r["length"] == length) + " |")
    print(json.dumps(result["fit"]), "call cost:", result["call_cost_tokens"], "tokens; budget:",
          result["call_tokens_budget"], "tokens per call")


if __name__ == "__main__":
    main()
