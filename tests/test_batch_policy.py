"""The batching policy: calls of like length (``length_groups``), checked against every possible cut, and the int8
predictor running them: the same answers as one call, padded only to each group's longest text."""

import itertools
import json
import random
from pathlib import Path

import numpy as np
import pytest

from ktrain_recipes.batch_policy import CALL_COST_TOKENS, CALL_TOKENS, length_groups

SWEEP = Path(__file__).resolve().parent.parent / "docs" / "serve" / "batch_sweep.json"


def test_the_policy_figures_are_the_sweeps():
    """The two figures come from one run of benchmarks/batch_sweep.py, written to the file the docs link."""
    sweep = json.loads(SWEEP.read_text())
    assert (CALL_COST_TOKENS, CALL_TOKENS) == (sweep["call_cost_tokens"], sweep["call_tokens_budget"])
    assert sweep["threads"] == 1 and len(sweep["cells"]) >= 40


def cost(groups, lengths, call_cost):
    return sum(call_cost + len(g) * max(lengths[i] for i in g) for g in groups)


def fits(group, lengths, max_batch, max_tokens):
    return len(group) <= max_batch and (len(group) == 1 or max_tokens is None
                                        or len(group) * max(lengths[i] for i in group) <= max_tokens)


def every_cut(lengths, max_batch, call_cost, max_tokens=None):
    """The cheapest cut by brute force: every way to cut the sorted texts into runs of at most max_batch."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    best = None
    for marks in itertools.product([False, True], repeat=len(order) - 1):
        groups, current = [], [order[0]]
        for i, mark in zip(order[1:], marks):
            if mark:
                groups.append(current)
                current = []
            current.append(i)
        groups.append(current)
        if all(fits(g, lengths, max_batch, max_tokens) for g in groups):
            c = cost(groups, lengths, call_cost)
            best = c if best is None else min(best, c)
    return best


@pytest.mark.parametrize("seed", range(30))
def test_the_cut_is_the_cheapest_and_keeps_every_text_once(seed):
    rng = random.Random(seed)
    lengths = [rng.choice([rng.randint(4, 12), rng.randint(40, 70)]) for _ in range(rng.randint(1, 10))]
    max_batch, call_cost = rng.randint(1, 6), rng.choice([0, 10, 60, 500])
    max_tokens = rng.choice([None, 50, 120, 300])
    groups = length_groups(lengths, max_batch, max_tokens, call_cost)
    assert sorted(i for g in groups for i in g) == list(range(len(lengths)))
    assert all(g and fits(g, lengths, max_batch, max_tokens) for g in groups)
    assert cost(groups, lengths, call_cost) == every_cut(lengths, max_batch, call_cost, max_tokens)


def test_a_long_text_gets_its_own_call_when_padding_costs_more_than_a_call():
    lengths = [10] * 31 + [60]
    assert length_groups(lengths, 64, None, 300) == [list(range(31)), [31]]  # 31 x 50 padded tokens > 300
    assert length_groups(lengths, 64, None, 3000) == [list(range(32))]  # a call costs more than that padding
    assert length_groups([], 64, None, 300) == []


def test_a_call_holds_at_most_the_token_budget_and_a_long_text_alone():
    groups = length_groups([10] * 64 + [500], 64, 256, 7)
    assert groups[-1] == [64] and len(groups) == 4  # the 500-token text alone; 64 x 10 tokens in three calls
    assert all(len(g) * 10 <= 256 for g in groups[:-1])


def test_grouped_calls_answer_as_one_call_and_pad_only_to_their_longest(exported, monkeypatch):
    from ktrain_recipes.data.maxlen import token_lengths, tokenize
    from ktrain_recipes.inference.onnx_inference import load_int8_predictor

    model = load_int8_predictor(exported, int8=False)
    texts = ["i am so happy", "this makes me furious and i cannot stop shaking with anger at all of it, all day "
             "long, every day, whatever anyone says to me", "i feel alone", "a surprise"] * 8
    shapes = []
    run = model.session.run
    monkeypatch.setattr(model.session, "run", lambda out, feed: shapes.append(feed["input_ids"].shape) or
                        run(out, feed), raising=False)
    grouped = model.predict_proba(texts)
    lengths = [min(n, model.maxlen) for n in token_lengths(model.tokenizer, texts)]
    expected = [(len(g), max(lengths[i] for i in g)) for g in length_groups(lengths, model.batch_size)]
    assert len(expected) >= 2  # the long texts apart from the short ones
    assert sorted(shapes) == sorted(expected)  # one call per group, each padded to its own longest text
    assert sum(n * length for n, length in shapes) <= len(texts) * max(lengths)
    enc = tokenize(model.tokenizer, texts, padding=True, truncation=True, max_length=model.maxlen,
                   return_tensors="np", return_token_type_ids=True)
    one_call = run(None, {k: enc[k].astype(np.int32) for k in model.inputs})[0]
    one_call = np.exp(one_call - one_call.max(axis=1, keepdims=True))
    assert np.abs(grouped - one_call / one_call.sum(axis=1, keepdims=True)).max() < 1e-5
    assert model.predict_proba([]).shape == (0, len(model.classes))
