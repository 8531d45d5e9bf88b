"""Every setting of a fine-tuning run, declared once (as in Hugging Face's ``run_glue.py``), in its group.

The groups are dataclasses, one per concern: ``ModelSettings`` (which model), ``DataSettings`` (which texts and
labels), ``SampleSettings`` (how many of them, which seed), ``TrainingSettings`` (how it trains) and
``OutputSettings`` (where the predictor goes). Each checks its own fields where they are written. A command takes
the groups it reads: ``evaluate`` the data, ``ethics`` all but the data (the task names it), ``distill`` all but
the model (the teacher names it; the batch, rate and epochs left out default to the registry's MiniLM's).

``RecipeConfig`` is all five: the notebooks' parameter cell, the CLI's ``train`` flags (``commands.flags`` builds
them from the fields and their help text), what ``run_recipe`` reads, the ``settings`` in metrics.json and each
training row of ``bench``. Adding a setting is one field in its group.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

from ktrain_recipes.errors import RecipesError
from ktrain_recipes.flag_values import (CheckedWhenMade, check_fraction, check_limit, check_number, check_pair_column,
                                        check_switches, check_whole, parse_labels, parse_limit, setting)
from ktrain_recipes.training_settings import TrainingSettings


def _name(value, flag: str, optional: bool = False) -> None:
    """A name or a folder: a non-empty string (or a path); None too when ``optional``."""
    if optional and value is None:
        return
    if not isinstance(value, (str, os.PathLike)) or not str(value).strip():
        raise RecipesError(f"{flag} must be a non-empty name{' or left out' if optional else ''}, got {value!r}")


@dataclass
class ModelSettings(CheckedWhenMade):
    """Which model is fine-tuned."""

    model: str = setting(
        "minilm",
        "registry name (see `models`), hub id or local model folder"
    )

    def check(self) -> None:
        _name(self.model, "--model")


@dataclass
class DataSettings(CheckedWhenMade):
    """Which texts and labels: the data and its columns."""

    data: str | None = setting(
        None,
        "a data folder (train/val/test files), one .csv/.tsv/.jsonl/.parquet/.txt file, or a hub dataset id "
        "(default: emotion: $EMOTION_DATA, else the hub)"
    )
    data_config: str | None = setting(
        None,
        "the hub dataset's configuration name"
    )
    text_column: str = setting(
        "text",
        "the column holding the text"
    )
    pair_column: str | None = setting(
        None,
        "a second text column: classify sentence pairs (e.g. excuse)"
    )
    label_column: str = setting(
        "label",
        "the column holding the label"
    )
    labels: list[str] | None = setting(
        None,
        "label names in id order, comma-separated (default: the data's ClassLabel names, else its sorted "
        "distinct labels)",
        parse_labels,
    )
    val_fraction: float = setting(
        0.1,
        "without a validation split, hold out this stratified share of train",
        float,
    )

    def check(self) -> None:
        for name in ("text_column", "label_column"):
            _name(getattr(self, name), f"--{name.replace('_', '-')}")
        for name in ("data", "data_config", "pair_column"):
            _name(getattr(self, name), f"--{name.replace('_', '-')}", optional=True)
        check_pair_column(self.pair_column, self.text_column, self.label_column)
        if self.labels is not None and not isinstance(self.labels, (list, tuple)):  # a set has no order
            raise RecipesError(f"--labels must be a list, in the order of the model's outputs; got a "
                               f"{type(self.labels).__name__} ({self.labels!r}), whose order is not fixed")
        if self.labels is not None and len(self.labels) < 2:
            raise RecipesError(f"--labels must name at least two labels, got {self.labels!r}")
        if self.labels is not None and not all(isinstance(n, str) and n.strip() for n in self.labels):
            raise RecipesError(f"--labels must be names (non-empty strings), got {self.labels!r}")
        if self.labels is not None and len(set(self.labels)) != len(self.labels):
            raise RecipesError(f"--labels must name each label once, got {','.join(self.labels)}")
        check_number(self.val_fraction, "--val-fraction")
        check_fraction(self.val_fraction)


@dataclass
class SampleSettings(CheckedWhenMade):
    """How many of the texts a run reads, and the seed of everything random."""

    limit: int | None = setting(
        None,
        "train on a stratified sample of N texts ('all': every text)",
        parse_limit,
    )
    eval_limit: int | None = setting(
        None,
        "validate on a stratified sample of N texts ('all': every text)",
        parse_limit,
    )
    seed: int = setting(
        42,
        "seeds Python, numpy, TensorFlow and the batch order",
        int,
    )

    def check(self) -> None:
        for name in ("limit", "eval_limit", "seed"):
            value = getattr(self, name)  # None: all the texts
            check_whole(value, f"--{name.replace('_', '-')}", least=None, optional=value is None)
        if self.seed is None or self.seed >= 2**32:
            raise RecipesError(f"--seed must be below 2**32 (numpy's and TensorFlow's limit), got {self.seed}")
        if self.seed < 0:
            raise RecipesError(f"--seed must be at least 0, got {self.seed}")
        check_limit(self.limit)
        check_limit(self.eval_limit, "--eval-limit")


@dataclass
class OutputSettings(CheckedWhenMade):
    """Where the predictor is saved, and how."""

    out: str = setting(
        "runs/minilm",
        "predictor folder to create"
    )
    smoke: bool = setting(
        False,
        "mark the run as a smoke test (a tiny model on a slice): tables and charts say its figures are not "
        "results",
        hidden=True,
    )
    overwrite: bool = setting(
        False,
        "replace --out if it holds a predictor saved by ktrain_recipes"
    )

    def check(self) -> None:
        _name(self.out, "--out")
        check_switches(self, "smoke", "overwrite")


GROUPS = (ModelSettings, DataSettings, SampleSettings, TrainingSettings, OutputSettings)


@dataclass
class RecipeConfig(OutputSettings, TrainingSettings, SampleSettings, DataSettings, ModelSettings):
    """The settings of one fine-tuning run: its five groups in one (``GROUPS``). ``None`` means "the model's
    registry default"."""

    def with_defaults(self) -> RecipeConfig:
        """Return a copy with the registry defaults filled in for batch_size, lr and epochs, checked."""
        from ktrain_recipes.models import get_spec

        spec = get_spec(self.model)
        filled = dataclasses.replace(
            self,
            batch_size=spec.batch_size if self.batch_size is None else self.batch_size,
            lr=spec.lr if self.lr is None else self.lr,
            epochs=spec.epochs if self.epochs is None else self.epochs,
        )
        filled.check()
        return filled

    def check(self) -> None:
        """Raise RecipesError, naming the flag, for a setting of the wrong kind or outside its range."""
        for group in GROUPS:
            group.check(self)

    def group(self, kind: type):
        """This run's settings of one group (``DataSettings``, ...), as that group's own value."""
        return kind(**{f.name: getattr(self, f.name) for f in dataclasses.fields(kind)})

    def settings(self) -> dict:
        """Return the settings as a plain dict (what metrics.json records)."""
        return dataclasses.asdict(self)
