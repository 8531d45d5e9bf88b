#!/usr/bin/env bash
# Notebooks in smoke mode, each alone in a fresh folder (as on Colab: another working directory, no runs from other
# notebooks), $SMOKE_JOBS at a time (2: a notebook on tiny models leaves a core of a 2-core machine idle much of the
# time). nbval runs every cell, the exercises' solutions included, and compares each output marked for it.
#
#   tests/smoke_notebooks.sh PYTHON NOTEBOOK...
#
# PYTHON is the environment's interpreter; the smoke overrides come from the environment (the Makefile's SMOKE_ENV).
# $SMOKE_LINK_CHECKOUT=1 puts a link to this checkout beside the notebook, named as a Colab clone would be (notebook
# 10 on Colab's runtime reads the package from it). Each notebook's log is printed whole when it ends; the exit
# status is 1 when any notebook failed, after all of them ran.
set -uo pipefail
python=$1
shift
here="$(cd "$(dirname "$0")" && pwd)"
export SMOKE_PYTHON="$python" SMOKE_CHECKOUT="$(dirname "$here")" SMOKE_SANITIZE="$here/nbval_sanitize.cfg"
SMOKE_PRINT_LOCK="$(mktemp)"
export SMOKE_PRINT_LOCK

run_one() {
    local nb=$1 work log start status
    work=$(mktemp -d)
    log="$work/smoke.log"
    cp "$nb" "$work/"
    if [ "${SMOKE_LINK_CHECKOUT:-0}" = 1 ]; then ln -s "$SMOKE_CHECKOUT" "$work/ktrain-recipes"; fi
    start=$SECONDS
    "$SMOKE_PYTHON" -m pytest -q -p no:cacheprovider --nbval-lax --nbval-current-env \
        --nbval-sanitize-with "$SMOKE_SANITIZE" --rootdir="$work" "$work/$(basename "$nb")" > "$log" 2>&1
    status=$?
    {
        flock 9
        echo "== $nb in $work: $([ $status = 0 ] && echo passed || echo FAILED) in $((SECONDS - start)) s"
        cat "$log"
    } 9> "$SMOKE_PRINT_LOCK"
    return $status
}
export -f run_one

start=$SECONDS
printf '%s\n' "$@" | xargs -P "${SMOKE_JOBS:-2}" -I{} bash -c 'run_one "$1"' _ {}
status=$?
rm -f "$SMOKE_PRINT_LOCK"
echo "smoke runs: $# notebooks in $((SECONDS - start)) s, $([ $status = 0 ] && echo all passed || echo 'some FAILED')"
[ $status = 0 ]
