"""ktrain's learning-rate finder on a model and the emotion data, short: the rate grows 10% per batch.

    python benchmarks/lr_find.py MODEL OUT_DIR [--texts 3200] [--batch-size 16] [--maxlen auto]

Writes OUT_DIR/lr_find.png (ktrain's plot with its suggestion) and OUT_DIR/lr_find.json (the losses by rate and
ktrain's two estimates), the evidence behind a registry default rate.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import ktrain_recipes as kr
import ktrain_recipes_tools as krt


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model")
    p.add_argument("out")
    p.add_argument("--texts", type=int, default=3200)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--data", default=None, help="emotion folder (default: $EMOTION_DATA, the hub or the slice)")
    args = p.parse_args()
    import ktrain

    from ktrain_recipes.training.batching import bucket_batches
    from ktrain_recipes.training.recipe import transformer_preprocessor

    ds = kr.load_emotion(args.data)
    texts, labels = kr.sample(ds.texts("train"), ds.labels("train"), args.texts, seed=0)
    path = kr.resolve_model(args.model)
    maxlen = kr.resolve_maxlen("auto", kr.load_tokenizer(path), texts)
    t = transformer_preprocessor(path, maxlen, ds.label_names, args.batch_size)
    trn = bucket_batches(t.preprocess_train(texts, ds.label_ids(labels), verbose=0), 0)
    learner = ktrain.get_learner(t.get_classifier(), train_data=trn, batch_size=args.batch_size)
    start = time.perf_counter()
    learner.lr_find(start_lr=1e-7, lr_mult=1.1, max_epochs=1, verbose=1, show_plot=False)
    seconds = time.perf_counter() - start
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    krt.save_figure(learner.lr_plot(suggest=True, return_fig=True), out / "lr_find.png")
    lrs, losses = learner.lr_finder.lrs, learner.lr_finder.losses
    estimates = learner.lr_estimate()
    result = {"model": args.model, "texts": len(texts), "batch_size": args.batch_size, "maxlen": maxlen,
              "seconds": round(seconds, 1), "lr_mult": 1.1,
              "estimates": [None if e is None else float(e) for e in estimates],  # ktrain's lr_estimate()
              "curve": [[float(a), float(b)] for a, b in zip(lrs, losses)]}
    (out / "lr_find.json").write_text(json.dumps(result, indent=1))
    print(json.dumps({k: v for k, v in result.items() if k != "curve"}))


if __name__ == "__main__":
    main()
