"""Micro-batching: the texts of requests that arrive together go through one model call, on one thread.

One thread also means the Rust tokenizer is never used from two threads at once ("Already borrowed"). Each
request is answered by the model it was validated against (a hot swap never mixes models within a batch); the
queue is bounded in texts (past it: ``QueueFull``, answered 429); a request still waiting at its deadline is
dropped (``DeadlineExceeded``, answered 503); and when a model call fails, the batch is split so that only the
request at fault gets the error.
"""

import asyncio
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ktrain_recipes.errors import RecipesError
from ktrain_recipes.config import check_whole
from ktrain_recipes_tools.service.model import LoadedModel

log = logging.getLogger("ktrain_recipes_tools.service.app")


class QueueFull(Exception):
    """More texts are waiting than the queue holds."""


class DeadlineExceeded(Exception):
    """A request waited past its deadline before its model call began."""


class ModelCallFailed(Exception):
    """The model could not classify this request's texts (the message says why, in one line)."""


class ShuttingDown(Exception):
    """The service stopped while the request waited: its drain time ran out before a model call took it."""


@dataclass
class Job:
    texts: list
    model: LoadedModel
    future: asyncio.Future
    deadline: float | None  # loop time
    tokens: int = 0  # the tokens the model reads of these texts (0: not counted)
    queued: float = field(default_factory=time.perf_counter)
    started: float | None = None


class MicroBatcher:
    """Joins the texts of requests that arrive together into one model call, on one worker thread."""

    def __init__(self, model: LoadedModel, max_batch: int, max_wait_ms: float, max_queue: int | None = None,
                 on_call=None, max_tokens: int | None = None):
        """``max_batch``: the most texts in one model call (the service's ``--max-call``; a request larger than it is
        one call, which the model cuts into batches of that size). ``max_tokens``: the most tokens in one model call
        (the service's ``--max-call-tokens``; None: no limit): requests join a call until their tokens reach it, so
        that under load a short text waits for a call of about that size, not for ``max_batch`` texts. ``on_call(texts,
        ok)``: told of every model call (the service's metrics). The bounds are checked here,
        for a batcher made in Python as much as for the service's flags (``ServiceSettings`` checks those first)."""
        check_whole(max_batch, "max_batch")  # texts
        if isinstance(max_wait_ms, bool) or not isinstance(max_wait_ms, (int, float)) \
                or not 0 <= max_wait_ms < float("inf"):
            raise RecipesError(f"max_wait_ms must be a finite number of milliseconds, 0 or more; got {max_wait_ms!r}")
        # a call takes what is waiting, up to max_batch, so a queue smaller than one call is fine; that a whole
        # request fits the queue is the service's check (--max-queue against --max-batch, the request bound)
        check_whole(max_queue, "max_queue", optional=True)  # texts
        check_whole(max_tokens, "max_tokens", optional=True)
        self.model, self.max_batch, self.max_wait = model, max_batch, max_wait_ms / 1000
        self.max_queue, self.on_call = max_queue, on_call or (lambda texts, ok: None)
        self.max_tokens = max_tokens
        self.calls = 0
        self.queue: asyncio.Queue | None = None
        self.waiting = 0  # texts queued, not yet in a model call
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="model")
        self._carry: list[Job] = []  # jobs of another model than the batch being built: first in the next one
        self._calling: list[Job] = []  # the jobs of the model call under way

    async def predict(self, texts: list, model: LoadedModel | None = None,
                      timeout_s: float | None = None, tokens: int = 0) -> tuple[Any, LoadedModel, Job]:
        """Probabilities for ``texts`` (texts x labels) from ``model`` (the one the request was checked against),
        the model that gave them, and the job's timings. ``tokens``: what the model reads of them, for the call's
        token budget (0: counted as nothing)."""
        if self.max_queue is not None and self.waiting + len(texts) > self.max_queue:
            raise QueueFull(f"{self.waiting} texts are waiting (the queue holds {self.max_queue})")
        loop = asyncio.get_running_loop()
        job = Job(texts, model or self.model, loop.create_future(), loop.time() + timeout_s if timeout_s else None,
                  tokens)
        self.waiting += len(texts)
        await self.queue.put(job)
        # the deadline is kept by a timer, not only when the batcher next looks: behind a long model call a request
        # would otherwise learn it expired only when that call ends
        timer = loop.call_at(job.deadline, self._expire, job) if job.deadline is not None else None
        try:
            probs, used = await job.future
        finally:
            if timer is not None:
                timer.cancel()
        return probs, used, job

    def _expire(self, job: Job) -> None:
        """A job still waiting (not in a model call) at its deadline: answered ``DeadlineExceeded`` now; the batcher
        drops it when it reaches it."""
        if job.started is None and not job.future.done():
            self.waiting -= len(job.texts)
            job.future.set_exception(DeadlineExceeded("the request waited past its deadline"))

    async def run(self) -> None:
        self.queue = asyncio.Queue()
        loop = asyncio.get_running_loop()
        while True:
            batch = await self._gather(loop)
            if batch:
                await self._call(loop, batch)
            # not kept while the next batch gathers: its jobs hold the model that answered them, and a model swapped
            # out by a reload must be freed at the swap (service.heap), not after the next request
            batch = None

    async def _gather(self, loop) -> list[Job]:
        """Requests that arrived while the model was busy are all queued: take them (up to max_batch texts and
        max_tokens tokens, all of one model); when the model was idle, wait at most max_wait for company. Expired
        requests are dropped."""
        first = self._carry.pop(0) if self._carry else await self.queue.get()
        batch, size, tokens = [first], len(first.texts), first.tokens
        deadline = loop.time() + self.max_wait
        while size < self.max_batch and (self.max_tokens is None or tokens < self.max_tokens):
            if self._carry and self._carry[0].model is first.model:
                item = self._carry.pop(0)
            else:
                try:
                    item = self.queue.get_nowait()
                except asyncio.QueueEmpty:
                    if len(batch) > 1 or loop.time() >= deadline:
                        break
                    await asyncio.sleep(self.max_wait / 4)
                    continue
            if item.model is not first.model:  # validated against another model (a swap): its own batch
                self._carry.append(item)
                break
            if size + len(item.texts) > self.max_batch or (  # no room: first in the next batch, never past a limit
                    self.max_tokens is not None and tokens + item.tokens > self.max_tokens):
                self._carry.insert(0, item)
                break
            batch.append(item)
            size += len(item.texts)
            tokens += item.tokens
        now = loop.time()
        live = []
        for job in batch:
            if job.future.done():  # expired by its timer (and counted out of the queue then)
                continue
            if job.deadline is not None and now > job.deadline:
                self.waiting -= len(job.texts)
                if not job.future.done():
                    job.future.set_exception(DeadlineExceeded("the request waited past its deadline"))
            else:
                live.append(job)
        return live

    async def _call(self, loop, batch: list[Job]) -> None:
        model = batch[0].model
        for job in batch:
            self.waiting -= len(job.texts)
            job.started = time.perf_counter()
        texts = [t for job in batch for t in job.texts]
        self._calling = batch
        try:
            probs = await loop.run_in_executor(self.worker, model.classifier.predict_proba, texts)
        except Exception as exc:  # noqa: BLE001  (split the batch: only the request at fault fails)
            self.on_call(len(texts), False)
            if len(batch) == 1:
                self._fail(batch[0], exc)
                return
            for job in batch:
                await self._call(loop, [job])
            return
        finally:
            self._calling = []
        self.calls += 1
        self.on_call(len(texts), True)
        start = 0
        for job in batch:
            if not job.future.done():
                job.future.set_result((probs[start:start + len(job.texts)], model))
            start += len(job.texts)

    def shed(self, calling: bool = False) -> int:
        """Answer every request still waiting for a model call with ``ShuttingDown``; return how many. With
        ``calling``, the requests of the call under way too (a second SIGTERM: stop now; the call's answer, when it
        comes, is dropped)."""
        waiting = list(self._carry)
        self._carry.clear()
        while self.queue is not None and not self.queue.empty():
            waiting.append(self.queue.get_nowait())
        for job in waiting:
            if not job.future.done():  # an expired job was counted out of the queue when it expired
                self.waiting -= len(job.texts)
        for job in waiting + (self._calling if calling else []):
            if not job.future.done():
                job.future.set_exception(ShuttingDown("the service is shutting down"))
        return len(waiting) + (len(self._calling) if calling else 0)

    @staticmethod
    def _fail(job: Job, exc: Exception) -> None:
        why = (str(exc).splitlines() or [""])[0][:200]
        log.warning("a request's model call failed (%s: %s); the other requests were answered",
                    type(exc).__name__, why)
        if not job.future.done():
            job.future.set_exception(ModelCallFailed(f"the model could not classify these texts ({why})"))
