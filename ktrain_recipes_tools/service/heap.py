"""Python's cyclic garbage collector kept off the request path. A full collection walks every object the process
holds (the web stack, the tokenizer, the model's wrapper: a few hundred thousand), and while it runs no request
moves: at 32 clients it was the 1% of answers that took 2.5 times the median (p99 148 ms against 68 ms with the
collector off; docs/results.md). What is alive once the service has started, and again after a hot swap, is moved
out of the collector's reach (``gc.freeze``); what requests make and drop is collected as before.

A very large request (thousands of texts) leaves the memory its body, its items and its answer took free inside the
process, where the C allocator keeps it; ``give_back`` returns those free pages to the system."""

import gc


def settle() -> None:
    """Collect what is garbage now, then freeze what is left, so later collections walk only newer objects."""
    gc.unfreeze()  # a swap's old model, frozen at start, is collectable again
    gc.collect()
    gc.freeze()


def give_back() -> None:
    """Return the C heap's free pages to the system (glibc's ``malloc_trim``); nothing on other C libraries."""
    import ctypes

    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc (musl, macOS): their allocators return memory their own way
        pass
