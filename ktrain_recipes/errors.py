"""The one exception type users see (a message that says what is wrong and what to do), and notes."""

import errno
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


def disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` says the disk (or the user's quota) is full: an ``OSError``'s errno, or the words of the
    libraries that report it otherwise (TensorFlow's ResourceExhausted, ``datasets``' own check)."""
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    return any(words in str(exc) for words in ("No space left on device", "Disk quota exceeded",
                                               "Not enough disk space"))

