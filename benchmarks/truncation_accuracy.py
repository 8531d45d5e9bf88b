"""What truncation does to accuracy on the emotion texts a predictor cuts: the texts of a split longer than its
maxlen, classified as the service and `predict` classify them (cut to maxlen), and again whole (the same int8 model
reading up to 512 tokens), beside the accuracy on the texts that are not cut.

    python benchmarks/truncation_accuracy.py PREDICTOR_FOLDER EMOTION_FOLDER OUT.json [--split validation]

The predictor must have its int8 copy (`ktrain-recipes export`). The model's position embeddings reach 512 tokens,
so reading a text whole is the same model on more of the text.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("predictor")
    parser.add_argument("data")
    parser.add_argument("out")
    parser.add_argument("--split", default="validation")
    args = parser.parse_args()

    import ktrain_recipes as kr
    from ktrain_recipes.data.maxlen import token_lengths
    from ktrain_recipes.inference.onnx_inference import load_int8_predictor
    from ktrain_recipes_tools.studies.measure import describe_machine

    model = load_int8_predictor(args.predictor)
    data = kr.load_emotion(args.data)
    texts, labels = data.texts(args.split), data.labels(args.split)
    lengths = token_lengths(model.tokenizer, texts)
    cut = [i for i, n in enumerate(lengths) if n > model.maxlen]
    whole = [i for i, n in enumerate(lengths) if n <= model.maxlen]

    def accuracy(indices: list[int]) -> float | None:
        if not indices:
            return None
        guesses = model.predict([texts[i] for i in indices])
        return round(sum(g == labels[i] for g, i in zip(guesses, indices)) / len(indices), 4)

    as_served = accuracy(cut)
    maxlen = model.maxlen
    model.maxlen = 512  # read the cut texts whole
    read_whole = accuracy(cut)
    model.maxlen = maxlen
    result = {"predictor": Path(args.predictor).name, "split": args.split, "maxlen": maxlen, "texts": len(texts),
              "cut": len(cut), "cut_share": round(len(cut) / len(texts), 4),
              "tokens_of_cut_texts": sorted(lengths[i] for i in cut),
              "accuracy_of_cut_texts_as_served": as_served, "accuracy_of_cut_texts_read_whole": read_whole,
              "accuracy_of_the_other_texts": accuracy(whole), "cpu": describe_machine()}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "tokens_of_cut_texts"}))


if __name__ == "__main__":
    main()
