"""How a fine-tuning run trains: ``TrainingSettings``, one of ``RecipeConfig``'s groups (``config``), checked where
it is written."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from ktrain_recipes.errors import RecipesError
from ktrain_recipes.flag_values import (CheckedWhenMade, check_number, check_switches, check_whole, parse_maxlen,
                                        setting)

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
