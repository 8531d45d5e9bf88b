"""Which texts have nothing a model can read: the one rule the data readers (training) and every classifier
(``inference.text_rules``: the CLI, the service, Ray, ``kr.classify``) apply."""

from __future__ import annotations

import unicodedata

# Letters and symbols that print as nothing: the Hangul fillers, the blank Braille pattern and the Khmer inherent
# vowels. The tokenizer drops most of them, so a text made only of these (and of marks) has nothing to read.
_FILLERS = frozenset("\u115f\u1160\u3164\uffa0\u2800\u17b4\u17b5")
# Characters that stand for no text: U+FFFD, what a decoder puts where bytes were not text, and the private-use
# areas (Co), which mean nothing outside one program. The tokenizer maps them to nothing or to [UNK].
_NO_TEXT = frozenset("\ufffd")


def nothing_to_read(ch: str) -> bool:
    """Whether ``ch`` adds nothing a model can read: whitespace, control and format characters (zero-width ones, the
    soft hyphen), combining marks alone, fillers, U+FFFD and private-use characters."""
    # Mn/Me: combining marks and variation selectors (U+FE0F), which modify a character but are none on their own
    return ch.isspace() or ch in _FILLERS or ch in _NO_TEXT or \
        unicodedata.category(ch) in ("Cc", "Cf", "Zs", "Zl", "Zp", "Mn", "Me", "Co")


def is_blank(text: str) -> bool:
    """True for text with nothing to read (``nothing_to_read`` for every character; the empty text too)."""
    return all(nothing_to_read(ch) for ch in text)
