"""Hot swap: a new save in the served folder is loaded beside the serving model and swapped in between batches."""

import asyncio
import logging

from ktrain_recipes.inference.batcher import MicroBatcher
from ktrain_recipes.inference.service_model import load_model
from ktrain_recipes.inference.service_settings import ServiceSettings
from ktrain_recipes.predictor.manifest import manifest_digest

log = logging.getLogger("ktrain_recipes.inference.service")


class Reloader:
    """Watches the folder's manifest; loads a new save beside the serving one and swaps it in."""

    def __init__(self, settings: ServiceSettings, batcher: MicroBatcher):
        self.settings, self.batcher = settings, batcher
        self.failed_digest: str | None = None
        self.swaps = 0

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(self.settings.reload_interval)
            digest = manifest_digest(self.settings.predictor)
            if digest is None or digest in (self.batcher.model.digest, self.failed_digest):
                continue  # no change, mid-swap, or a save that already failed to load
            try:
                model = await loop.run_in_executor(None, load_model, self.settings.predictor, self.settings.backend,
                                                   self.settings.threads)
            except Exception as exc:  # noqa: BLE001  (a bad save must never stop the service)
                self.failed_digest = digest
                log.warning("not reloading '%s' (the old model keeps serving): %s", self.settings.predictor, exc)
                continue
            self.batcher.model = model
            self.swaps += 1
            log.warning("reloaded '%s': now serving save %s", self.settings.predictor, model.identity["save_id"])
