"""The one exception type users see (a message that says what is wrong and what to do), and notes."""

from contextlib import contextmanager


class RecipesError(Exception):
    """A user-facing error; the CLI prints it on one line and exits with status 1."""


_said: set[str] | None = None  # inside ``once_each``: the notes already printed


def note(message: str) -> None:
    """Print a note or warning for the user on stderr (results go to stdout, so they can be piped)."""
    import sys

    if _said is not None:
        if message in _said:
            return
        _said.add(message)
    print(message, file=sys.stderr, flush=True)


@contextmanager
def once_each():
    """While inside: each distinct note is printed once (timing calls a classifier on the same texts many times,
    and its truncation note would repeat for every call)."""
    global _said
    outer, _said = _said, set() if _said is None else _said
    try:
        yield
    finally:
        _said = outer
