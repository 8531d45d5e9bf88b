"""The service's batching policy: a batch never holds more than --max-batch texts, and --max-batch is the batch size of
the model the service loads, so that one batch is one model call."""

import asyncio

import numpy as np
import pytest

from ktrain_recipes.service.batcher import MicroBatcher
from ktrain_recipes.service.model import LoadedModel, load_model


class Recording:
    """A classifier that records how many texts each model call held."""

    classes = ["a", "b"]

    def __init__(self):
        self.calls: list[int] = []

    def predict_proba(self, texts):
        self.calls.append(len(texts))
        return np.full((len(texts), 2), 0.5)


def run_requests(batcher: MicroBatcher, sizes: list[int]) -> None:
    async def scenario():
        runner = asyncio.create_task(batcher.run())
        while batcher.queue is None:
            await asyncio.sleep(0)
        # all queued before the worker takes any: the batches form from a full queue
        jobs = [asyncio.create_task(batcher.predict([f"text {i}"] * n)) for i, n in enumerate(sizes)]
        results = await asyncio.gather(*jobs)
        runner.cancel()
        return results

    for (probs, _, _), n in zip(asyncio.run(scenario()), sizes):
        assert len(probs) == n  # every request answered with its own rows


def test_a_batch_never_holds_more_than_max_batch_texts():
    model = Recording()
    batcher = MicroBatcher(LoadedModel(model, {}, False, "d", {}), max_batch=64, max_wait_ms=0)
    sizes = [50, 30, 20, 64, 1, 63, 40, 40]
    run_requests(batcher, sizes)
    assert max(model.calls) <= 64 and sum(model.calls) == sum(sizes)
    assert len(model.calls) < len(sizes)  # requests that fit together still share a call


@pytest.mark.parametrize("backend", ["int8", "ktrain"])
def test_max_batch_128_is_one_model_call_of_128(exported, backend):
    model = load_model(exported, backend, batch_size=128)
    calls: list[int] = []
    if backend == "int8":
        session = model.classifier.session

        class Counting:
            def run(self, names, feed):
                calls.append(len(next(iter(feed.values()))))
                return session.run(names, feed)

        model.classifier.session = Counting()
    else:  # ktrain's predictor cuts what it is given into batches of its batch_size
        assert model.classifier.predictor.batch_size == 128
        predict = model.classifier.predict_proba

        def counting(texts):
            calls.append(len(texts))
            return predict(texts)

        model.classifier.predict_proba = counting
    batcher = MicroBatcher(model, max_batch=128, max_wait_ms=0)
    run_requests(batcher, [128])
    assert calls == [128]


@pytest.mark.parametrize("kwargs, message", [
    (dict(max_batch=0, max_wait_ms=2), "max_batch must be a whole number"),
    (dict(max_batch=True, max_wait_ms=2), "max_batch must be a whole number"),
    (dict(max_batch=8, max_wait_ms=float("nan")), "max_wait_ms must be a finite number"),
    (dict(max_batch=8, max_wait_ms=-1), "max_wait_ms must be a finite number"),
    (dict(max_batch=8, max_wait_ms=2, max_queue=4), "a full batch could never queue"),
])
def test_a_batcher_refuses_bounds_that_cannot_work(kwargs, message):
    from ktrain_recipes import RecipesError

    with pytest.raises(RecipesError, match=message):
        MicroBatcher(None, **kwargs)
    MicroBatcher(None, max_batch=8, max_wait_ms=0, max_queue=8).worker.shutdown()  # the edges are fine
