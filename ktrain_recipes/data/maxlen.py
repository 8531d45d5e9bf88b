"""Choose maxlen from the data: ktrain's ``text.Transformer`` needs one, and the tutorial's 512 wastes compute."""

from __future__ import annotations

import math

import numpy as np

from ktrain_recipes.errors import RecipesError, note
from ktrain_recipes.data.tokens import token_lengths

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
