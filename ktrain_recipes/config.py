"""Every setting of a fine-tuning run, declared once (as in Hugging Face's ``run_glue.py``), in its group.

The groups are dataclasses, one per concern: ``ModelSettings`` (which model), ``DataSettings`` (which texts and
labels), ``SampleSettings`` (how many of them, which seed), ``TrainingSettings`` (how it trains) and
``OutputSettings`` (where the predictor goes). Each checks its own fields where they are written. A command takes
the groups it reads: ``evaluate`` the data, ``ethics`` all but the data (the task names it), ``distill`` all but
the model (the teacher names it; the batch, rate and epochs left out default to the registry's MiniLM's).

``RecipeConfig`` is all five: the notebooks' parameter cell, the CLI's ``train`` flags (``commands.flags`` builds
them from the fields and their help text), what ``run_recipe`` reads, the ``settings`` in metrics.json and each
training row of ``bench``. Adding a setting is one field in its group.

The rules a value must follow live here too, first (``check_whole``, ``check_number``, the parsers): the commands'
own flags and the tools' settings share them, so a value is refused by one rule, in one line, wherever it is given.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import os
from dataclasses import dataclass, field

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
        "the column holding the label; two or more comma-separated names: one 0/1 column per label (several "
        "labels per text)"
    )
    label_sep: str | None = setting(
        None,
        "several labels per text in the label column, separated by this (e.g. ';' for \"joy;love\"); a "
        "GoEmotions folder (emotions.txt beside train.tsv) needs no flag"
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
        if self.label_sep is not None and (not isinstance(self.label_sep, str) or not self.label_sep.strip()
                                           or "\n" in self.label_sep):
            raise RecipesError(f"--label-sep must be one or more visible characters, such as ';', got "
                               f"{self.label_sep!r}")
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


# the positions BERT, MiniLM, DistilBERT, ALBERT and ELECTRA have embeddings for (RoBERTa: 514, two of them reserved)
MAX_POSITIONS = 512
PRECISIONS = ("auto", "float32", "bfloat16", "float16")  # --precision's choices (training.precision applies them)
DISTRIBUTE = ("none", "mirrored", "multiworker")  # --distribute's choices (training.distribute builds each)


@dataclass
class TrainingSettings(CheckedWhenMade):
    """How the model trains. ``None`` means "the model's registry default"."""

    maxlen: int | str = setting(
        "auto",
        "'auto' (from the data's token lengths), 'max' (the model's limit, 512 for BERT) or a number of "
        "tokens",
        parse_maxlen,
    )
    batch_size: int | None = setting(
        None,
        "training batch size (default: the model's registry default)",
        int,
    )
    lr: float | None = setting(
        None,
        "peak learning rate of fit_onecycle (default: the registry's)",
        float,
    )
    epochs: int | None = setting(
        None,
        "epochs to train (default: the registry's)",
        int,
    )
    weight_decay: float = setting(
        0.0,
        "decoupled weight decay through ktrain's learner.set_weight_decay (AdamWeightDecay; 0: ktrain's plain"
        " Adam)",
        float,
    )
    average_last: int = setting(
        1,
        "save the average of the weights at the end of the last N epochs (checkpoint averaging; 1: the last "
        "epoch's weights)",
        int,
    )
    class_weight: str = setting(
        "none",
        "'balanced': weigh each class's loss by the inverse of its share of the training texts (for "
        "imbalanced labels); 'none': every text counts the same"
    )
    lr_find: bool = setting(
        False,
        "run ktrain's LR finder first and save lr_find.png"
    )
    bucketing: bool = setting(
        True,
        "length-bucketed batches; --no-bucketing pads every text to maxlen in random batches, as the original"
        " tutorial does"
    )
    precision: str = setting(
        "auto",
        "auto: bfloat16 on a CPU with native bfloat16, float16 on a GPU with tensor cores, else float32 (it says "
        "which and why); or float32, bfloat16, float16. Weights and predictors stay float32"
    )
    distribute: str = setting(
        "none",
        "none; mirrored: every GPU of this machine (or --devices N logical CPU devices); multiworker: the "
        "machines TF_CONFIG lists. --batch-size is per device"
    )
    devices: int | None = setting(
        None,
        "with --distribute mirrored on a machine without GPUs: split the CPU into N logical devices (to try "
        "it out; not faster)",
        int,
    )
    worker_timeout_s: float = setting(
        300.0,
        "with --distribute multiworker: how long to wait for every worker of TF_CONFIG to join before giving up"
    )
    resume: bool = setting(
        False,
        "go on with a run that was cut off (Ctrl-C, kill, a lost Colab runtime), mid-schedule, from the state it "
        "saved after its last finished epoch; give the same settings as that run"
    )
    keep_checkpoint: bool = setting(
        False,
        "keep the run's checkpoint (.OUT.resume beside --out) when it finishes; by default it is removed"
    )

    def check(self) -> None:
        self._check_kinds()
        if self.lr is not None and not (math.isfinite(self.lr) and self.lr > 0):
            raise RecipesError(f"--lr must be a finite number above 0, got {self.lr}")
        for name in ("batch_size", "epochs", "average_last"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise RecipesError(f"--{name.replace('_', '-')} must be at least 1, got {value}")
        if not (math.isfinite(self.weight_decay) and 0 <= self.weight_decay < 1):
            raise RecipesError(f"--weight-decay must be at least 0 and below 1 (0.01 is usual), "
                               f"got {self.weight_decay}")
        if self.epochs and self.average_last > self.epochs:
            raise RecipesError(f"--average-last {self.average_last} needs at least that many --epochs, "
                               f"got {self.epochs}")
        if self.precision not in PRECISIONS:
            raise RecipesError(f"--precision must be one of {', '.join(PRECISIONS)}, got {self.precision!r}")
        self._check_devices()
        if self.class_weight not in ("none", "balanced"):
            raise RecipesError(f"--class-weight must be 'none' or 'balanced', got {self.class_weight!r}")
        if isinstance(self.maxlen, int) and self.maxlen < 8:
            raise RecipesError(f"--maxlen must be at least 8 tokens, got {self.maxlen}")
        if isinstance(self.maxlen, int) and self.maxlen > MAX_POSITIONS:
            raise RecipesError(f"--maxlen must be at most {MAX_POSITIONS} tokens, the longest input BERT-family "
                               f"models read (their position embeddings end there), got {self.maxlen}")

    def _check_kinds(self) -> None:
        """Whole numbers where counts are meant, finite numbers where rates are, switches where switches are."""
        for name in ("batch_size", "epochs", "average_last", "devices"):
            value = getattr(self, name)  # None: the model's default (ranges are checked after)
            check_whole(value, f"--{name.replace('_', '-')}", least=None, optional=value is None)
        check_number(self.lr, "--lr")  # None: the model's default rate
        check_number(self.weight_decay, "--weight-decay", optional=False)
        if not (self.maxlen in ("auto", "max") or (isinstance(self.maxlen, int) and not isinstance(self.maxlen, bool))):
            raise RecipesError(f"--maxlen must be 'auto', 'max' or a whole number of tokens, got {self.maxlen!r}")
        check_switches(self, "lr_find", "bucketing", "resume", "keep_checkpoint")

    def _check_devices(self) -> None:
        """Where it trains: --distribute, --devices and the multi-worker timeout."""
        if self.distribute not in DISTRIBUTE:
            raise RecipesError(f"--distribute must be {', '.join(DISTRIBUTE[:-1])} or {DISTRIBUTE[-1]}, got "
                               f"{self.distribute!r}")
        timeout = self.worker_timeout_s
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 1 <= timeout <= 86_400:
            raise RecipesError(f"--worker-timeout-s must be a number of seconds from 1 to 86400, got {timeout!r}")
        if self.devices is not None and (self.devices < 1 or self.distribute != "mirrored"):
            raise RecipesError("--devices must be at least 1, and only applies with --distribute mirrored")
        cores = os.cpu_count() or 1
        if self.devices is not None and self.devices > cores:
            raise RecipesError(f"--devices splits this machine's {cores} CPU cores into logical devices: give at "
                               f"most {cores}, got {self.devices}")
        if self.distribute != "none" and self.lr_find:
            raise RecipesError("--lr-find runs on one device (ktrain reloads the model outside the strategy): run "
                               "it once without --distribute, then train with the rate it suggests")


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
