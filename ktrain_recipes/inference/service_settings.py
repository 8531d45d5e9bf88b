"""The service's settings (the ``serve`` command's flags), checked when they are made."""

import os
from dataclasses import dataclass, field

from ktrain_recipes.errors import RecipesError

BACKENDS = ("auto", "int8", "ktrain")


@dataclass
class ServiceSettings:
    """How the service runs (the ``serve`` command's flags)."""

    predictor: str = field(metadata={"help": "a predictor folder written by train"})
    backend: str = field(default="auto", metadata={"help": "int8: the exported int8 ONNX model (no TensorFlow, no "
                                                   "pickle); ktrain: ktrain's predictor; auto: int8 when the "
                                                   "folder has it"})
    max_batch: int = field(default=64, metadata={"help": "most texts in one request, and in one model call"})
    max_wait_ms: float = field(default=0.0, metadata={"help": "how long a batch waits for more requests when the "
                                                      "model is idle (while it is busy, requests gather anyway)"})
    threads: int = field(default=max(1, (os.cpu_count() or 2) - 1),
                         metadata={"help": "the int8 model's threads (default: all cores but one, which the HTTP "
                                           "side keeps)"})
    max_chars: int = field(default=5000, metadata={"help": "longest text accepted, in characters"})
    max_body_bytes: int = field(default=1_000_000, metadata={"help": "largest request body accepted"})
    reload_interval: float = field(default=1.0, metadata={"help": "seconds between checks for a new save in the "
                                                          "folder (0: never reload)"})

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise RecipesError(f"--backend must be one of {', '.join(BACKENDS)}, got {self.backend!r}")
        for name in ("max_batch", "max_chars", "max_body_bytes", "threads"):
            if getattr(self, name) < 1:
                raise RecipesError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(self, name)}")
        if self.max_wait_ms < 0 or self.reload_interval < 0:
            raise RecipesError("--max-wait-ms and --reload-interval must be 0 or more")
