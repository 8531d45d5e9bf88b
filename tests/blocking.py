"""For tests of what must never block (a FIFO read, another user's lock): run a call in a thread and see whether it
finished in time, and how."""

import threading


def outcome_within(call, seconds: float) -> list[str]:
    """Run ``call()`` in a daemon thread for at most ``seconds``: ``["done"]``, ``[the RecipesError's message]``, or
    ``[]`` when it is still blocked (the thread is left behind, a daemon)."""
    from ktrain_recipes.errors import RecipesError

    outcome: list[str] = []

    def attempt():
        try:
            call()
            outcome.append("done")
        except RecipesError as exc:
            outcome.append(str(exc))

    thread = threading.Thread(target=attempt, daemon=True)
    thread.start()
    thread.join(seconds)
    return outcome
