"""How much of each text a model reads: the tokens it has, the tokens the model keeps (maxlen), and whether it was
cut. Every path that classifies reports it (HTTP, files, Python), and a request may refuse to be cut."""

from __future__ import annotations


def token_counts(tokenizer, items: list, maxlen: int) -> list[tuple[int, int]]:
    """(tokens the model reads, tokens the item has), special tokens included, for texts or (first, second) pairs.

    Items are checked for length before they get here (the service's max_chars, the readers' line limit): the
    tokenizer reads each whole, without truncation, to count what would be cut."""
    if not items:
        return []
    pairs = isinstance(items[0], tuple)
    firsts = [item[0] if pairs else item for item in items]
    seconds = [item[1] for item in items] if pairs else None
    ids = tokenizer(firsts, seconds, truncation=False, add_special_tokens=True, verbose=False)["input_ids"]
    return [(min(len(row), maxlen), len(row)) for row in ids]


def first_truncated(counts: list[tuple[int, int]]) -> tuple[int, int] | None:
    """The position and full length of the first item longer than the model reads, or None."""
    return next(((i, total) for i, (read, total) in enumerate(counts) if total > read), None)
