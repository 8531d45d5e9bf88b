"""The one exception type users see: a message that says what is wrong and what to do."""


class RecipesError(Exception):
    """A user-facing error; the CLI prints it on one line and exits with status 1."""
