"""Peak memory and time of converting one saved predictor to ONNX, under each protobuf backend.

Runs the conversion `export` runs (``python -m ktrain_recipes.inference.onnx_convert``) in a fresh process per
backend, samples that process's resident memory every 50 ms, and checks that both backends wrote the same model
(the largest difference between their logits on a few texts). ``python`` is what `export` uses; ``upb`` is
protobuf's default C backend, what a conversion inside a notebook's kernel would use.

    python benchmarks/export_memory.py OUT.json PREDICTOR [--backends python upb]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import psutil

TEXTS = ["i feel so happy today", "i am scared of what comes next", "this makes me furious",
         "i was surprised by the news, honestly"]


def convert_with(backend: str, folder: Path, out_dir: Path) -> dict:
    """Convert ``folder`` into ``out_dir`` with protobuf's ``backend``; return its peak RSS and wall time."""
    env = {**os.environ, "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION": backend}
    command = [sys.executable, "-m", "ktrain_recipes.inference.onnx_convert", str(folder), str(out_dir),
               "--no-quantize"]
    start, peak = time.perf_counter(), 0
    child = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    watched = psutil.Process(child.pid)
    while child.poll() is None:
        try:
            peak = max(peak, watched.memory_info().rss)
        except psutil.NoSuchProcess:
            break
        time.sleep(0.05)
    out, err = child.communicate()
    if child.returncode != 0:
        raise SystemExit(f"the {backend} conversion failed ({child.returncode}): {err.strip().splitlines()[-1:]}")
    return {"backend": json.loads(out.strip().splitlines()[-1])["protobuf"], "peak_rss_gb": round(peak / 1e9, 2),
            "seconds": round(time.perf_counter() - start, 1)}


def logits(model: Path, folder: Path) -> np.ndarray:
    import onnxruntime as ort
    from transformers import AutoTokenizer

    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    enc = AutoTokenizer.from_pretrained(folder, local_files_only=True)(TEXTS, padding=True, return_tensors="np",
                                                                       return_token_type_ids=True)
    return session.run(None, {k: enc[k].astype(np.int32) for k in names})[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("predictor")
    parser.add_argument("--backends", nargs="+", default=["python", "upb"], choices=["python", "upb"])
    args = parser.parse_args()
    folder = Path(args.predictor)
    rows, outputs = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for backend in args.backends:
            out_dir = Path(tmp) / backend
            out_dir.mkdir()
            rows.append(convert_with(backend, folder, out_dir))
            outputs[backend] = logits(out_dir / "model.onnx", folder)
            print(rows[-1], flush=True)
    result = {"predictor": folder.name, "model_mb": round((folder / "tf_model.h5").stat().st_size / 1e6, 1),
              "cpu": f"{os.cpu_count()} cores", "memory_gb": round(psutil.virtual_memory().total / 1e9, 1),
              "runs": rows}
    if len(outputs) == 2:
        first, second = outputs.values()
        result["max_logit_difference"] = float(np.abs(first - second).max())
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
