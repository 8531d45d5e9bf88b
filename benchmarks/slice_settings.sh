#!/usr/bin/env bash
# What the 2,000-text slice the package ships gives at each setting a learner meets offline (no hub, no
# $EMOTION_DATA): `make demo`'s (batch 8: 600 weight updates) and the notebooks' and README's defaults (batch 32: 150
# weight updates), MiniLM, 3 epochs, lr 1e-4, the default seed. Each run's metrics.json is kept as
# RESULTS_DIR/<setting>.json: the pages quote these files.
#
#   bash benchmarks/slice_settings.sh [RESULTS_DIR] [WORK_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
results="${1:-docs/slice}"
work="${2:-runs/slice-settings}"
python="${PYTHON:-.venv/bin/python}"
mkdir -p "$results" "$work"
# make demo's command (its --limit 1600 is every training text of the slice), then README's first command
for setting in "demo:--batch-size 8 --limit 1600" "batch32:--batch-size 32"; do
  name="${setting%%:*}"; flags="${setting#*:}"
  [ -f "$results/$name.json" ] && { echo "done already: $results/$name.json"; continue; }
  # shellcheck disable=SC2086
  env -u EMOTION_DATA HF_HUB_OFFLINE=1 "$python" -m ktrain_recipes train --model minilm --epochs 3 --lr 1e-4 \
    $flags --out "$work/$name" --overwrite
  cp "$work/$name/metrics.json" "$results/$name.json"
done
