"""Transfer data for distillation, made from the training texts alone (Tang et al. 2019, "Distilling
Task-Specific Knowledge from BERT into Simple Neural Networks", section 3.2): each copy of a text has some
words masked or replaced by another word of the corpus, some dropped, words shuffled within a small window,
and sometimes only an n-gram of it kept. The teacher then labels every copy with its probabilities."""

from __future__ import annotations

import math

import numpy as np

from ktrain_recipes.errors import RecipesError
from ktrain_recipes.config import check_whole


def augment(texts: list, copies: int, seed: int = 0, mask_token: str = "[MASK]", p_mask: float = 0.1,
            p_replace: float = 0.1, p_drop: float = 0.1, p_ngram: float = 0.25, window: int = 3) -> list:
    """Return ``copies`` altered copies of each text (sentence pairs: each part altered alike), in order:
    the copies of the first text, then of the second, and so on. Seeded: the same call gives the same copies.
    Settings out of range are refused with one line (a string for ``texts`` would give one copy per character)."""
    _check(texts, copies, p_mask, p_replace, p_drop, p_ngram, window)
    check_whole(seed, "augment's seed", 0, 2**32 - 1)
    rng = np.random.default_rng(seed)
    vocabulary = sorted({w for t in texts for part in (t if isinstance(t, tuple) else (t,)) for w in part.split()})
    out = []
    for text in texts:
        for _ in range(copies):
            if isinstance(text, tuple):
                out.append(tuple(_alter(p, rng, vocabulary, mask_token, p_mask, p_replace, p_drop, p_ngram, window)
                                 for p in text))
            else:
                out.append(_alter(text, rng, vocabulary, mask_token, p_mask, p_replace, p_drop, p_ngram, window))
    return out


def _alter(text: str, rng, vocabulary: list[str], mask_token: str, p_mask: float, p_replace: float,
           p_drop: float, p_ngram: float, window: int) -> str:
    words = text.split()
    kept = []
    for word in words:
        r = rng.random()
        if r < p_mask:
            kept.append(mask_token)
        elif r < p_mask + p_replace and vocabulary:
            kept.append(vocabulary[rng.integers(len(vocabulary))])
        elif r < p_mask + p_replace + p_drop and len(words) > 1:
            continue
        else:
            kept.append(word)
    if len(kept) > 2 and rng.random() < p_ngram:  # an n-gram of the text, 1 to 5 words long
        n = int(rng.integers(1, min(5, len(kept)) + 1))
        start = int(rng.integers(0, len(kept) - n + 1))
        kept = kept[start:start + n]
    for start in range(0, len(kept), window):  # shuffle within windows: the order changes locally only
        part = kept[start:start + window]
        rng.shuffle(part)
        kept[start:start + window] = part
    return " ".join(kept) or (words[0] if words else text)


def _check(texts, copies, p_mask: float, p_replace: float, p_drop: float, p_ngram: float, window: int) -> None:
    if isinstance(texts, (str, bytes)) or not hasattr(texts, "__iter__"):
        raise RecipesError(f"augment takes a list of texts, got {type(texts).__name__}: wrap one text as [text]")
    texts = list(texts)
    for i, text in enumerate(texts):
        parts = text if isinstance(text, tuple) else (text,)
        if not all(isinstance(p, str) for p in parts) or len(parts) not in (1, 2):
            raise RecipesError(f"text {i} is {type(text).__name__} {text!r:.40}, not a string or a pair of strings: "
                               "give texts as strings")
    check_whole(copies, "copies", 0)
    check_whole(window, "window", 1)
    chances = {"p_mask": p_mask, "p_replace": p_replace, "p_drop": p_drop, "p_ngram": p_ngram}
    for name, value in chances.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (math.isfinite(value)
                                                                                  and 0 <= value <= 1):
            raise RecipesError(f"{name} must be a chance from 0 to 1, got {value!r}")
    if p_mask + p_replace + p_drop > 1:
        raise RecipesError(f"p_mask + p_replace + p_drop must be at most 1 (one word gets one change), got "
                           f"{p_mask + p_replace + p_drop:g}")
