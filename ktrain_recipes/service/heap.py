"""Python's cyclic garbage collector kept off the request path. A full collection walks every object the process
holds (the web stack, the tokenizer, the model's wrapper: a few hundred thousand), and while it runs no request
moves: at 32 clients it was the 1% of answers that took 2.5 times the median (p99 148 ms against 68 ms with the
collector off; docs/results.md). What is alive once the service has started, and again after a hot swap, is moved
out of the collector's reach (``gc.freeze``); what requests make and drop is collected as before."""

import gc


def settle() -> None:
    """Collect what is garbage now, then freeze what is left, so later collections walk only newer objects."""
    gc.unfreeze()  # a swap's old model, frozen at start, is collectable again
    gc.collect()
    gc.freeze()
