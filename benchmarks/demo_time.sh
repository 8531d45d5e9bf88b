#!/usr/bin/env bash
# `make demo` timed as a learner runs it (offline: the shipped slice, no $EMOTION_DATA), alone on the CPU. Writes
# OUT.json with the wall-clock seconds of the whole target (training, evaluation, timing, save, the predict call),
# the run's own training seconds and accuracy from its metrics.json, and the CPU it ran on.
#
#   bash benchmarks/demo_time.sh [OUT.json] [DEMO_OUT]      (defaults: docs/precision/demo.json, runs/demo-timed)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-docs/precision/demo.json}"
demo_out="${2:-runs/demo-timed}"
python="${PYTHON:-.venv/bin/python}"
start=$(date +%s.%N)
env -u EMOTION_DATA HF_HUB_OFFLINE=1 make demo DEMO_OUT="$demo_out"
end=$(date +%s.%N)
mkdir -p "$(dirname "$out")"
"$python" - "$demo_out/metrics.json" "$out" "$start" "$end" <<'PY'
import json, platform, sys
from ktrain_recipes.training.precision import cpu_flags
metrics = json.load(open(sys.argv[1]))
model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "")
record = {
    "make_demo_wall_seconds": round(float(sys.argv[4]) - float(sys.argv[3]), 1),
    "train_seconds": round(metrics["train_seconds"], 1),
    "accuracy": metrics["accuracy"], "macro_f1": round(metrics["macro_f1"], 4),
    "optimizer_steps": metrics["optimizer_steps"], "precision": metrics["settings"]["precision"],
    "cpu": model, "cores": len(__import__("os").sched_getaffinity(0)),
    "cpu_flags": sorted(f for f in cpu_flags() if f.startswith(("avx2", "avx512", "amx"))),
    "python": platform.python_version(),
}
open(sys.argv[2], "w").write(json.dumps(record, indent=2) + "\n")
print(json.dumps(record))
PY
