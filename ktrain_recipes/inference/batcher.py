"""Micro-batching: the texts of requests that arrive together go through one model call, on one thread.

One thread also means the Rust tokenizer is never used from two threads at once ("Already borrowed").
"""

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ktrain_recipes.inference.service_model import LoadedModel


class MicroBatcher:
    """Joins the texts of requests that arrive together into one model call, on one worker thread."""

    def __init__(self, model: LoadedModel, max_batch: int, max_wait_ms: float):
        self.model, self.max_batch, self.max_wait = model, max_batch, max_wait_ms / 1000
        self.queue: asyncio.Queue | None = None
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="model")
        self.calls = 0

    async def predict(self, texts: list) -> tuple[Any, LoadedModel]:
        """Probabilities for ``texts`` (texts x labels) and the model that gave them."""
        future = asyncio.get_running_loop().create_future()
        await self.queue.put((texts, future))
        return await future

    async def run(self) -> None:
        self.queue = asyncio.Queue()
        loop = asyncio.get_running_loop()
        while True:
            # requests that arrived while the model was busy are all here: take them (up to max_batch); when
            # the model was idle, wait at most max_wait for company
            batch = [await self.queue.get()]
            size = len(batch[0][0])
            deadline = loop.time() + self.max_wait
            while size < self.max_batch:
                try:
                    item = self.queue.get_nowait()
                except asyncio.QueueEmpty:
                    if len(batch) > 1 or loop.time() >= deadline:
                        break
                    await asyncio.sleep(self.max_wait / 4)
                    continue
                batch.append(item)
                size += len(item[0])
            model = self.model  # a hot swap changes self.model between batches, never within one
            texts = [t for texts, _ in batch for t in texts]
            try:
                probs = await loop.run_in_executor(self.worker, model.classifier.predict_proba, texts)
            except Exception as exc:  # noqa: BLE001  (the waiting requests get the error, the loop goes on)
                for _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            self.calls += 1
            start = 0
            for texts, future in batch:
                if not future.done():
                    future.set_result((probs[start:start + len(texts)], model))
                start += len(texts)
