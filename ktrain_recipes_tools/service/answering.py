"""The steps every classification route shares (``/predict``, ``/classify``): check the items against the serving
model, count their tokens (refusing a cut when the client asks), run them through the micro-batcher, and record
what was read. Each step answers with its result or with the JSON error that refuses the request."""

import time

from ktrain_recipes.inference.prediction import problem
from ktrain_recipes_tools.inference.truncation import first_truncated, token_counts
from ktrain_recipes_tools.service.batcher import (DeadlineExceeded, MicroBatcher, ModelCallFailed, QueueFull,
                                                  ShuttingDown)
from ktrain_recipes_tools.service.metrics import ServiceMetrics, length_bucket
from ktrain_recipes_tools.service.model import LoadedModel
from ktrain_recipes_tools.service.schemas import json_error
from ktrain_recipes_tools.service.settings import ServiceSettings

BUSY = {"Retry-After": "1"}  # overload answers: come back in a second


def check_request(texts: list | None, pairs: list | None, current: LoadedModel, max_chars: int,
                  name: str | None = None):
    """The items of a /predict body, or the one-line error (a string) that refuses it. ``name``: what the
    client called the list (``input`` in /classify), for the error's wording."""
    if (texts is None) == (pairs is None):
        return "send exactly one of \"texts\" (a list of strings) or \"pairs\" (a list of [first, second])"
    items = texts if texts is not None else [tuple(p) for p in pairs]
    kind = "texts" if texts is not None else "pairs"
    called = name or kind
    if not items:
        return f"\"{called}\" is empty: send at least one"
    if current.pairs is True and kind == "texts":  # in the words of the route asked (/classify: "input")
        return f"this predictor classifies sentence pairs: send \"{name or 'pairs'}\": [[first, second], ...]"
    if current.pairs is False and kind == "pairs":
        return f"this predictor classifies single texts: send \"{name or 'texts'}\": [\"...\", ...]"
    for i, item in enumerate(items):
        for part in item if kind == "pairs" else (item,):
            if len(part) > max_chars:
                return f"{called}[{i}] is {len(part)} characters, over the limit of {max_chars}: shorten it"
            why = problem(part)
            if why:
                return f"{called}[{i}] {why}"
    return items


class Answering:
    """The shared steps, bound to one app's settings, batcher, metrics and state (its ``predicting`` count, which
    the drain waits on)."""

    def __init__(self, state, settings: ServiceSettings, batcher: MicroBatcher, metrics: ServiceMetrics):
        self.state, self.settings, self.batcher, self.metrics = state, settings, batcher, metrics

    async def answer(self, items: list, current: LoadedModel, response, start: float,
                     counts: list[tuple[int, int]]):
        """Run checked items through the batcher: (probabilities, the model that answered), or the error response
        (429/503 with Retry-After when busy). ``counts``: each item's (tokens read, tokens it has), for the call's
        token budget and the latency by length."""
        self.state.predicting += 1
        try:
            probs, used, job = await self.batcher.predict(items, current, self.settings.timeout_ms / 1000,
                                                          sum(read for read, _ in counts))
        except QueueFull as exc:
            return json_error(429, f"the server is busy ({exc}): retry after a second", BUSY)
        except DeadlineExceeded:
            return json_error(503, f"no answer within {self.settings.timeout_ms:g} ms: retry after a second", BUSY)
        except ModelCallFailed as exc:
            return json_error(500, str(exc))
        except ShuttingDown:
            return json_error(503, "the service is shutting down: retry on another replica, or in a second", BUSY)
        finally:
            self.state.predicting -= 1
            self.metrics.queue_depth.set(self.batcher.waiting)
        done = time.perf_counter()
        queued, inference = job.started - job.queued, done - job.started
        self.metrics.queue_time.observe(queued)
        self.metrics.latency.observe(done - start)
        self.metrics.latency_by_length.labels(length_bucket(max(read for read, _ in counts))).observe(done - start)
        response.headers["x-queue-time-ms"] = f"{queued * 1000:.2f}"
        response.headers["x-inference-time-ms"] = f"{inference * 1000:.2f}"
        return probs, used

    @staticmethod
    def counted(items: list, current: LoadedModel, truncate: bool, kind: str):
        """Each item's (tokens read, tokens it has), or the 422 refusing a cut when ``truncate`` is false."""
        maxlen = current.classifier.maxlen
        counts = token_counts(current.counter, items, maxlen)
        cut = first_truncated(counts)
        if cut and not truncate:
            return json_error(422, f"{kind}[{cut[0]}] is {cut[1]} tokens, over this model's {maxlen}: shorten it, "
                              "or send \"truncate\": true to classify its first tokens")
        return counts

    async def classify_items(self, texts: list | None, pairs: list | None, truncate: bool, response,
                             name: str | None = None):
        """Check the items, count their tokens, run them through the batcher and count what was read:
        (probabilities, the model that answered, the counts), or the error response. ``name``: what the client
        called its list, for the errors' wording."""
        start = time.perf_counter()
        current = self.batcher.model  # checked against this model, and answered by it
        items = check_request(texts, pairs, current, self.settings.max_chars, name)
        if isinstance(items, str):
            return json_error(422, items)
        counts = self.counted(items, current, truncate, name or ("texts" if texts is not None else "pairs"))
        if not isinstance(counts, list):
            return counts
        result = await self.answer(items, current, response, start, counts)
        if not isinstance(result, tuple):
            return result
        self.metrics.read(counts)
        return (*result, counts)
