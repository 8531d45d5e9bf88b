"""ktrain's one-cycle learning-rate schedule (``learner.fit_onecycle``) as a Keras 3 ``LearningRateSchedule``."""

from __future__ import annotations

import math

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="ktrain_recipes")
class OneCycle(keras.optimizers.schedules.LearningRateSchedule):
    """The rate ktrain's ``fit_onecycle(max_lr, epochs)`` gives each training step, as a function of the step.

    The first half of the steps climbs linearly from ``max_lr / 10`` to ``max_lr``; the second half comes down
    from ``max_lr`` to ``max_lr / 1000`` (ktrain's "annihilation" phase), step for step as ktrain's
    ``CyclicLR`` callback sets it (tested against it). ktrain also cycles Adam's ``beta_1`` between 0.95 and 0.85;
    a Keras 3 optimizer reads ``beta_1`` once, so this schedule cycles the rate only.

    Args:
      max_lr: the peak rate (ktrain's ``lr`` argument).
      steps_per_epoch: batches per epoch (``ceil(n_train / batch_size)``).
      epochs: the number of epochs the cycle spans.
    """

    def __init__(self, max_lr: float, steps_per_epoch: int, epochs: int):
        if not (math.isfinite(max_lr) and max_lr > 0) or steps_per_epoch < 1 or epochs < 1:
            raise ValueError(f"OneCycle needs max_lr > 0, steps_per_epoch >= 1 and epochs >= 1, got {max_lr}, "
                             f"{steps_per_epoch}, {epochs}")
        self.max_lr, self.steps_per_epoch, self.epochs = float(max_lr), int(steps_per_epoch), int(epochs)
        self.step_size = math.ceil(self.steps_per_epoch * self.epochs / 2)  # ktrain's half cycle, in steps

    def __call__(self, step):
        t = ops.cast(step, "float32")
        s = float(self.step_size)
        cycle = ops.floor(1.0 + t / (2.0 * s))
        x = ops.abs(t / s - 2.0 * cycle + 1.0)
        low = ops.where(ops.mod(t, 2.0 * s) > s, self.max_lr / 1000.0, self.max_lr / 10.0)
        return low + (self.max_lr - low) * ops.maximum(0.0, 1.0 - x)

    def get_config(self) -> dict:
        return {"max_lr": self.max_lr, "steps_per_epoch": self.steps_per_epoch, "epochs": self.epochs}
