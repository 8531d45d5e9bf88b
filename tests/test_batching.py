import numpy as np

import ktrain_recipes as kr


def test_bucketed_batches_cover_every_example_once_and_reshuffle(tiny_models, emotion):
    texts, labels = kr.sample(emotion.texts("train"), emotion.labels("train"), 400, seed=2)
    tok = kr.load_tokenizer(tiny_models["bert"])
    t = kr.build_transformer(tiny_models["bert"], kr.resolve_maxlen("auto", tok, texts), emotion.label_names, 16)
    learner = kr.get_learner(t, (texts, labels), (texts[:50], labels[:50]), 16, bucketing=True, seed=0)
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
