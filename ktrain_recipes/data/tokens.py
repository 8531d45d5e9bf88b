"""Tokenize single texts or (first, second) text pairs alike, and count their tokens."""

from __future__ import annotations


def token_lengths(tokenizer, texts: list) -> list[int]:
    """Return the number of tokens (with special tokens) of each text or text pair, before truncation."""
    # verbose=False: the "longer than the model's maximum" warning is about feeding such a sequence to the
    # model, which truncation prevents; here the length is only counted
    return [len(ids) for ids in tokenize(tokenizer, texts, truncation=False, verbose=False)["input_ids"]]


def tokenize(tokenizer, texts: list, **kwargs):
    """Call a Hugging Face tokenizer on texts, or on (first, second) pairs as two lists."""
    texts = list(texts)
    if texts and isinstance(texts[0], tuple):
        return tokenizer([a for a, _ in texts], [b for _, b in texts], **kwargs)
    return tokenizer(texts, **kwargs)
