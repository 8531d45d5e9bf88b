"""What a flag's value may be: the parsers and the range checks that ``RecipeConfig`` and the commands share, so that
a value is refused by one rule, in one line, wherever it is given."""

from __future__ import annotations

import numbers
from dataclasses import field

from ktrain_recipes.errors import RecipesError


class CheckedWhenMade:
    """A settings dataclass checked where it is written (a notebook cell, a flag), not when a run starts: its
    ``check()`` runs as it is made."""

    def __post_init__(self) -> None:
        plain_numbers(self)
        self.check()


def plain_numbers(settings) -> None:
    """numpy's scalars (a notebook's ``np.arange`` grid gives ``np.int64(2)``) turned into Python's, so that the
    checks take them for the numbers they are and a run's record writes them as JSON."""
    import dataclasses

    for f in dataclasses.fields(settings):
        value = getattr(settings, f.name)
        if type(value).__module__ == "numpy" and hasattr(value, "item") and getattr(value, "ndim", 1) == 0:
            object.__setattr__(settings, f.name, value.item())


def setting(default, help: str, parse=None, hidden: bool = False):
    """A settings dataclass's field with its flag's help and parser (``commands.flags`` builds the flag from them);
    ``hidden``: a flag left out of --help (the test harness's, not the learner's)."""
    return field(default=default, metadata={"help": help, "parse": parse, "hidden": hidden})


def parse_maxlen(value: str) -> int | str:
    """Parse a maxlen flag: 'auto', 'max' or a number of tokens."""
    if value in ("auto", "max"):
        return value
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"must be 'auto', 'max' or an integer, got {value!r}") from None


def parse_limit(value: str) -> int | None:
    """Parse a limit flag: a number of texts, or 'all'."""
    if value == "all":
        return None
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"must be a number of texts or 'all', got {value!r}") from None


def parse_labels(value: str) -> list[str]:
    """Parse a comma-separated list of label names."""
    names = [n.strip() for n in value.split(",") if n.strip()]
    if len(names) < 2:
        raise ValueError(f"give at least two comma-separated label names, got {value!r}")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"label names must differ, but {', '.join(repeated)} is given twice")
    return names


def check_whole(value, name: str, least: int | None = 1, most: int | None = None, optional: bool = False) -> None:
    """The one rule for a count: a whole number (not a bool, not a float) from ``least`` to ``most`` (None: no
    bound); with ``optional``, None too. Refused in one line that names the setting and the range."""
    if optional and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) \
            or (least is not None and value < least) \
            or (most is not None and value > most):
        span = (f" from {least} to {most}" if least is not None and most is not None else
                f" of at least {least}" if least is not None else f" of at most {most}" if most is not None else "")
        raise RecipesError(f"{name} must be {'None or ' if optional else ''}a whole number{span}, got {value!r}")


def check_fraction(value: float, flag: str = "--val-fraction") -> None:
    """The one rule for a held-out share: strictly between 0 and 1 (every loader applies it)."""
    if not (isinstance(value, (int, float)) and 0 < value < 1):
        raise RecipesError(f"{flag} must be between 0 and 1, got {value}")


def check_limit(value: int | None, flag: str = "--limit") -> None:
    """The one rule for a number of texts: a whole number of at least 1, or None for all of them."""
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
        raise RecipesError(f"{flag} must be at least 1, got {value}")


def check_pair_column(pair: str | None, text: str, label: str) -> None:
    """Refuse a text column that is the label column (the model would learn the labels as texts), and a pair column
    that is the text or the label column: it would pair each text with itself, or need the label to predict."""
    if text == label:
        raise RecipesError(f"--text-column '{text}' is the label column: name the column that holds the texts, or "
                           "another --label-column")
    if pair is not None and pair in (text, label):
        which = "text" if pair == text else "label"
        raise RecipesError(f"--pair-column '{pair}' is the {which} column: name the column that holds each text's "
                           "second sentence, or leave it out")


def check_switches(settings, *names: str) -> None:
    """The one rule for a switch: True or False, nothing else ("False" from YAML or the environment is true)."""
    for name in names:
        if not isinstance(getattr(settings, name), bool):
            raise RecipesError(f"--{name.replace('_', '-')} must be True or False, got {getattr(settings, name)!r}")


def check_number(value, flag: str, optional: bool = True) -> None:
    """A number (int or float, not a bool); with ``optional``, None too."""
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RecipesError(f"{flag} must be a number, got {value!r}")

