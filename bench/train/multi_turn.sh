#!/usr/bin/env bash
# Issue 22's comparison on one GPU (docs/training.md, "Comparing two runs"): one SFT checkpoint
# (an SFT-only base run of bench/train/miniature.sh), then one Coder run per variant from that
# checkpoint with the same Coder budget ([coder] budget_s: steps stop once their wall seconds
# reach it), every run evaluated on the same held-out tasks with refinement ([eval] turns), then
# `kz train compare single <variant>` for each: first- and best-turn pass@1 with paired
# intervals, steps run, retry's recovered groups, MirrorPop's filtered share. Resumable.
#
# Usage: bench/train/multi_turn.sh [--cpu]
# Env: RUN (/tmp/kz-mt), VARIANTS ("single multi": also "retry", "mirror", "all"), BUDGET_S
#      (Coder seconds per run, 600), TURNS (2), EVAL_TURNS (2), ROUNDS (2), STEPS (steps per
#      round: the budget stops them first, 8), RETRY_CAPACITY (16), CONCURRENCY (samples verified
#      at once on the GPU, 8: at 1, verification was ~90 % of a step's wall time in session 15);
#      the rest as miniature.sh (PAIRS, POOL, HELD, TPS, SPT, TOKENS, SFT_LR, EPOCHS, CODER_LR, JOBS).
# Only `single` evaluates the shared SFT checkpoint (r0.eval); the other variants skip theirs
# ([eval] baseline = false): the comparison pairs the final evaluations.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
KZ=${KZ:-build/bin/kz} RUN=${RUN:-/tmp/kz-mt} VARIANTS=${VARIANTS:-single multi} BUDGET_S=${BUDGET_S:-600}
TURNS=${TURNS:-2} EVAL_TURNS=${EVAL_TURNS:-2} ROUNDS=${ROUNDS:-2} STEPS=${STEPS:-8} RETRY_CAPACITY=${RETRY_CAPACITY:-16}
CONCURRENCY=${CONCURRENCY:-8}
[[ ${1:-} == --cpu ]] && CONCURRENCY=1
export KZ CONCURRENCY
mkdir -p "$RUN" || exit 2
RUN=$(realpath "$RUN")
t0=$(date +%s)
stamp() { echo "multi_turn: $(( $(date +%s) - t0 )) s: $*"; }

stamp "base: SFT only"
RUN=$RUN/base STEPS=0 ROUNDS=1 NO_EVAL=1 bench/train/miniature.sh "$@" >"$RUN/base.log" 2>&1
CKPT=$RUN/base/run/ckpt/sft
[[ -d $CKPT ]] || { echo "multi_turn: the base run left no $CKPT (see $RUN/base.log)"; tail -5 "$RUN/base.log"; exit 2; }

variant_env() {  # VARIANT -> the miniature's options
  case $1 in
    single) echo "TURNS=1 RETRY=0 MIRROR=false" ;;
    multi) echo "TURNS=$TURNS RETRY=0 MIRROR=false" ;;
    retry) echo "TURNS=1 RETRY=$RETRY_CAPACITY MIRROR=false" ;;
    mirror) echo "TURNS=1 RETRY=0 MIRROR=true" ;;
    all) echo "TURNS=$TURNS RETRY=$RETRY_CAPACITY MIRROR=true" ;;
    *) echo "multi_turn: unknown variant $1" >&2; return 1 ;;
  esac
}
rc=0
for v in single $VARIANTS; do
  [[ -e $RUN/$v.done ]] && continue
  opts=$(variant_env "$v") || exit 2
  stamp "variant $v ($opts), Coder budget $BUDGET_S s"
  baseline=false
  [[ $v == single ]] && baseline=true
  env $opts EVAL_BASELINE=$baseline FROM_CKPT="$CKPT" RUN="$RUN/$v" ROUNDS="$ROUNDS" STEPS="$STEPS" BUDGET_S="$BUDGET_S" EVAL_TURNS="$EVAL_TURNS" \
    bench/train/miniature.sh "$@" >"$RUN/$v.log" 2>&1
  r=$?
  [[ $r == 0 ]] && touch "$RUN/$v.done" || { rc=$r; echo "multi_turn: variant $v exited $r (see $RUN/$v.log; rerun to resume)"; }
done
for v in $VARIANTS; do
  [[ $v == single || ! -e $RUN/$v.done ]] && continue
  stamp "compare: single -> $v"
  "$KZ" -q train compare "$RUN/single/run" "$RUN/$v/run" --out "$RUN/compare-$v"
done
stamp "done"
exit $rc
