import numpy as np

import ktrain_recipes as kr
from conftest import build_learner


def test_bucketed_batches_cover_every_example_once_and_reshuffle(tiny_models, emotion):
    texts, labels = kr.sample(emotion.texts("train"), emotion.labels("train"), 400, seed=2)
    t, learner = build_learner(tiny_models["bert"], emotion, 16, train=(texts, labels), val=(texts[:50], labels[:50]))
    assert isinstance(learner.train_data, kr.bucket_batches.__globals__["BucketedDataset"])
    assert type(learner).__name__ == "TransformerTextClassLearner"  # ktrain still sees its own dataset type
    data = learner.train_data
    epochs = [data.batch_indices(train=True) for _ in range(2)]
    for batches in epochs:
        assert sorted(np.concatenate(batches).tolist()) == list(range(400))
        assert len(batches) == int(np.ceil(400 / 16))
    assert [b.tolist() for b in epochs[0]] != [b.tolist() for b in epochs[1]]  # a new order every epoch
    # batches are much shorter than maxlen: the point of bucketing
    padded = sum(-(-int(data.lengths[b].max()) // 8) * 8 * len(b) for b in epochs[0])
    assert padded < 0.6 * 400 * data.x.shape[2]
    features, y = next(iter(data.to_tfdataset(train=True)))
    assert features["input_ids"].shape[1] % 8 == 0 and features["input_ids"].shape[1] <= data.x.shape[2]
    assert y.shape[0] == features["input_ids"].shape[0]
    val = [b.tolist() for b in learner.val_data.batch_indices(train=False)]
    assert np.concatenate(val).tolist() == list(range(50))  # evaluation keeps the original order




def test_padding_length_does_not_change_what_the_model_learns(tiny_models, emotion):
    """The tutorial pads every text to the model's limit; the attention mask makes that padding inert, so a
    batch padded to 128 or only to its longest text gives the same loss and the same gradients (dropout
    aside, which draws its random masks per position)."""
    import tensorflow as tf

    texts, labels = kr.sample(emotion.texts("train"), emotion.labels("train"), 8, seed=4)
    y = tf.constant([emotion.label_names.index(label) for label in labels])
    from ktrain import text

    t = text.Transformer(tiny_models["bert"], maxlen=128, class_names=emotion.label_names, batch_size=8)
    model, tok = t.get_classifier(), kr.load_tokenizer(tiny_models["bert"])
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def loss_and_grads(padding, mask=True):
        batch = dict(tok(texts, padding=padding, max_length=128, truncation=True, return_tensors="tf"))
        if not mask:
            batch["attention_mask"] = tf.ones_like(batch["attention_mask"])
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(batch, training=False).logits)
        return batch["input_ids"].shape[1], loss, tape.gradient(loss, model.trainable_variables)

    def largest_difference(grads, other):
        return max(float(tf.reduce_max(tf.abs(tf.convert_to_tensor(a) - tf.convert_to_tensor(b))))
                   for a, b in zip(grads, other))

    long_len, long_loss, long_grads = loss_and_grads("max_length")
    short_len, short_loss, short_grads = loss_and_grads("longest")
    assert long_len == 128 and short_len < 100
    np.testing.assert_allclose(long_loss, short_loss, rtol=1e-6)
    assert largest_difference(long_grads, short_grads) < 1e-7  # measured: below 1e-9
    # the check can tell: were the padding attended to (no mask), the gradients would move (measured: 3e-4)
    _, _, unmasked = loss_and_grads("max_length", mask=False)
    assert largest_difference(unmasked, short_grads) > 1e-5
