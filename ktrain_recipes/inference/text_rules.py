"""The rules every reader and writer of texts follows: what counts as a text to classify, and how a text is
written on one line. The CLI, the streaming reader, Ray, the service and ``kr.classify`` all apply these."""

from __future__ import annotations

import re

from ktrain_recipes.data.characters import is_blank  # noqa: F401  (the rule is the data readers' too)
from ktrain_recipes.errors import RecipesError

_SURROGATE = re.compile("[\ud800-\udfff]")
# Characters kept per token of maxlen when a text is cut before tokenizing: a wordpiece covers at least one
# character, so the cut never changes what the model reads, except across very long runs of spaces.
CHARS_PER_TOKEN = 100




def unreadable(text: str) -> str | None:
    """Why the tokenizer cannot take ``text`` (a lone UTF-16 surrogate, which is not valid Unicode), or None."""
    found = _SURROGATE.search(text)
    return None if found is None else (f"holds a lone surrogate (U+{ord(found.group()):04X}) at character "
                                       f"{found.start()}, which is not valid Unicode: fix the text's encoding")


def problem(text: str) -> str | None:
    """Why ``text`` cannot be classified (blank, or unreadable), worded to follow its name ("text 3 ..."), or None.
    The one wording of these rules for the library, the command line and the service."""
    if is_blank(text):
        return ("is empty or only whitespace/invisible characters (or U+FFFD, or private-use characters): there is "
                "nothing to classify")
    return unreadable(text)


def cut(text: str, maxlen: int) -> str:
    """``text`` cut to ``CHARS_PER_TOKEN * maxlen`` characters before it is tokenized: the tokenizer reads a
    text in full before truncating it, so one huge line would otherwise cost memory in proportion to its size."""
    return text[: CHARS_PER_TOKEN * maxlen]


def check_texts(texts) -> list:
    """Validate prediction input: a string, or a non-empty sequence of strings (or of (text, text) pairs).

    Empty texts, and texts made only of whitespace or invisible characters, are rejected rather than
    given a meaningless label, as are texts the tokenizer cannot read (``unreadable``). Lists, tuples, pandas
    Series and numpy arrays are accepted; a DataFrame, a set (no order) or a mapping is refused.
    """
    import numpy as np

    if isinstance(texts, np.ndarray) and texts.ndim == 0:
        texts = texts.item()
    if isinstance(texts, str):
        texts = [texts]
    if type(texts).__name__ == "DataFrame":
        raise RecipesError("a DataFrame is a table, not a list of texts: pass its text column (table['text'])")
    if isinstance(texts, (set, frozenset)):
        raise RecipesError("a set has no order, so the labels could not be matched to the texts: pass a list")
    if texts is None or isinstance(texts, (bytes, dict)) or not hasattr(texts, "__iter__"):
        raise RecipesError("give at least one text to classify (a string or a list of strings)")
    texts = list(texts)
    if not texts:
        raise RecipesError("give at least one text to classify (a string or a list of strings)")
    for i, text in enumerate(texts):
        parts = list(text) if isinstance(text, tuple) and len(text) == 2 else [text]
        if isinstance(text, list) and len(text) == 2:  # a pair read back from JSON
            parts, texts[i] = list(text), tuple(text)
        for part in parts:
            if not isinstance(part, str):
                raise RecipesError(f"text {i} is a {type(part).__name__}, not a string: pass strings (or pairs "
                                   "of strings) only")
            why = problem(part)
            if why:
                raise RecipesError(f"text {i} {why}")
    if len({isinstance(t, tuple) for t in texts}) > 1:
        raise RecipesError("mix of single texts and text pairs: give one kind")
    return texts


_LINE_BREAKS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # what str.splitlines also breaks at


def escape(text: str) -> str:
    """Keep one prediction per line: tabs and newlines inside a text are written as \\t and \\n, and the other
    characters that split lines (form feed, U+0085, U+2028, ...) as \\uXXXX."""
    text = text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
    return "".join(f"\\u{ord(c):04x}" if c in _LINE_BREAKS else c for c in text)
