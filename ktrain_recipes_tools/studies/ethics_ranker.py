"""A pairwise ranker for ETHICS utilitarianism: ktrain has no learner for a ranking loss, so this builds it
with Keras on the same backbone (one scalar score per scenario, trained so the first of each pair scores higher).

Its batches hold pairs of similar length, each padded only to its longest text (as ``training.batching`` does for
ktrain), and a run keeps the same checkpoint as the classification recipes (``training.checkpoint``): the whole
training state and the run's record after every epoch, so a run that was cut off goes on with ``--resume``.
"""

from __future__ import annotations

import dataclasses

import time

import numpy as np
import tensorflow as tf

from ktrain_recipes.config import RecipeConfig
from ktrain_recipes.training.batching import bucketed_order, padded_length
from ktrain_recipes.training.checkpoint import Checkpoint

Pairs = list[tuple[str, str]]


class PairBatches:
    """The training pairs as batches of pairs of similar length, in a new random order every epoch.

    Batches are ordered as ``bucketed_order`` orders ktrain's (by each pair's longer text), so a resumed run
    (``set_epoch``) sees the orders the uninterrupted run would have seen.
    """

    def __init__(self, first: dict, second: dict, batch_size: int, seed: int):
        self.first, self.second, self.batch_size, self.seed, self.epoch = first, second, batch_size, seed, 0
        self.lengths = np.maximum(first["attention_mask"].sum(1), second["attention_mask"].sum(1))

    def __len__(self) -> int:
        """Batches per epoch."""
        return -(-len(self.lengths) // self.batch_size)

    def set_epoch(self, epoch: int) -> None:
        """Serve the next pass as epoch ``epoch`` (0-based), then the following ones."""
        self.epoch = epoch

    def batch_indices(self) -> list[np.ndarray]:
        """The pair indices of each batch of the next epoch, in the order they are served."""
        self.epoch += 1
        return bucketed_order(self.lengths, self.batch_size, self.seed, self.epoch - 1)

    def to_tfdataset(self):
        """Every epoch's batches, repeated, as ``((first, second), ones)``: the first of each pair ranks higher."""
        keys = list(self.first)

        def batches():
            for idx in self.batch_indices():
                length = padded_length(self.lengths[idx], self.first["input_ids"].shape[1])
                yield ((_cut(self.first, idx, length), _cut(self.second, idx, length)),
                       np.ones(len(idx), np.float32))

        features = {k: tf.TensorSpec([None, None], tf.int32) for k in keys}
        spec = ((features, dict(features)), tf.TensorSpec([None], tf.float32))
        return tf.data.Dataset.from_generator(batches, output_signature=spec).repeat(-1).prefetch(2)


def _cut(encoded: dict, idx: np.ndarray, length: int) -> dict:
    return {k: v[idx, :length] for k, v in encoded.items()}


def ranker_identity(config: RecipeConfig, maxlen: int, pairs: Pairs, val: Pairs | None) -> dict:
    """What a ranker's checkpoint must match for ``--resume``: the model, the texts and everything that changes the
    schedule or the order of the batches."""
    import hashlib
    import json

    def digest(rows) -> str:
        return f"{len(rows or [])} pairs, sha256 {hashlib.sha256(json.dumps(rows or []).encode()).hexdigest()[:16]}"

    return {"model": config.model, "maxlen": maxlen, "data": digest(pairs), "validation": digest(val),
            "epochs": config.epochs, "lr": config.lr, "batch_size": config.batch_size, "seed": config.seed,
            "weight_decay": config.weight_decay, "precision": config.precision}


def train_ranker(config: RecipeConfig, pairs: Pairs, val: Pairs | None = None, test: Pairs | None = None,
                 checkpoint: Checkpoint | None = None):
    """Fine-tune a one-output model so that it scores the first scenario of each pair above the second.

    The loss is the paper's: binary cross-entropy on score(first) - score(second), with AdamW when
    ``config.weight_decay`` is set (the paper's 0.01), the rate decaying linearly to 0. With ``val``, the
    share of validation pairs ranked right is printed after every epoch (and, with ``test``, recorded beside the
    test pairs' share, for ``chosen_epoch``). With ``checkpoint`` (its identity is set here, ``ranker_identity``), the
    state is kept after every epoch and ``config.resume`` goes on from it. Returns the scoring model and what
    scoring needs (tokenizer, maxlen), the per-epoch validation figures and the training seconds (of every leg).
    """
    from transformers import TFAutoModelForSequenceClassification

    from ktrain_recipes.data.maxlen import load_tokenizer, resolve_maxlen
    from ktrain_recipes.models import resolve_model
    from ktrain_recipes.training.checkpoint import restore_or_refuse, resume_callback
    from ktrain_recipes.training.train import set_seed

    from ktrain_recipes.training.precision import choose_precision, float32_head, set_policy

    if config.precision == "auto":  # what it trains in is what its identity and record hold
        config = dataclasses.replace(config, precision=choose_precision("auto")[0])
    set_seed(config.seed)
    path = resolve_model(config.model)
    tokenizer = load_tokenizer(path)
    maxlen = resolve_maxlen(config.maxlen, tokenizer, [a for a, _ in pairs] + [b for _, b in pairs])
    if checkpoint is not None:
        checkpoint.identity = ranker_identity(config, maxlen, pairs, val)
        record = checkpoint.resume() if config.resume else checkpoint.start_fresh()
    else:
        record = Checkpoint.empty_record()
    set_policy(config.precision)  # before the scorer is built (battery v6/v7, W32: --precision was ignored)
    try:
        scorer = TFAutoModelForSequenceClassification.from_pretrained(path, num_labels=1)
    finally:
        set_policy("float32")  # what this process loads later computes in float32
    if config.precision != "float32":
        float32_head(scorer)
    data = PairBatches(*(_encode(tokenizer, [p[i] for p in pairs], maxlen) for i in (0, 1)), config.batch_size,
                       config.seed)
    ranker = _compile(Ranker(scorer), config, len(data) * config.epochs)
    scores = epoch_record(record, checkpoint, lambda rows: rank_pairs(scorer, tokenizer, maxlen, rows), val, test)
    state = [restore_or_refuse(checkpoint.backup, checkpoint.folder.name)] if checkpoint else []
    resume = resume_callback(checkpoint, record, len(data), data, config.epochs)
    # order matters (as in ``fit_with_checkpoint``): the state is restored before Resume reads it, and each epoch's
    # record is written before its state, so a cut between the two leaves the record ahead, which Resume trims
    ranker.fit(data.to_tfdataset(), steps_per_epoch=len(data), epochs=config.epochs,
               callbacks=[scores, *state, resume, tf.keras.callbacks.TerminateOnNaN()])
    return scorer, {"tokenizer": tokenizer, "maxlen": maxlen, "per_epoch": record["per_epoch"],
                    "train_seconds": record["train_seconds"]}


class Ranker(tf.keras.Model):
    """score(first) - score(second), from one scoring model."""

    def __init__(self, scorer):
        super().__init__()
        self.scorer = scorer  # an attribute, so that Keras trains its weights

    def call(self, inputs, training=False):
        a, b = inputs
        return self.scorer(a, training=training).logits[:, 0] - self.scorer(b, training=training).logits[:, 0]


def _compile(ranker, config: RecipeConfig, steps: int):
    rate = tf.keras.optimizers.schedules.PolynomialDecay(config.lr, steps, 0.0)  # linear decay to 0
    optimizer = (tf.keras.optimizers.AdamW(rate, weight_decay=config.weight_decay) if config.weight_decay
                 else tf.keras.optimizers.Adam(rate))
    ranker.compile(optimizer=optimizer, loss=tf.keras.losses.BinaryCrossentropy(from_logits=True))
    return ranker


def epoch_record(record: dict, checkpoint: Checkpoint | None, ranked, val: Pairs | None, test: Pairs | None):
    """The callback that, after every epoch, ranks the validation (and test) pairs with ``ranked(pairs)``, prints
    the validation share, and adds the epoch to ``record`` (written to ``checkpoint``, seconds of every leg)."""

    class EpochRecord(tf.keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            self.leg_base, self.start = record["train_seconds"], time.perf_counter()

        def on_epoch_end(self, epoch, logs=None):
            if val:
                share = float(np.mean(ranked(val)))
                scores = {"epoch": epoch + 1, "val_ranked_right": share}
                if test:
                    scores["test_ranked_right"] = float(np.mean(ranked(test)))
                record["per_epoch"].append(scores)
                print(f"epoch {epoch + 1}: val_ranked_right {share:.4f}")
            record["history"].setdefault("loss", []).append(float((logs or {}).get("loss", float("nan"))))
            record["epochs_completed"] = epoch + 1
            record["train_seconds"] = self.leg_base + time.perf_counter() - self.start
            if checkpoint:
                checkpoint.write(record)

    return EpochRecord()


def _encode(tokenizer, texts: list[str], maxlen: int) -> dict:
    enc = tokenizer(list(texts), padding="max_length", truncation=True, max_length=maxlen, return_tensors="np")
    return {k: v.astype(np.int32) for k, v in enc.items()}


def score_texts(scorer, tokenizer, maxlen: int, texts: list[str], batch_size: int = 64) -> np.ndarray:
    """The scorer's score of each text, in order; batches of texts of similar length, each padded to its longest."""
    encoded = _encode(tokenizer, texts, maxlen)
    lengths = encoded["attention_mask"].sum(1)
    order = np.argsort(lengths, kind="stable")
    scores = np.empty(len(texts), np.float32)
    for start in range(0, len(order), batch_size):
        idx = order[start:start + batch_size]
        batch = _cut(encoded, idx, padded_length(lengths[idx], maxlen))
        scores[idx] = scorer(batch, training=False).logits[:, 0].numpy()
    return scores


def rank_pairs(scorer, tokenizer, maxlen: int, pairs: Pairs, batch_size: int = 64) -> list[bool]:
    """Return, for each pair, whether the model scores its first scenario above its second."""
    first, second = (score_texts(scorer, tokenizer, maxlen, [p[i] for p in pairs], batch_size) for i in (0, 1))
    return list(first > second)
