"""Training speed in float32 against bfloat16, side by side in one run on one CPU, with the CPU's matmul peak in each.

For MiniLM (batch 32) and MPNet-base (batch 16), at their real size with random weights (the arithmetic does not
depend on the weights' values), 64 tokens per text: training examples/s and GFLOP/s (6 x parameters per token x
tokens/s) in each precision, against a 2048 x 2048 matrix multiply's rate in the same precision. Writes OUT.json
with the CPU's flags, so every figure names the hardware it came from.

    python benchmarks/precision.py [OUT.json]     (default docs/precision/bench.json)
"""

import json
import sys
import time
from pathlib import Path

import ktrain_recipes  # noqa: F401  (compat shims before TensorFlow)
from ktrain_recipes_tools.studies.cost import CostSettings, matmul_gflops, measure_cost
from ktrain_recipes.training.precision import BF16_FLAGS, choose_precision, cpu_flags

MODELS = {"minilm": 32, "mpnet": 16}
PRECISIONS = ("float32", "bfloat16")


def main(out: Path) -> dict:
    flags = cpu_flags()
    shown = sorted(f for f in flags if f in {"avx2", "avx512f", "avx512_vnni", *BF16_FLAGS})
    result = {"cpu_flags": shown, "auto": choose_precision("auto", gpus=[], flags=flags),
              "matmul_gflops": {p: round(matmul_gflops(p), 1) for p in PRECISIONS}, "models": {}}
    for name, batch in MODELS.items():
        for precision in PRECISIONS:
            settings = CostSettings(architectures=(name,), batch_size=batch, steps=4, precision=precision)
            start = time.perf_counter()
            row = measure_cost(name, settings)
            row["peak_share"] = row["train_gflop_per_s"] / result["matmul_gflops"][precision]
            row["seconds"] = time.perf_counter() - start
            result["models"].setdefault(name, {})[precision] = {k: round(v, 4) for k, v in row.items()}
            print(name, precision, result["models"][name][precision], flush=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/precision/bench.json"))
