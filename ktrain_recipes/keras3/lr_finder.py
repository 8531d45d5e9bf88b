"""ktrain's learning-rate finder (``learner.lr_find``) as a Keras 3 callback."""

from __future__ import annotations

import math

import keras
import numpy as np


class LRFinder(keras.callbacks.Callback):
    """Raise the rate geometrically each training step and record the loss, until the loss diverges.

    Pass it to ``model.fit(..., callbacks=[finder])`` for one epoch (or more: it stops training itself). It sets
    ``optimizer.learning_rate`` before every step, starting at ``start_lr`` and multiplying by ``lr_mult``, records
    the loss smoothed as ktrain does (an exponential average, beta 0.98), and stops when the smoothed loss passes
    ``stop_factor`` times its lowest value (or is not a number). When training ends, the model's weights and
    rate are put back as they were: the finder only looks. ``kr.plot_lr_find(finder)`` draws the curve.

    Args:
      start_lr: the first step's rate.  lr_mult: the rate's growth per step (1.1: x10 in about 24 steps).
      stop_factor: divergence, as a multiple of the lowest smoothed loss.  max_lr: stop past this rate.
    """

    def __init__(self, start_lr: float = 1e-7, lr_mult: float = 1.1, stop_factor: float = 4.0, max_lr: float = 10.0):
        super().__init__()
        if not (0 < start_lr < max_lr) or lr_mult <= 1 or stop_factor <= 1:
            raise ValueError(f"LRFinder needs 0 < start_lr < max_lr, lr_mult > 1 and stop_factor > 1, got "
                             f"{start_lr}, {max_lr}, {lr_mult}, {stop_factor}")
        self.start_lr, self.lr_mult, self.stop_factor, self.max_lr = start_lr, lr_mult, stop_factor, max_lr
        self.lrs: list[float] = []
        self.losses: list[float] = []

    def on_train_begin(self, logs=None):
        self._weights = self.model.get_weights()
        self._rate = float(keras.ops.convert_to_numpy(self.model.optimizer.learning_rate))
        self._average, self._best, self._lr = 0.0, math.inf, self.start_lr
        self.lrs, self.losses = [], []
        self.model.optimizer.learning_rate.assign(self._lr)

    def on_train_batch_end(self, batch, logs=None):
        loss = float((logs or {}).get("loss", math.nan))
        n = len(self.losses) + 1
        self._average = 0.98 * self._average + 0.02 * loss
        smoothed = self._average / (1 - 0.98 ** n)  # bias-corrected, as ktrain's
        self.lrs.append(self._lr)
        self.losses.append(smoothed)
        self._best = min(self._best, smoothed)
        self._lr *= self.lr_mult
        if not math.isfinite(smoothed) or smoothed > self.stop_factor * self._best or self._lr > self.max_lr:
            self.model.stop_training = True
            return
        self.model.optimizer.learning_rate.assign(self._lr)

    def on_train_end(self, logs=None):
        self.model.set_weights(self._weights)
        self.model.optimizer.learning_rate.assign(self._rate)

    def suggestions(self, skip_begin: int = 10, skip_end: int = 5) -> dict[str, float]:
        """The rates ktrain's ``learner.lr_plot(suggest=True)`` marks on its plot: the **longest valley** (fastai's
        rule: a point a third of the way into the longest stretch of falling loss; red in ktrain's plot) and the
        **steepest fall** (the lowest numerical gradient before the minimum; purple). ktrain also prints, without
        marking it, the rate at the lowest loss divided by 10: ``min_loss_over_10``. Empty before a finder run."""
        end = len(self.losses) - skip_end
        losses = np.array(self.losses[skip_begin:end], dtype=float)
        if len(losses) < 3 or not np.isfinite(losses).all():
            return {}
        lrs = self.lrs[skip_begin:end]
        lowest = int(np.argmin(losses))
        found = {"longest valley": lrs[_valley(losses)], "min_loss_over_10": lrs[lowest] / 10}
        if lowest >= 2:
            found["steepest fall"] = lrs[int(np.gradient(losses[:lowest + 1]).argmin())]
        return found


def _valley(losses: np.ndarray) -> int:
    """fastai's valley rule, as ktrain's ``LRFinder.valley``: the longest decreasing run of losses, and the index a
    third of the way along it plus half of that again."""
    n = len(losses)
    lds, max_start, max_end = [1] * n, 0, 0
    for i in range(1, n):
        for j in range(i):
            if losses[i] < losses[j] and lds[i] < lds[j] + 1:
                lds[i] = lds[j] + 1
            if lds[max_end] < lds[i]:
                max_end = i
                max_start = max_end - lds[max_end]
    sections = (max_end - max_start) / 3
    return max_start + int(sections) + int(sections / 2)
