"""Choose maxlen from the data: ktrain's ``text.Transformer`` needs one, and the tutorial's 512 wastes compute. The
token counts it is chosen from (``token_lengths``, ``tokenize``: single texts and pairs alike) live here too."""

from __future__ import annotations

import math

import numpy as np

from ktrain_recipes.errors import RecipesError, note

MAXLEN_QUANTILE = 99.9  # cover all but 1 text in 1000; the rest are truncated


def load_tokenizer(model_path: str):
    """Load the tokenizer of a resolved model (directory or hub id)."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(model_path)


def choose_maxlen(lengths: list[int], cap: int = 512, quantile: float = MAXLEN_QUANTILE) -> int:
    """Pick maxlen from token lengths: their quantile, rounded up to a multiple of 8, capped."""
    if not lengths:
        raise RecipesError("cannot choose maxlen from no texts")
    return int(min(cap, max(8, math.ceil(np.percentile(lengths, quantile) / 8) * 8)))


def resolve_maxlen(maxlen: int | str, tokenizer, texts: list[str], verbose: bool = True) -> int:
    """Return maxlen as an int: ``'auto'`` picks it from the training texts' token lengths,
    ``'max'`` is the model's limit (512 for BERT: what the original tutorial used)."""
    cap = min(512, getattr(tokenizer, "model_max_length", 512) or 512)
    lengths = token_lengths(tokenizer, texts)
    if maxlen == "auto":
        maxlen = choose_maxlen(lengths, cap)
    elif maxlen == "max":
        maxlen = cap
    elif not isinstance(maxlen, int) or not 8 <= maxlen <= cap:
        raise RecipesError(f"maxlen must be 'auto', 'max' or an integer from 8 to {cap}, got {maxlen!r}")
    if verbose:
        over = sum(n > maxlen for n in lengths)
        note(f"maxlen {maxlen}: {over} of {len(lengths)} training texts are longer and get truncated "
              f"(mean {np.mean(lengths):.1f}, max {max(lengths)} tokens)")
    return maxlen


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
