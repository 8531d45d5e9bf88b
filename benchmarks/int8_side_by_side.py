"""Saved predictors' int8 ONNX copies side by side on the emotion validation texts: accuracy and macro-F1 of the
int8 model beside the fp32 ONNX model it was quantized from, its file size, batch throughput and single-text
latency, timed in alternation (``time_side_by_side``) so that a shared CPU's slow moments hit each alike. Each
predictor must be exported (``ktrain-recipes export``).

    python benchmarks/int8_side_by_side.py OUT.json NAME=PREDICTOR [NAME=PREDICTOR ...] [--data DIR]
"""

from __future__ import annotations

import argparse
import json
import os
from functools import partial
from pathlib import Path

import ktrain_recipes as kr
from ktrain_recipes.inference.onnx_inference import load_int8_predictor
from ktrain_recipes.inference.timing import time_side_by_side
from ktrain_recipes.versions import cpu_features, cpu_model
from ktrain_recipes.predictor.manifest import ONNX_INT8


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("predictors", nargs="+", help="NAME=FOLDER")
    parser.add_argument("--data", default=os.environ.get("EMOTION_DATA"))
    parser.add_argument("--texts", type=int, default=500, help="texts per throughput call")
    args = parser.parse_args()
    from sklearn.metrics import accuracy_score, f1_score

    ds = kr.load_emotion(args.data)
    texts, labels = ds.texts("validation"), ds.labels("validation")
    models = {name: load_int8_predictor(folder) for name, folder in (p.split("=", 1) for p in args.predictors)}
    rows = {}
    for name, model in models.items():
        predicted = kr.classify(model, texts)
        folder = Path(dict(p.split("=", 1) for p in args.predictors)[name])
        exact = kr.classify(load_int8_predictor(folder, int8=False), texts)  # what int8 is measured against
        rows[name] = {"accuracy": accuracy_score(labels, predicted),
                      "macro_f1": f1_score(labels, predicted, average="macro"),
                      "fp32_onnx_accuracy": accuracy_score(labels, exact),
                      "fp32_onnx_macro_f1": f1_score(labels, exact, average="macro"),
                      "agreement_with_fp32": sum(a == b for a, b in zip(predicted, exact)) / len(texts),
                      "int8_mb": (folder / ONNX_INT8).stat().st_size / 1e6, "n_validation": len(texts)}
    timed = time_side_by_side({name: partial(kr.classify, model) for name, model in models.items()},
                              texts[:args.texts], rounds=5, n_single=100)
    for name, t in timed.items():
        t.pop("calls")
        rows[name].update(t)
    result = {"cpu": cpu_model(), "cpu_features": cpu_features(), "cores": os.cpu_count(), "rows": rows}
    Path(args.out).write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
