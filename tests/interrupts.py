"""Test-only: a training run interrupted as a user's Ctrl-C would, at the start of an epoch."""

from __future__ import annotations


def ctrl_c_at_epoch(epoch_timer, epoch: int = 1):
    """Wrap ``training.train.epoch_timer`` so that its callback raises KeyboardInterrupt as epoch ``epoch``
    (0-based) begins; ``monkeypatch.setattr(train, "epoch_timer", ctrl_c_at_epoch(train.epoch_timer))``."""
    def make(*args, **kwargs):
        callback = epoch_timer(*args, **kwargs)
        begin = callback.on_epoch_begin

        def on_epoch_begin(at, logs=None):
            if at == epoch:
                raise KeyboardInterrupt
            begin(at, logs)

        callback.on_epoch_begin = on_epoch_begin
        return callback

    return make
