"""The one exception type users see (a message that says what is wrong and what to do), and notes."""


class RecipesError(Exception):
    """A user-facing error; the CLI prints it on one line and exits with status 1."""


def note(message: str) -> None:
    """Print a note or warning for the user on stderr (results go to stdout, so they can be piped)."""
    import sys

    print(message, file=sys.stderr, flush=True)
