"""How much an exported predictor's answer to a text depends on the texts it shares a model call with: each of the
first 200 validation texts alone, against all 200 in one call, for the int8 and the fp32 ONNX models.

    python benchmarks/int8_batch_dependence.py PREDICTOR_FOLDER DATA_FOLDER
"""

from __future__ import annotations

import sys

import numpy as np

import ktrain_recipes as kr
from ktrain_recipes.inference.onnx_inference import load_int8_predictor


def main(folder: str, data: str, n: int = 200) -> None:
    texts = kr.load_emotion(data).texts("validation")[:n]
    for int8 in (True, False):
        model = load_int8_predictor(folder, int8=int8)
        alone = np.vstack([model.predict_proba([t]) for t in texts])
        together = model.predict_proba(texts)
        diff = np.abs(alone - together)
        print(f"{'int8' if int8 else 'fp32'}: max |alone - in a call of {n}| {diff.max():.2e}, mean {diff.mean():.2e}, "
              f"labels that differ {int((alone.argmax(1) != together.argmax(1)).sum())} of {n}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
