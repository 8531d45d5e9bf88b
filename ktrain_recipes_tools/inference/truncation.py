"""How much of each text a model reads: the tokens it has, the tokens the model keeps (maxlen), and whether it was
cut. Every path that classifies reports it (HTTP, files, Python), and a request may refuse to be cut."""

from __future__ import annotations


def token_counts(tokenizer, items: list, maxlen: int) -> list[tuple[int, int]]:
    """(tokens the model reads, tokens the item has), special tokens included, for texts or (first, second) pairs.

    Items are bounded in length before they get here (the service's max_chars; ``prediction.cut`` elsewhere, which
    keeps far more characters than maxlen tokens need): the tokenizer reads each whole to count what is cut."""
    from ktrain_recipes.data.maxlen import token_lengths

    return [(min(n, maxlen), n) for n in token_lengths(tokenizer, items)] if items else []


def first_truncated(counts: list[tuple[int, int]]) -> tuple[int, int] | None:
    """The position and full length of the first item longer than the model reads, or None."""
    return next(((i, total) for i, (read, total) in enumerate(counts) if total > read), None)


def read_fields(counts: list[tuple[int, int]]) -> list[dict]:
    """Each item's ``{"tokens", "truncated"}`` as every route reports it: the tokens the model read, and whether the
    item had more than that (an item of exactly maxlen tokens is read whole, so it is not truncated)."""
    return [{"tokens": read, "truncated": total > read} for read, total in counts]
