"""The service keeps Python's cyclic collector off the request path: what is alive once it has started (and after a
hot swap) is frozen, and a swap's old model is still freed. At 32 clients the collector's full walks were the slow
1% of answers (docs/results.md, serving)."""

import asyncio
import gc
import shutil
import weakref

from fastapi.testclient import TestClient

from ktrain_recipes.service import heap
from ktrain_recipes.service.app import create_app
from ktrain_recipes.service.settings import ServiceSettings


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
