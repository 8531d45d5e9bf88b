"""Every setting of a fine-tuning run, declared once (as in Hugging Face's ``run_glue.py``).

``RecipeConfig`` is the notebooks' parameter cell, the CLI's ``train`` flags (``cli`` builds them from
the fields and their help text), what ``run_recipe`` reads, the ``settings`` in metrics.json and each
training row of ``bench``. Adding a setting is one field here.
"""

from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass, field

from ktrain_recipes.errors import RecipesError
from ktrain_recipes.flag_values import (check_fraction, check_limit, check_pair_column, check_whole, parse_labels,
                                        parse_limit, parse_maxlen)


# the positions BERT, MiniLM, DistilBERT, ALBERT and ELECTRA have embeddings for (RoBERTa: 514, two of them reserved)
MAX_POSITIONS = 512


PRECISIONS = ("auto", "float32", "bfloat16", "float16")  # --precision's choices (training.precision applies them)
DISTRIBUTE = ("none", "mirrored", "multiworker")  # --distribute's choices (training.distribute builds each)
GROUPS = ("model", "data", "sample", "training", "output")  # each command takes some of these (see cli)


def _setting(group: str, default, help: str, parse=None, hidden: bool = False):
    """A field with its settings group, its flag's help and parser; ``hidden``: a flag left out of --help (the
    test harness's, not the learner's)."""
    return field(default=default, metadata={"group": group, "help": help, "parse": parse, "hidden": hidden})


@dataclass
class RecipeConfig:
    """The settings of one fine-tuning run. ``None`` means "the model's registry default"."""

    model: str = _setting(
        "model", "minilm",
        "registry name (see `models`), hub id or local model folder"
    )
    data: str | None = _setting(
        "data", None,
        "a data folder (train/val/test files), one .csv/.tsv/.jsonl/.parquet/.txt file, or a hub dataset id "
        "(default: emotion: $EMOTION_DATA, else the hub)"
    )
    data_config: str | None = _setting(
        "data", None,
        "the hub dataset's configuration name"
    )
    text_column: str = _setting(
        "data", "text",
        "the column holding the text"
    )
    pair_column: str | None = _setting(
        "data", None,
        "a second text column: classify sentence pairs (e.g. excuse)"
    )
    label_column: str = _setting(
        "data", "label",
        "the column holding the label"
    )
    labels: list[str] | None = _setting(
        "data", None,
        "label names in id order, comma-separated (default: the data's ClassLabel names, else its sorted "
        "distinct labels)",
        parse_labels,
    )
    val_fraction: float = _setting(
        "data", 0.1,
        "without a validation split, hold out this stratified share of train",
        float,
    )
    out: str = _setting(
        "output", "runs/minilm",
        "predictor folder to create"
    )
    maxlen: int | str = _setting(
        "training", "auto",
        "'auto' (from the data's token lengths), 'max' (the model's limit, 512 for BERT) or a number of "
        "tokens",
        parse_maxlen,
    )
    batch_size: int | None = _setting(
        "training", None,
        "training batch size (default: the model's registry default)",
        int,
    )
    lr: float | None = _setting(
        "training", None,
        "peak learning rate of fit_onecycle (default: the registry's)",
        float,
    )
    epochs: int | None = _setting(
        "training", None,
        "epochs to train (default: the registry's)",
        int,
    )
    weight_decay: float = _setting(
        "training", 0.0,
        "decoupled weight decay through ktrain's learner.set_weight_decay (AdamWeightDecay; 0: ktrain's plain"
        " Adam)",
        float,
    )
    average_last: int = _setting(
        "training", 1,
        "save the average of the weights at the end of the last N epochs (checkpoint averaging; 1: the last "
        "epoch's weights)",
        int,
    )
    class_weight: str = _setting(
        "training", "none",
        "'balanced': weigh each class's loss by the inverse of its share of the training texts (for "
        "imbalanced labels); 'none': every text counts the same"
    )
    limit: int | None = _setting(
        "sample", None,
        "train on a stratified sample of N texts ('all': every text)",
        parse_limit,
    )
    eval_limit: int | None = _setting(
        "sample", None,
        "validate on a stratified sample of N texts ('all': every text)",
        parse_limit,
    )
    seed: int = _setting(
        "sample", 42,
        "seeds Python, numpy, TensorFlow and the batch order",
        int,
    )
    lr_find: bool = _setting(
        "training", False,
        "run ktrain's LR finder first and save lr_find.png"
    )
    bucketing: bool = _setting(
        "training", True,
        "length-bucketed batches; --no-bucketing pads every text to maxlen in random batches, as the original"
        " tutorial does"
    )
    precision: str = _setting(
        "training", "auto",
        "auto: bfloat16 on a CPU with native bfloat16, float16 on a GPU with tensor cores, else float32 (it says "
        "which and why); or float32, bfloat16, float16. Weights and predictors stay float32"
    )
    distribute: str = _setting(
        "training", "none",
        "none; mirrored: every GPU of this machine (or --devices N logical CPU devices); multiworker: the "
        "machines TF_CONFIG lists. --batch-size is per device"
    )
    devices: int | None = _setting(
        "training", None,
        "with --distribute mirrored on a machine without GPUs: split the CPU into N logical devices (to try "
        "it out; not faster)",
        int,
    )
    worker_timeout_s: float = _setting(
        "training", 300.0,
        "with --distribute multiworker: how long to wait for every worker of TF_CONFIG to join before giving up"
    )
    smoke: bool = _setting(
        "output", False,
        "mark the run as a smoke test (a tiny model on a slice): tables and charts say its figures are not "
        "results",
        hidden=True,
    )
    overwrite: bool = _setting(
        "output", False,
        "replace --out if it holds a predictor saved by ktrain_recipes"
    )
    resume: bool = _setting(
        "training", False,
        "go on with a run that was cut off (Ctrl-C, kill, a lost Colab runtime), mid-schedule, from the state it "
        "saved after its last finished epoch; give the same settings as that run"
    )
    keep_checkpoint: bool = _setting(
        "training", False,
        "keep the run's checkpoint (.OUT.resume beside --out) when it finishes; by default it is removed"
    )

    def __post_init__(self) -> None:
        self.check()  # a bad setting fails where it is written (a notebook cell, a flag), not when a run starts

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
        self._check_kinds()
        if self.lr is not None and not (math.isfinite(self.lr) and self.lr > 0):
            raise RecipesError(f"--lr must be a finite number above 0, got {self.lr}")
        if self.seed is None or self.seed >= 2**32:
            raise RecipesError(f"--seed must be below 2**32 (numpy's and TensorFlow's limit), got {self.seed}")
        check_limit(self.limit)
        check_limit(self.eval_limit, "--eval-limit")
        for name, least in [("batch_size", 1), ("seed", 0), ("epochs", 1), ("average_last", 1)]:
            value = getattr(self, name)
            if value is not None and value < least:
                raise RecipesError(f"--{name.replace('_', '-')} must be at least {least}, got {value}")
        if not (math.isfinite(self.weight_decay) and 0 <= self.weight_decay < 1):
            raise RecipesError(f"--weight-decay must be at least 0 and below 1 (0.01 is usual), "
                               f"got {self.weight_decay}")
        if self.epochs and self.average_last > self.epochs:
            raise RecipesError(f"--average-last {self.average_last} needs at least that many --epochs, "
                               f"got {self.epochs}")
        if self.labels is not None and len(set(map(str, self.labels))) != len(self.labels):
            raise RecipesError(f"--labels must name each label once, got {','.join(map(str, self.labels))}")
        if self.precision not in PRECISIONS:
            raise RecipesError(f"--precision must be one of {', '.join(PRECISIONS)}, got {self.precision!r}")
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
        if self.class_weight not in ("none", "balanced"):
            raise RecipesError(f"--class-weight must be 'none' or 'balanced', got {self.class_weight!r}")
        check_fraction(self.val_fraction)
        if isinstance(self.maxlen, int) and self.maxlen < 8:
            raise RecipesError(f"--maxlen must be at least 8 tokens, got {self.maxlen}")
        if isinstance(self.maxlen, int) and self.maxlen > MAX_POSITIONS:
            raise RecipesError(f"--maxlen must be at most {MAX_POSITIONS} tokens, the longest input BERT-family "
                               f"models read (their position embeddings end there), got {self.maxlen}")

    def _check_kinds(self) -> None:
        """Whole numbers where counts are meant, finite numbers where rates are, names where names are."""
        for name in ("batch_size", "epochs", "limit", "eval_limit", "seed", "average_last", "devices"):
            value = getattr(self, name)  # None: the model's default, or all the texts (ranges are checked below)
            check_whole(value, f"--{name.replace('_', '-')}", least=None, optional=value is None)
        for name in ("lr", "weight_decay", "val_fraction"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
                raise RecipesError(f"--{name.replace('_', '-')} must be a number, got {value!r}")
        if not (self.maxlen in ("auto", "max") or (isinstance(self.maxlen, int) and not isinstance(self.maxlen, bool))):
            raise RecipesError(f"--maxlen must be 'auto', 'max' or a whole number of tokens, got {self.maxlen!r}")
        for name in ("model", "text_column", "label_column", "out"):  # names and folders: strings, never empty
            value = getattr(self, name)
            if not isinstance(value, (str, os.PathLike)) or not str(value).strip():
                raise RecipesError(f"--{name.replace('_', '-')} must be a non-empty name, got {value!r}")
        for name in ("data", "data_config", "pair_column"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, (str, os.PathLike)) or not str(value).strip()):
                raise RecipesError(f"--{name.replace('_', '-')} must be a non-empty name or left out, got {value!r}")
        check_pair_column(self.pair_column, self.text_column, self.label_column)
        for name in ("lr_find", "bucketing", "smoke", "overwrite", "resume", "keep_checkpoint"):
            if not isinstance(getattr(self, name), bool):  # "False" from YAML or the environment is true
                raise RecipesError(f"--{name.replace('_', '-')} must be True or False, got {getattr(self, name)!r}")
        if self.labels is not None and not isinstance(self.labels, (list, tuple)):  # a set has no order
            raise RecipesError(f"--labels must be a list, in the order of the model's outputs; got a "
                               f"{type(self.labels).__name__} ({self.labels!r}), whose order is not fixed")
        if self.labels is not None and len(self.labels) < 2:
            raise RecipesError(f"--labels must name at least two labels, got {self.labels!r}")
        if self.labels is not None and not all(isinstance(n, str) and n.strip() for n in self.labels):
            raise RecipesError(f"--labels must be names (non-empty strings), got {self.labels!r}")

    def settings(self) -> dict:
        """Return the settings as a plain dict (what metrics.json records)."""
        return dataclasses.asdict(self)
