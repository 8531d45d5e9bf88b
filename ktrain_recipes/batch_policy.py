"""The batching policy: how many texts go through one model call, and how many a reader hands on at once.

Each size is named once, here, and passed down to whatever loads a model: the service's ``--max-call``
(default ``MODEL_BATCH``) becomes the batch size of the model it loads, so that a batch the service forms is
exactly one model call, whichever backend (int8 ONNX or ktrain) serves it.
"""

# texts in one model call: the int8 predictor's batch and the service's --max-call default. 64 keeps a batch's
# padding small (texts are sorted by length first) while amortising each call's fixed cost.
MODEL_BATCH = 64
# ktrain's own predictor batch size (ktrain.get_predictor's default), kept for ktrain's predictors
KTRAIN_BATCH = 32
# classify(): texts sorted by length and handed to the model this many at a time (the model splits them into its
# own batches); bounds the memory of one length sort's slice
CLASSIFY_CHUNK = 256
# predict --input: rows read, scored and written per chunk, in constant memory (--chunk-size)
STREAM_CHUNK = 10_000
# Two figures of the int8 MiniLM on the service's one model thread (benchmarks/batch_sweep.py writes them to
# docs/serve/batch_sweep.json): a call's fixed cost, in padded tokens' worth of work (call_cost_tokens: a batch is
# cut into groups of like length when the padding a cut saves is worth more than the call it adds), and the largest
# call whose time per token is within 5% of the cheapest (call_tokens_budget: past it a token costs more, and every
# text in the call waits for all of them).
CALL_COST_TOKENS = 6
CALL_TOKENS = 256


def length_groups(lengths: list[int], max_batch: int, max_tokens: int | None = CALL_TOKENS,
                  call_cost_tokens: float = CALL_COST_TOKENS) -> list[list[int]]:
    """Cut texts of these token ``lengths`` into model calls of like length: the positions of each call's texts.

    Each call is padded to its longest text and costs ``call_cost_tokens`` + texts x that length; the cut is the
    cheapest under that cost (texts sorted by length, then the best place for each cut), with at most ``max_batch``
    texts and ``max_tokens`` padded tokens per call (a text longer than that alone; None: no token limit). A
    60-token text no longer makes 31 short ones pay for 60 tokens.
    """
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    sorted_lengths = [lengths[i] for i in order]
    best = [0.0] + [float("inf")] * len(order)  # best[j]: the cheapest cut of the j shortest texts
    start = [0] * (len(order) + 1)  # where the last call of that cut starts
    for j in range(1, len(order) + 1):
        longest = sorted_lengths[j - 1]
        for i in range(j - 1, max(0, j - max_batch) - 1, -1):  # the last call holds texts i..j-1
            if i < j - 1 and max_tokens is not None and (j - i) * longest > max_tokens:
                break  # longer calls only hold more tokens
            cost = best[i] + call_cost_tokens + (j - i) * longest
            if cost < best[j]:
                best[j], start[j] = cost, i
    groups, j = [], len(order)
    while j > 0:
        groups.append(order[start[j]:j])
        j = start[j]
    return groups[::-1]
