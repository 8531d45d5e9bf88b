"""What an architecture costs to train and to run, measured at its real size with random weights.

The arithmetic of a forward or backward pass does not depend on the weights' values, so a model built from its
published configuration (``studies.params.CONFIGS``) with random weights trains and predicts exactly as fast as the
pretrained one: the cost of BERT, RoBERTa, DistilBERT and ALBERT can be measured where their weights cannot be
fetched. Accuracy cannot: that needs the pretrained weights.
"""

from __future__ import annotations

import dataclasses
import time

from ktrain_recipes.errors import RecipesError
from ktrain_recipes.config import check_whole
from ktrain_recipes_tools.studies.params import CONFIGS

ARCHITECTURES = ("bert", "roberta", "distilbert", "albert")


@dataclasses.dataclass(frozen=True)
class CostSettings:
    """What ``cost_table`` measures: which architectures, at which input shape, over how many timed steps.

    ``layers`` replaces the published depth (None keeps it; CI's smoke runs use 1); ``smoke`` marks such runs.
    """

    architectures: tuple[str, ...] = ARCHITECTURES + ("minilm", "mpnet")
    maxlen: int = 64            # the recipe's maxlen on emotion (its 99.9th percentile of token lengths, rounded up)
    batch_size: int = 32        # the recipe's batch
    text_tokens: int = 22       # one tweet's length at inference (the mean of emotion's texts)
    steps: int = 3              # timed training steps, after one untimed step that builds the graph
    calls: int = 20             # timed single-text calls, after warm-up
    rounds: int = 2             # passes over the architectures, in turn: each figure is their median, and the
                                # training rate's spread between them says how steady the machine was
    layers: int | None = None
    precision: str = "float32"  # or "bfloat16" / "float16": mixed precision, the head in float32 (training.precision)
    smoke: bool = False

    def __post_init__(self):
        unknown = [a for a in self.architectures if a not in CONFIGS]
        if unknown:
            raise RecipesError(f"no published configuration for {', '.join(unknown)}: choose from "
                               f"{', '.join(CONFIGS)}")
        for name in ("maxlen", "batch_size", "text_tokens", "steps", "calls", "rounds"):
            check_whole(getattr(self, name), f"CostSettings.{name}")
        if self.precision not in ("float32", "bfloat16", "float16"):
            raise RecipesError(f"CostSettings.precision must be float32, bfloat16 or float16, not {self.precision!r}")
        check_whole(self.layers, "CostSettings.layers", optional=True)


def random_classifier(name: str, num_labels: int = 6, layers: int | None = None):
    """A sequence classifier of architecture ``name`` built from its published configuration, random weights."""
    import transformers
    from transformers import TFAutoModelForSequenceClassification

    cls, values = CONFIGS[name]
    values = {**values, "num_labels": num_labels}
    if layers is not None:
        values["n_layers" if name == "distilbert" else "num_hidden_layers"] = layers
    model = TFAutoModelForSequenceClassification.from_config(getattr(transformers, cls)(**values))
    model(model.dummy_inputs, training=False)  # create the weights
    return model


def _inputs(model, batch: int, length: int, seed: int = 0) -> dict:
    """Random token ids (above the special tokens) of shape (batch, length), no padding."""
    import numpy as np

    rng = np.random.default_rng(seed)
    ids = rng.integers(1000, model.config.vocab_size, size=(batch, length), dtype=np.int32)
    return {"input_ids": ids, "attention_mask": np.ones_like(ids)}


def measure_cost(name: str, settings: CostSettings) -> dict:
    """Train ``settings.steps`` batches and time single texts and a batch at inference, for one architecture.

    Returns parameters (total, and per token: outside the embeddings), training examples/s and GFLOP/s (6 x
    parameters per token x tokens), single-text ms (p50) and batch inference texts/s.
    """
    import numpy as np
    import tensorflow as tf
    import tf_keras

    from ktrain_recipes.training.precision import float32_head, set_policy

    set_policy(settings.precision)
    try:
        model = random_classifier(name, layers=settings.layers)
    finally:
        set_policy("float32")
    if settings.precision != "float32":
        float32_head(model)
    total = int(sum(int(w.shape.num_elements()) for w in model.weights))
    embeddings = int(sum(int(w.shape.num_elements()) for w in model.weights
                         if "embeddings" in w.name and "embedding_hidden_mapping" not in w.name))
    model.compile(optimizer=tf_keras.optimizers.Adam(1e-5),
                  loss=tf_keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    batch = _inputs(model, settings.batch_size, settings.maxlen)
    labels = np.random.default_rng(1).integers(0, 6, size=settings.batch_size)
    model.train_on_batch(batch, labels)  # builds the training graph: not timed
    start = time.perf_counter()
    for _ in range(settings.steps):
        model.train_on_batch(batch, labels)
    train_s = time.perf_counter() - start
    examples_per_s = settings.batch_size * settings.steps / train_s

    call = tf.function(lambda x: model(x, training=False))
    one = {k: tf.constant(v) for k, v in _inputs(model, 1, settings.text_tokens).items()}
    for _ in range(3):
        call(one)
    times = []
    for _ in range(settings.calls):
        t0 = time.perf_counter()
        call(one)["logits"].numpy()
        times.append(time.perf_counter() - t0)
    many = {k: tf.constant(v) for k, v in batch.items()}
    call(many)
    batch_times = []
    for _ in range(3):  # one timed call let a single busy moment double a row's rate
        t0 = time.perf_counter()
        call(many)["logits"].numpy()
        batch_times.append(time.perf_counter() - t0)
    batch_s = float(np.median(batch_times))
    per_token = total - embeddings
    return {
        "layers": int(getattr(model.config, "n_layers", getattr(model.config, "num_hidden_layers", 0))),
        "parameters_m": total / 1e6,
        "per_token_m": per_token / 1e6,
        "train_examples_per_s": examples_per_s,
        "train_gflop_per_s": 6 * per_token * examples_per_s * settings.maxlen / 1e9,
        "single_text_ms_p50": float(np.median(times)) * 1000,
        "batch_texts_per_s": settings.batch_size / batch_s,
    }


def matmul_gflops(precision: str = "float32", size: int = 2048, repeats: int = 10) -> float:
    """This machine's matrix-multiply rate in ``precision`` (GFLOP/s): the peak a training step is measured against."""
    import tensorflow as tf

    dtype = {"float32": tf.float32, "bfloat16": tf.bfloat16, "float16": tf.float16}[precision]
    a = tf.random.normal((size, size), dtype=tf.float32)
    a = tf.cast(a, dtype)
    tf.matmul(a, a).numpy()  # warm-up
    start = time.perf_counter()
    for _ in range(repeats):
        tf.matmul(a, a).numpy()
    return 2 * size ** 3 * repeats / (time.perf_counter() - start) / 1e9


def cost_table(settings: CostSettings | None = None):
    """``measure_cost`` for each of ``settings.architectures`` in this process, ``settings.rounds`` times in turn (all
    of them, then all again, so that a busy minute of the machine falls on one pass, not on one model's every
    figure): a DataFrame of the medians, with ``train_spread_pct``, the training rate's range across the rounds as
    a percentage of its median."""
    import gc

    import pandas as pd
    import tf_keras

    settings = settings or CostSettings()
    passes: dict[str, list[dict]] = {name: [] for name in settings.architectures}
    for _ in range(settings.rounds):
        for name in settings.architectures:
            passes[name].append(measure_cost(name, settings))
            tf_keras.backend.clear_session()
            gc.collect()
    rows = {}
    for name, measured in passes.items():
        frame = pd.DataFrame(measured)
        rows[name] = frame.median().to_dict()
        rate = frame["train_examples_per_s"]
        rows[name]["train_spread_pct"] = 100 * (rate.max() - rate.min()) / rate.median()
        rows[name]["layers"] = int(measured[0]["layers"])
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "smoke run: tiny depth, not results" if settings.smoke else "architecture"
    return table.round({"parameters_m": 1, "per_token_m": 1, "train_examples_per_s": 1, "train_gflop_per_s": 1,
                        "single_text_ms_p50": 1, "batch_texts_per_s": 0, "train_spread_pct": 0})
