"""Stopping the service well: the first SIGTERM or Ctrl-C drains it, a second stops it within a second, and no
request is ever answered by a plain-text 500 on the way out (``serve`` runs uvicorn with this server)."""

from __future__ import annotations

import asyncio
import math

import uvicorn

# after --drain-s, the model calls under way finish (milliseconds each) before uvicorn cancels what is left
DRAIN_MARGIN_S = 2.0


class DrainingServer(uvicorn.Server):
    """The first SIGTERM or Ctrl-C starts a drain: the socket stays open, so that readiness probes read 503
    while the requests in flight are answered; once none is left, or at --drain-s, uvicorn's own shutdown
    runs. A second signal stops within a second (``stop_now``).

    /predict requests that still arrive meanwhile (a balancer takes a moment to notice) are answered too."""

    def __init__(self, config: uvicorn.Config, service, drain_s: float):
        """``service``: the app ``create_app`` made (its state: draining, the batcher, requests predicting);
        ``drain_s``: ``--drain-s``, 0 for no limit."""
        super().__init__(config)
        self.service, self.drain_s = service, drain_s
        self.exit_signal = None  # (signal, frame) of the first signal
        self.drain_until = None  # event-loop time; inf for --drain-s 0 (no limit)

    def handle_exit(self, sig, frame):
        if self.exit_signal is not None:  # a second signal: stop now, without waiting for anyone
            asyncio.get_event_loop().call_soon_threadsafe(self.stop_now)
            return None
        self.exit_signal = (sig, frame)
        self.service.state.draining = True  # /health/ready answers 503 from now on

    def stop_now(self) -> None:
        """The second signal: what waits for the model, or is in its call, is answered JSON 503 at once; a
        moment later (for those answers to be written) every request still open is cancelled, which the guard
        answers JSON 503 too (``service.guard``); then uvicorn's shutdown runs as usual, lifespan included, so
        that nothing is left to be cancelled into a traceback when the process ends."""
        loop = asyncio.get_running_loop()
        self.service.state.batcher.shed(calling=True)
        self.config.timeout_graceful_shutdown = DRAIN_MARGIN_S

        def cancel_the_rest():
            for task in list(self.server_state.tasks):
                task.cancel()
            if not self.should_exit:
                super(DrainingServer, self).handle_exit(*self.exit_signal)
            loop.call_later(0.2, close_connections)

        def close_connections():  # once those answers are out: no connection keeps the shutdown waiting
            for connection in list(self.server_state.connections):
                transport = getattr(connection, "transport", None)
                if transport is not None:
                    transport.close()

        loop.call_later(0.2, cancel_the_rest)

    async def on_tick(self, counter: int) -> bool:
        if self.exit_signal is not None and not self.should_exit:
            loop = asyncio.get_running_loop()
            if self.drain_until is None:
                self.drain_until = loop.time() + self.drain_s if self.drain_s else math.inf
                if self.drain_s:
                    # at the deadline, what still waits for a model call gets JSON 503 (uvicorn's own
                    # deadline, a little later, would cancel it into a plain-text 500)
                    loop.call_later(self.drain_s, self.service.state.batcher.shed)
            if not self.service.state.predicting or loop.time() >= self.drain_until:
                left = self.drain_until - loop.time()
                # what is left (bodies still arriving, answers being written) gets the rest of the drain
                self.config.timeout_graceful_shutdown = (None if math.isinf(left)
                                                         else max(left, 0) + DRAIN_MARGIN_S)
                super().handle_exit(*self.exit_signal)
        return await super().on_tick(counter)
