"""The rung between a bag of words and fine-tuning: MiniLM left as it is (frozen), its mean-pooled sentence
embeddings fed to a logistic regression, on all of emotion's training texts and on 16 per label.

    python benchmarks/frozen_rung.py EMOTION_FOLDER docs/frozen/frozen.json [--model minilm] [--draws 5]

NLP with Transformers (chapter 2) does the same with DistilBERT's hidden states and reaches 0.61 on validation. The
encoder runs once over every text (the costly part, timed); each logistic regression then takes seconds. The 16-per-
label draws are stratified samples of the training texts with seeds 0..draws-1; the record keeps every draw.
Validation and test are both scored: the model has nothing to choose on validation, so test is read once here too.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def embed(model_path: str, splits: dict[str, list[str]], batch_size: int = 128, maxlen: int = 128) -> dict:
    """Each split's texts as mean-pooled, L2-normalised last hidden states (sentence-transformers' pooling for
    all-MiniLM-L6-v2); the model is loaded once for all of them."""
    import numpy as np
    from transformers import AutoTokenizer, TFAutoModel

    tokenizer = AutoTokenizer.from_pretrained(model_path)
    encoder = TFAutoModel.from_pretrained(model_path)

    def vectors(texts: list[str]):
        order = np.argsort([len(t) for t in texts])  # similar lengths batched together: less padding
        out = np.zeros((len(texts), encoder.config.hidden_size), dtype=np.float32)
        for start in range(0, len(texts), batch_size):
            index = order[start:start + batch_size]
            batch = tokenizer([texts[i] for i in index], padding=True, truncation=True, max_length=maxlen,
                              return_tensors="np")
            hidden = encoder(dict(batch)).last_hidden_state.numpy()
            mask = batch["attention_mask"][..., None].astype(np.float32)
            pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1.0)
            out[index] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        return out

    return {name: vectors(texts) for name, texts in splits.items()}


def fit_and_score(x_train, y_train, splits: dict) -> dict:
    """A logistic regression fitted on (x_train, y_train), scored on each split: accuracy and macro-F1."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import accuracy_score, f1_score

    start = time.perf_counter()
    clf = LogisticRegression(max_iter=2000).fit(x_train, y_train)
    row = {"fit_seconds": round(time.perf_counter() - start, 2), "n_train": len(y_train)}
    for name, (x, y) in splits.items():
        predicted = clf.predict(x)
        row[name] = {"accuracy": round(float(accuracy_score(y, predicted)), 4),
                     "macro_f1": round(float(f1_score(y, predicted, average="macro")), 4), "n": len(y)}
    return row


def per_label_indices(labels: list[str], k: int, seed: int) -> list[int]:
    """``k`` indices of each label, drawn with ``seed``."""
    import numpy as np

    rng = np.random.default_rng(seed)
    labels = np.asarray(labels)
    return sorted(int(i) for label in sorted(set(labels)) for i in rng.choice(np.flatnonzero(labels == label), k,
                                                                              replace=False))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", help="an emotion folder with train, validation and test")
    parser.add_argument("out", type=Path, help="the record to write (JSON)")
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--draws", type=int, default=5, help="16-per-label draws (seeds 0..draws-1)")
    args = parser.parse_args(argv)

    import ktrain_recipes as kr
    from ktrain_recipes_tools.studies.measure import describe_machine
    from ktrain_recipes.versions import cpu_features

    data = kr.load_emotion(args.data)
    if "test" not in data.splits:
        raise SystemExit(f"'{args.data}' has no test split: pass the emotion folder with test.txt")
    model_path = kr.resolve_model(args.model)
    texts = {s: data.texts(s) for s in ("train", "validation", "test")}
    labels = {s: data.labels(s) for s in ("train", "validation", "test")}
    start = time.perf_counter()
    vectors = embed(model_path, texts)
    embed_seconds = time.perf_counter() - start
    splits = {s: (vectors[s], labels[s]) for s in ("validation", "test")}
    whole = fit_and_score(vectors["train"], labels["train"], splits)
    few = []
    for seed in range(args.draws):
        index = per_label_indices(labels["train"], 16, seed)
        few.append({"seed": seed, **fit_and_score(vectors["train"][index], [labels["train"][i] for i in index],
                                                  splits)})
    record = {
        "about": f"{args.model}'s frozen, mean-pooled embeddings + a logistic regression (scikit-learn, max_iter "
                 "2000): benchmarks/frozen_rung.py",
        "model": args.model, "machine": describe_machine(), "cpu_features": cpu_features(),
        "texts_embedded": sum(len(t) for t in texts.values()), "embed_seconds": round(embed_seconds, 1),
        "all_training_texts": whole, "per_label_16": few,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps({"embed_seconds": record["embed_seconds"], "all": whole,
                      "16_per_label_test": [d["test"]["accuracy"] for d in few]}, indent=1))


if __name__ == "__main__":
    main()
