"""Length-bucketed batches for ktrain: pad each batch only to its longest text.

Emotion tweets average 22 tokens but maxlen must cover the longest (~70), so fixed-length
batches spend most of their compute on padding. Batches here hold texts of similar length.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf
from ktrain.text.dataset import TransformerDataset

POOL_BATCHES = 50  # sort within pools of 50 batches: similar lengths, yet still well mixed
ROUND_TO = 8  # pad lengths to a multiple of 8, so the graph is traced for only a few shapes


def bucketed_order(lengths: np.ndarray, batch_size: int, seed: int, epoch: int) -> list[np.ndarray]:
    """The example indices of each batch of training epoch ``epoch`` (0-based), in the order they are served: the
    examples shuffled, sorted by length within pools of ``POOL_BATCHES`` batches, cut into batches, and the batches
    shuffled again. The order depends only on the seed and the epoch, so a resumed run sees the uncut run's orders."""
    rng = np.random.default_rng([seed, epoch])
    order, batches = rng.permutation(len(lengths)), []
    for start in range(0, len(lengths), batch_size * POOL_BATCHES):
        pool = order[start:start + batch_size * POOL_BATCHES]
        pool = pool[np.argsort(lengths[pool], kind="stable")]
        batches += [pool[i:i + batch_size] for i in range(0, len(pool), batch_size)]
    return [batches[i] for i in rng.permutation(len(batches))]


def padded_length(lengths: np.ndarray, full: int) -> int:
    """The length a batch of texts of these ``lengths`` is padded to: its longest, rounded up to ``ROUND_TO``,
    at most ``full`` (maxlen)."""
    return min(full, -(-int(lengths.max()) // ROUND_TO) * ROUND_TO)


class BucketedDataset(TransformerDataset):
    """A ktrain ``TransformerDataset`` that serves batches of texts of similar length.

    Training: every epoch the examples are shuffled, sorted by length within pools of
    ``POOL_BATCHES`` batches, cut into batches, and the batches shuffled again, so the model
    sees a new random order every epoch. Each epoch's order depends only on the seed and the
    epoch's number, so a resumed run (``set_epoch``) sees the orders the uninterrupted run would
    have seen. Evaluation: the original order, each batch trimmed.
    """

    def __init__(self, dataset: TransformerDataset, seed: int = 0):
        super().__init__(dataset.x, dataset.y, dataset.batch_size, dataset.use_token_type_ids)
        self.lengths = self.x[:, 1, :].sum(axis=1)  # the attention mask counts real tokens
        self.seed, self.epoch = seed, 0

    def set_epoch(self, epoch: int) -> None:
        """Serve the next training pass as epoch ``epoch`` (0-based): its order, then the following ones."""
        self.epoch = epoch

    def batch_indices(self, train: bool) -> list[np.ndarray]:
        """Return the example indices of each batch, in the order they are served (a training call serves the
        next epoch)."""
        n, size = len(self.x), self.batch_size
        if not train:
            return [np.arange(i, min(i + size, n)) for i in range(0, n, size)]
        self.epoch += 1
        return bucketed_order(self.lengths, size, self.seed, self.epoch - 1)

    @property
    def keys(self) -> list[str]:
        """The model's input names, in the order of ``x``'s second axis."""
        return ["input_ids", "attention_mask"] + (["token_type_ids"] if self.use_token_type_ids else [])

    def padded_batches(self, train: bool):
        """Yield (indices, features) per batch, each feature padded only to the batch's longest text."""
        full = self.x.shape[2]
        for idx in self.batch_indices(train):
            length = padded_length(self.lengths[idx], full)
            yield idx, {k: self.x[idx, i, :length].astype(np.int32) for i, k in enumerate(self.keys)}

    def to_tfdataset(self, train: bool = True):
        """Serve padded-per-batch features as a ``tf.data.Dataset`` (repeated when training)."""
        keys = self.keys

        def batches():
            for idx, features in self.padded_batches(train):
                yield features, self.y[idx]

        y_spec = tf.TensorSpec([None] + list(self.y.shape[1:]), tf.as_dtype(self.y.dtype))
        spec = ({k: tf.TensorSpec([None, None], tf.int32) for k in keys}, y_spec)
        data = tf.data.Dataset.from_generator(batches, output_signature=spec)
        return (data.repeat(-1) if train else data).prefetch(2)


# ktrain picks its transformer learner by the data's class *name* (ktrain.utils.is_huggingface),
# so the subclass answers to its parent's name.
BucketedDataset.__name__ = "TransformerDataset"


def bucket_batches(dataset: TransformerDataset, seed: int = 0) -> BucketedDataset:
    """Return ``dataset`` (from ``preprocess_train``/``preprocess_test``) as length-bucketed batches."""
    return BucketedDataset(dataset, seed)
