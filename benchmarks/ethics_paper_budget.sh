#!/usr/bin/env bash
# ETHICS at the paper's budget (4 epochs), chosen on grouped validation: MiniLM on justice, deontology, virtue
# and utilitarianism at lr 3e-5 and 5e-5, batch 16, weight decay 0.01, seed 42. Every epoch is scored on
# validation (and its test figure recorded); benchmarks/ethics_table.py keeps the epoch and rate validation
# picks. A run whose JSON exists is skipped, and a run that was cut off goes on from its last finished epoch
# (--resume), so an interrupted series goes on where it stopped.
#
#   ETHICS_DATA=/path/to/ethics bash benchmarks/ethics_paper_budget.sh [RESULTS_DIR] [WORK_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
: "${ETHICS_DATA:?set ETHICS_DATA to a folder laid out like the ETHICS archive}"
results="${1:-docs/ethics}"
work="${2:-runs/ethics-v3}"
python="${PYTHON:-.venv/bin/python}"
mkdir -p "$results" "$work"
for task in ${TASKS:-deontology virtue justice utilitarianism}; do
  for lr in ${RATES:-3e-5 5e-5}; do
    json="$results/$task-lr$lr.json"
    if [ -f "$json" ]; then echo "skip $json (done)"; continue; fi
    echo "$(date -u +%FT%TZ) start $task lr $lr"
    out="$work/$task-lr$lr"
    again="--overwrite"; [ -d "$work/.$task-lr$lr.resume" ] && again="--resume"
    "$python" -m ktrain_recipes ethics --task "$task" --data "$ETHICS_DATA" --model "${MODEL:-minilm}" \
      --batch-size 16 --lr "$lr" --epochs "${EPOCHS:-4}" --weight-decay 0.01 --class-weight none --seed 42 \
      --out "$out" "$again" --json "$json.partial"
    mv "$json.partial" "$json"
    echo "$(date -u +%FT%TZ) done $task lr $lr"
  done
done
