"""The service's batching policy: a batch never holds more than --max-call texts nor --max-call-tokens tokens, and
--max-call is the batch size of the model the service loads; the int8 model runs a batch in calls of like length
within the token budget."""

import asyncio

import numpy as np
import pytest

from ktrain_recipes_tools.service.batcher import MicroBatcher
from ktrain_recipes_tools.service.model import LoadedModel, load_model


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
def test_max_batch_128_is_one_batch_of_128_and_int8_runs_it_within_the_token_budget(exported, backend):
    """The batcher hands the model one batch of 128 texts; ktrain's predictor runs it as one call of 128, the int8
    model in calls of like length, each within batch_policy.CALL_TOKENS padded tokens (past it, a token costs more:
    docs/serve/batch_sweep.json)."""
    from ktrain_recipes.batch_policy import CALL_TOKENS

    model = load_model(exported, backend, batch_size=128)
    calls: list[tuple[int, int]] = []
    if backend == "int8":
        session = model.classifier.session

        class Counting:
            def run(self, names, feed):
                calls.append(feed["input_ids"].shape)
                return session.run(names, feed)

        model.classifier.session = Counting()
    else:  # ktrain's predictor cuts what it is given into batches of its batch_size
        assert model.classifier.predictor.batch_size == 128
        predict = model.classifier.predict_proba

        def counting(texts):
            calls.append((len(texts), None))
            return predict(texts)

        model.classifier.predict_proba = counting
    batcher = MicroBatcher(model, max_batch=128, max_wait_ms=0)
    run_requests(batcher, [128])
    assert sum(n for n, _ in calls) == 128
    if backend == "ktrain":
        assert calls == [(128, None)]
    else:
        assert len(calls) >= 2 and all(n * length <= CALL_TOKENS for n, length in calls), calls


def test_a_batch_stops_at_its_token_budget():
    model = Recording()
    batcher = MicroBatcher(LoadedModel(model, {}, False, "d", {}), max_batch=64, max_wait_ms=0, max_tokens=100)

    async def scenario():
        runner = asyncio.create_task(batcher.run())
        while batcher.queue is None:
            await asyncio.sleep(0)
        jobs = [asyncio.create_task(batcher.predict([f"text {i}"], tokens=30)) for i in range(10)]
        jobs.append(asyncio.create_task(batcher.predict(["a long one"], tokens=500)))  # over the budget: alone
        await asyncio.gather(*jobs)
        runner.cancel()

    asyncio.run(scenario())
    assert sum(model.calls) == 11 and max(model.calls) <= 3  # 3 x 30 tokens fit 100, 4 do not
    assert model.calls[-1] == 1


@pytest.mark.parametrize("kwargs, message", [
    (dict(max_batch=0, max_wait_ms=2), "max_batch must be a whole number"),
    (dict(max_batch=True, max_wait_ms=2), "max_batch must be a whole number"),
    (dict(max_batch=8, max_wait_ms=float("nan")), "max_wait_ms must be a finite number"),
    (dict(max_batch=8, max_wait_ms=-1), "max_wait_ms must be a finite number"),
    (dict(max_batch=8, max_wait_ms=2, max_queue=0), "max_queue must be None or a whole number of at least 1, got 0"),
    (dict(max_batch=8, max_wait_ms=2, max_queue=2.5), "max_queue must be None or a whole number"),
    (dict(max_batch=8, max_wait_ms=2, max_tokens=0), "max_tokens must be None or a whole number of at least 1"),
])
def test_a_batcher_refuses_bounds_that_cannot_work(kwargs, message):
    from ktrain_recipes import RecipesError

    with pytest.raises(RecipesError, match=message):
        MicroBatcher(None, **kwargs)
    MicroBatcher(None, max_batch=8, max_wait_ms=0, max_queue=1).worker.shutdown()  # the edge is fine
    # a queue smaller than one model call: calls take what waits (the service's --max-queue 16 with --max-call 64)
    MicroBatcher(None, max_batch=64, max_wait_ms=0, max_queue=16).worker.shutdown()


def test_the_service_has_two_limits_texts_per_request_and_texts_per_model_call(exported):
    """--max-batch bounds a request (a 422 past it); --max-call bounds each model call, however large the request:
    a request of 40 texts with --max-call 16 is answered whole, by calls of at most 16 texts."""
    from fastapi.testclient import TestClient

    from ktrain_recipes_tools.service.app import create_app
    from ktrain_recipes_tools.service.settings import ServiceSettings

    settings = ServiceSettings(str(exported), max_batch=40, max_call=16, max_queue=64, reload_interval=0)
    model = load_model(exported, "int8", batch_size=settings.max_call)
    calls: list[int] = []
    session = model.classifier.session

    class Counting:
        def run(self, names, feed):
            calls.append(len(next(iter(feed.values()))))
            return session.run(names, feed)

    model.classifier.session = Counting()
    with TestClient(create_app(settings, model=model)) as client:
        answer = client.post("/predict", json={"texts": [f"i feel fine {i}" for i in range(40)]})
        assert answer.status_code == 200 and len(answer.json()["predictions"]) == 40
        assert calls and max(calls) <= 16 and sum(calls) == 40
        too_many = client.post("/predict", json={"texts": ["i feel fine"] * 41})
        assert too_many.status_code == 422 and "40" in too_many.json()["error"]
        assert client.get("/metadata").json()["limits"]["max_call"] == 16


def test_the_service_loads_its_model_with_max_call_texts_per_call(exported):
    """The real wiring, not a model the test built: the app, the server, the reloader and Ray Serve load through
    ``serving_model``, whose int8 model runs calls of at most --max-call texts."""
    from fastapi.testclient import TestClient

    from ktrain_recipes_tools.service.app import create_app
    from ktrain_recipes_tools.service.settings import ServiceSettings

    settings = ServiceSettings(str(exported), max_batch=40, max_call=16, max_queue=64, reload_interval=0,
                               backend="int8")
    with TestClient(create_app(settings)) as client:
        classifier = client.app.state.batcher.model.classifier
        # both layers hold the limit: each would hide the other's mistake from a count of calls alone
        assert (client.app.state.batcher.max_batch, classifier.batch_size) == (16, 16)
        calls: list[int] = []
        session = classifier.session

        class Counting:
            def run(self, names, feed):
                calls.append(len(next(iter(feed.values()))))
                return session.run(names, feed)

        classifier.session = Counting()
        answer = client.post("/predict", json={"texts": [f"i feel fine {i}" for i in range(40)]})
        assert answer.status_code == 200 and len(answer.json()["predictions"]) == 40
        assert calls and max(calls) <= 16 and sum(calls) == 40


def test_a_request_past_its_deadline_is_answered_at_the_deadline_not_when_the_model_is_free():
    """A 200 ms deadline behind a 1 s model call was answered 503 after 1.02-1.21 s: the deadline is kept by a
    timer, and the batcher drops the expired request when it reaches it (never calling the model for it)."""
    import time

    from ktrain_recipes_tools.service.batcher import DeadlineExceeded

    class Slow(Recording):
        def predict_proba(self, texts):
            time.sleep(1.0)
            return super().predict_proba(texts)

    classifier = Slow()
    batcher = MicroBatcher(LoadedModel(classifier, {}, False, "d", {}), max_batch=1, max_wait_ms=0)

    async def scenario():
        runner = asyncio.create_task(batcher.run())
        while batcher.queue is None:
            await asyncio.sleep(0)
        busy = asyncio.create_task(batcher.predict(["first"]))  # holds the model for a second
        await asyncio.sleep(0.05)
        start = time.perf_counter()
        try:
            await batcher.predict(["second"], timeout_s=0.2)
        except DeadlineExceeded:
            waited = time.perf_counter() - start
        await busy
        await asyncio.sleep(0.05)
        runner.cancel()
        return waited

    waited = asyncio.run(scenario())
    assert 0.2 <= waited < 0.6, waited
    assert classifier.calls == [1] and batcher.waiting == 0  # the expired request never reached the model
