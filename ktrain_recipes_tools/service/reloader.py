"""Hot swap: a new save in the served folder is loaded beside the serving model and swapped in between batches."""

import asyncio
import logging

from ktrain_recipes_tools.service import heap
from ktrain_recipes_tools.service.batcher import MicroBatcher
from ktrain_recipes_tools.service.model import serving_model
from ktrain_recipes_tools.service.settings import ServiceSettings
from ktrain_recipes.predictor.saved import manifest_stamp

log = logging.getLogger("ktrain_recipes_tools.service.app")


class Reloader:
    """Watches the folder's manifest by the loaders' rule (its stamp: two ``stat``s, no read); loads a new save beside
    the serving one and swaps it in."""

    # after a failed load of one save: wait this long before trying it again (a copy into the folder may still
    # be under way), doubling up to MAX_BACKOFF_S; a save with another manifest is tried at once
    FIRST_BACKOFF_S, MAX_BACKOFF_S = 2.0, 60.0

    def __init__(self, settings: ServiceSettings, batcher: MicroBatcher, on_reload=None):
        """``on_reload(ok)``: told of every reload attempt (the service's metrics)."""
        self.settings, self.batcher = settings, batcher
        self.on_reload = on_reload or (lambda ok: None)
        self.failed_stamp: tuple | None = None
        self.retry_at = 0.0
        self.backoff = self.FIRST_BACKOFF_S
        self.swaps = 0
        self.failures = 0

    def due(self, stamp: tuple | None, now: float) -> bool:
        """Whether to try loading the save whose manifest file has the stamp ``stamp`` (``manifest_stamp``)."""
        if stamp is None or stamp == self.batcher.model.stamp:
            return False  # mid-swap, or the save already serving
        return stamp != self.failed_stamp or now >= self.retry_at

    def backend(self) -> str:
        """The backend a new save is loaded with: ``--backend``, except that once ``auto`` chose int8 it stays
        int8. A save without its int8 copy yet (between `train` and `export`) then waits for `export`, rather
        than loading TensorFlow into an int8 service (tens of times slower per request) with no word."""
        if self.settings.backend == "auto" and self.batcher.model.identity["backend"] == "int8":
            return "int8"
        return self.settings.backend

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.settings.reload_interval)
            await self.check()

    async def check(self) -> bool:
        """Look at the folder once: load a new save and swap it in (True), or leave the serving one (False)."""
        loop = asyncio.get_running_loop()
        # off the event loop: a slow disk (or a file that is not what it should be) never stalls requests
        stamp = await loop.run_in_executor(None, manifest_stamp, self.settings.predictor)
        if not self.due(stamp, loop.time()):
            return False
        try:
            model = await loop.run_in_executor(None, serving_model, self.settings, self.backend())
        except Exception as exc:  # noqa: BLE001  (a bad save must never stop the service)
            self.backoff = self.backoff * 2 if stamp == self.failed_stamp else self.FIRST_BACKOFF_S
            self.backoff = min(self.backoff, self.MAX_BACKOFF_S)
            self.failed_stamp, self.retry_at = stamp, loop.time() + self.backoff
            self.failures += 1
            self.on_reload(False)
            log.warning("not reloading '%s' (the old model keeps serving; trying again in %.0f s or when the "
                        "folder changes): %s", self.settings.predictor, self.backoff,
                        str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
            return False
        self.batcher.model = model
        heap.settle()  # one pause now, at the swap, for the old model and the new one's start-up garbage
        self.failed_stamp, self.backoff = None, self.FIRST_BACKOFF_S
        self.swaps += 1
        self.on_reload(True)
        log.warning("reloaded '%s': now serving save %s", self.settings.predictor, model.identity["save_id"])
        return True
