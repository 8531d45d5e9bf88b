"""A pairwise ranker for ETHICS utilitarianism: ktrain has no learner for a ranking loss, so this builds it
with Keras on the same backbone (one scalar score per scenario, trained so the first of each pair scores higher).
"""

from __future__ import annotations

import time

import numpy as np

from ktrain_recipes.config import RecipeConfig


def train_ranker(config: RecipeConfig, pairs: list[tuple[str, str]], val: list[tuple[str, str]] | None = None,
                 test: list[tuple[str, str]] | None = None):
    """Fine-tune a one-output model so that it scores the first scenario of each pair above the second.

    The loss is the paper's: binary cross-entropy on score(first) - score(second), with AdamW when
    ``config.weight_decay`` is set (the paper's 0.01), the rate decaying linearly to 0. With ``val``, the
    share of validation pairs ranked right is printed after every epoch (and, with ``test``, recorded beside the
    test pairs' share, for ``chosen_epoch``). Returns the scoring model and what
    scoring needs (tokenizer, maxlen), the per-epoch validation figures and the training seconds.
    """
    import tensorflow as tf
    from transformers import TFAutoModelForSequenceClassification

    from ktrain_recipes.data.maxlen import load_tokenizer, resolve_maxlen
    from ktrain_recipes.models import resolve_model
    from ktrain_recipes.training.train import set_seed

    set_seed(config.seed)
    path = resolve_model(config.model)
    tokenizer = load_tokenizer(path)
    maxlen = resolve_maxlen(config.maxlen, tokenizer, [a for a, _ in pairs] + [b for _, b in pairs])
    scorer = TFAutoModelForSequenceClassification.from_pretrained(path, num_labels=1)
    first, second = (_encode(tokenizer, [p[i] for p in pairs], maxlen) for i in (0, 1))

    class Ranker(tf.keras.Model):
        def __init__(self, scorer):
            super().__init__()
            self.scorer = scorer  # an attribute, so that Keras trains its weights

        def call(self, inputs, training=False):
            a, b = inputs
            return self.scorer(a, training=training).logits[:, 0] - self.scorer(b, training=training).logits[:, 0]

    steps = -(-len(pairs) // config.batch_size) * config.epochs
    rate = tf.keras.optimizers.schedules.PolynomialDecay(config.lr, steps, 0.0)  # linear decay to 0
    ranker = Ranker(scorer)
    optimizer = (tf.keras.optimizers.AdamW(rate, weight_decay=config.weight_decay) if config.weight_decay
                 else tf.keras.optimizers.Adam(rate))
    ranker.compile(optimizer=optimizer, loss=tf.keras.losses.BinaryCrossentropy(from_logits=True))
    per_epoch: list[dict] = []

    class RankedRight(tf.keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            if val:
                share = float(np.mean(rank_pairs(scorer, tokenizer, maxlen, val)))
                scores = {"epoch": epoch + 1, "val_ranked_right": share}
                if test:
                    scores["test_ranked_right"] = float(np.mean(rank_pairs(scorer, tokenizer, maxlen, test)))
                per_epoch.append(scores)
                print(f"epoch {epoch + 1}: val_ranked_right {share:.4f}")

    start = time.perf_counter()
    ranker.fit((first, second), np.ones(len(pairs), np.float32), batch_size=config.batch_size, epochs=config.epochs,
               shuffle=True, callbacks=[tf.keras.callbacks.TerminateOnNaN(), RankedRight()])
    return scorer, {"tokenizer": tokenizer, "maxlen": maxlen, "per_epoch": per_epoch,
                    "train_seconds": time.perf_counter() - start}


def _encode(tokenizer, texts: list[str], maxlen: int) -> dict:
    enc = tokenizer(list(texts), padding="max_length", truncation=True, max_length=maxlen, return_tensors="np")
    return {k: v.astype(np.int32) for k, v in enc.items()}


def rank_pairs(scorer, tokenizer, maxlen: int, pairs: list[tuple[str, str]], batch_size: int = 64) -> list[bool]:
    """Return, for each pair, whether the model scores its first scenario above its second."""
    scores = []
    for i in (0, 1):
        enc = _encode(tokenizer, [p[i] for p in pairs], maxlen)
        scores.append(scorer.predict(enc, batch_size=batch_size, verbose=0).logits[:, 0])
    return list(scores[0] > scores[1])
