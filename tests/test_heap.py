"""The service keeps Python's cyclic collector off the request path: what is alive once it has started (and after a
hot swap) is frozen, and a swap's old model is still freed. At 32 clients the collector's full walks were the slow
1% of answers (docs/results.md, serving)."""

import asyncio
import gc
import shutil
import weakref

from fastapi.testclient import TestClient

from ktrain_recipes_tools.service import heap
from ktrain_recipes_tools.service.app import create_app
from ktrain_recipes_tools.service.settings import ServiceSettings


class Node:
    """An object in a reference cycle: only the cyclic collector frees it."""

    def __init__(self):
        self.me = self


def test_settle_frees_what_an_earlier_freeze_kept_and_freezes_the_rest():
    try:
        node = Node()
        ref = weakref.ref(node)
        gc.freeze()
        del node
        gc.collect()
        assert ref() is not None  # frozen: a collection does not reach it (the old model after a swap, without settle)
        heap.settle()
        assert ref() is None and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_the_service_freezes_its_heap_at_start_and_a_swap_frees_the_old_model(exported, tiny_predictor, tmp_path):
    from predictor_copies import save_copy

    from ktrain_recipes.inference.onnx_inference import export_onnx

    gc.unfreeze()
    live = tmp_path / "live"
    shutil.copytree(exported, live)
    try:
        app = create_app(ServiceSettings(str(live), reload_interval=0))
        with TestClient(app) as client:
            assert gc.get_freeze_count() > 10_000  # the model and the web stack
            assert client.post("/predict", json={"texts": ["i am happy"]}).status_code == 200
            old = weakref.ref(app.state.batcher.model.classifier)
            save_copy(tiny_predictor, live)
            export_onnx(live)
            assert asyncio.run(app.state.reloader.check()) is True
            assert old() is None  # the swap's settle freed the old model, frozen at start
            assert client.post("/predict", json={"texts": ["i am happy"]}).status_code == 200
    finally:
        gc.unfreeze()


def test_a_large_request_gives_its_memory_back_to_the_system_and_a_small_one_does_not(monkeypatch):
    """A 10,000-text request left the service 139 MB above its resting memory for good (docs/serve/
    large_request.json measures it: 17.6 MB after the fix): the C allocator kept the freed pages. The guard now
    returns them after a request whose body is large, off the event loop."""
    import threading

    from ktrain_recipes_tools.service import guard as guard_module

    calls = []
    done = threading.Event()
    monkeypatch.setattr(heap, "give_back", lambda: (calls.append(1), done.set()))

    async def app(scope, receive, send):
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    class Metrics:
        class requests:
            @staticmethod
            def labels(*args):
                return type("Counter", (), {"inc": lambda self: None})()

    async def one(size: int):
        guarded = guard_module.Guard(app, 1 << 30, None, Metrics, 8)
        body = b"x" * size
        sent = []

        async def receive():
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message):
            sent.append(message)

        scope = {"type": "http", "method": "POST", "path": "/predict",
                 "headers": [(b"content-length", str(size).encode())]}
        await guarded(scope, receive, send)
        await asyncio.sleep(0.2)  # the executor's call, if any
        return sent[0]["status"]

    assert asyncio.run(one(1000)) == 200 and calls == []
    assert asyncio.run(one(guard_module.LARGE_BODY)) == 200
    assert done.wait(5) and calls == [1]
    monkeypatch.undo()
    heap.give_back()  # glibc's malloc_trim, or nothing elsewhere: never an error
