"""How much an exported predictor's answer to a text depends on the texts it shares a model call with: each of the
first 200 validation texts alone, against all 200 in one call, for the fp32 ONNX model, the int8 model `export`
writes (dynamic quantization), and two weight-only int8 variants (onnxruntime's MatMulNBits at 8 bits, blocks of 32
and 128 weights, int8 compute); with validation accuracy and single-text latency on one thread.

    python benchmarks/int8_batch_dependence.py PREDICTOR_FOLDER DATA_FOLDER

Needs onnx-ir (requirements-dev.txt) for the weight-only variants, which are written to a temporary folder.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import ktrain_recipes as kr


def weight_only_int8(source: Path, out: Path, block: int) -> Path:
    """``source`` with every MatMul's weights in int8 blocks of ``block`` (activations stay fp32 between them)."""
    import onnx
    from onnxruntime.quantization.matmul_nbits_quantizer import DefaultWeightOnlyQuantConfig, MatMulNBitsQuantizer

    config = DefaultWeightOnlyQuantConfig(block_size=block, is_symmetric=True, accuracy_level=4, bits=8)
    quantizer = MatMulNBitsQuantizer(onnx.load(str(source)), algo_config=config)
    quantizer.process()
    quantizer.model.save_model_to_file(str(out), use_external_data_format=False)
    return out


def main(folder: str, data: str, n: int = 200) -> None:
    import onnxruntime as ort
    from transformers import AutoTokenizer

    folder = Path(folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    dataset = kr.load_emotion(data)
    texts, labels = dataset.texts("validation"), dataset.labels("validation")

    def encode(batch):
        enc = tokenizer(batch, padding=True, truncation=True, max_length=manifest["maxlen"], return_tensors="np",
                        return_token_type_ids=True)
        return {k: enc[k].astype(np.int32) for k in manifest["onnx_inputs"]}

    with tempfile.TemporaryDirectory() as tmp:
        models = {"fp32": folder / "model.onnx", "int8, dynamic (export's)": folder / "model.int8.onnx"}
        for block in (32, 128):
            models[f"int8, weight-only, blocks of {block}"] = weight_only_int8(
                folder / "model.onnx", Path(tmp) / f"w8-{block}.onnx", block)
        print(f"| model | size MB | max abs diff, alone vs in a call of {n} | mean | labels that differ | "
              "val accuracy | single-text p50 ms (1 thread) |")
        print("|---|---|---|---|---|---|---|")
        for name, path in models.items():
            options = ort.SessionOptions()
            options.intra_op_num_threads = 1
            session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

            def proba(batch, session=session):
                logits = session.run(None, encode(batch))[0]
                e = np.exp(logits - logits.max(axis=1, keepdims=True))
                return e / e.sum(axis=1, keepdims=True)

            alone = np.vstack([proba([t]) for t in texts[:n]])
            together = proba(texts[:n])
            diff = np.abs(alone - together)
            every = np.vstack([proba(texts[i:i + 64]) for i in range(0, len(texts), 64)])
            accuracy = np.mean([manifest["label_names"][i] == y for i, y in zip(every.argmax(axis=1), labels)])
            latency = []
            for text in texts[:200]:
                start = time.perf_counter()
                proba([text])
                latency.append((time.perf_counter() - start) * 1000)
            print(f"| {name} | {path.stat().st_size / 1e6:.1f} | {diff.max():.2e} | {diff.mean():.2e} | "
                  f"{int((alone.argmax(1) != together.argmax(1)).sum())} of {n} | {accuracy:.4f} | "
                  f"{np.median(latency):.2f} |")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
