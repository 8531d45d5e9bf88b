#!/usr/bin/env bash
# The quickstart's run (MiniLM, all of emotion, 3 epochs, lr 1e-4, the default seed) killed with SIGKILL during its
# second epoch, then started again with --resume: what a learner whose runtime disconnects does. The resumed run's
# metrics.json is kept as RESULTS_DIR/quickstart-resumed.json, beside the moment it was cut; compare it with the
# quickstart's uncut run (docs/results.md): the same optimizer steps and a validation accuracy within 0.5 points.
#
#   EMOTION_DATA=/path/to/emotion bash benchmarks/resume_demo.sh [RESULTS_DIR] [WORK_DIR]
#
# CUT_AFTER (default 90): seconds into epoch 2 at which the run is killed.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${EMOTION_DATA:?set EMOTION_DATA to the emotion folder (train.txt, val.txt)}"
results="${1:-docs/resume}"
work="${2:-runs/resume-demo}"
python="${PYTHON:-.venv/bin/python}"
mkdir -p "$results" "$(dirname "$work")"
[ -f "$results/quickstart-resumed.json" ] && { echo "done already: $results/quickstart-resumed.json"; exit 0; }
train=("$python" -m ktrain_recipes train --model minilm --data "$EMOTION_DATA" --epochs 3 --lr 1e-4 --out "$work")
record="$(dirname "$work")/.$(basename "$work").resume/run.json"
if [ ! -f "$record" ]; then  # the first leg, cut in epoch 2
  "${train[@]}" --overwrite &
  pid=$!
  until [ -f "$record" ] && "$python" -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["epochs_completed"] < 1)' "$record" 2>/dev/null; do
    kill -0 "$pid" 2>/dev/null || { echo "the first leg ended before epoch 2" >&2; exit 1; }
    sleep 5
  done
  sleep "${CUT_AFTER:-90}"
  kill -9 "$pid"
  wait "$pid" 2>/dev/null || true
  echo "$(date -u +%FT%TZ) killed the run ${CUT_AFTER:-90} s into epoch 2" | tee "$results/cut.txt"
fi
"${train[@]}" --resume  # the second leg: from the end of epoch 1, the schedule where it was
"$python" -c 'import json, sys
m = json.load(open(sys.argv[1]))
for path, name in ((sys.argv[3], "EMOTION_DATA"), (sys.argv[4] + "/", "")):
    m = json.loads(json.dumps(m).replace(json.dumps(path)[1:-1], name)) if path not in ("", "/") else m
json.dump(m, open(sys.argv[2], "w"), indent=1)' "$work/metrics.json" "$results/quickstart-resumed.json" "$EMOTION_DATA" "$PWD"
echo "kept $results/quickstart-resumed.json"
