#!/usr/bin/env bash
# Issue 18's throughput benchmark (docs/throughput.md): one RL-like batch (T teacher tasks x S
# samples, about half correct) through `kz verify --manifest` at each concurrency K in KS,
# one after the other on the same GPU, every check on; then the table of summarize.py:
# samples per GPU-hour, verdicts as expected and equal to K=1's, the timed medians against
# K=1's (timing integrity under concurrency), the longest wait for the exclusive hold.
#
# Usage: bench/throughput/run_gpu.sh [--cpu]   (from the repository root, after the build)
# Env: KZ (build/bin/kz), OUT (a temp dir), T (16), S (16), KS ("1 4 8"), TIMEOUT (120)
# Without a GPU (or with --cpu) it runs on the CPU (Triton under the interpreter), to test it.
set -u
cd "$(dirname "$0")/../.." || exit 2
KZ=${KZ:-build/bin/kz} OUT=${OUT:-$(mktemp -d)} T=${T:-16} S=${S:-16} KS=${KS:-"1 4 8"} TIMEOUT=${TIMEOUT:-120}
DEV=() MODE=cuda
if [[ ${1:-} == --cpu ]] || ! nvidia-smi -L >/dev/null 2>&1; then DEV=(--cpu) MODE=cpu; fi
mkdir -p "$OUT" || exit 2
echo "throughput: mode $MODE, $T tasks x $S samples, K in $KS, out $OUT"
# Resumable: an OUT that already holds the batch (an earlier call) keeps it, so the K runs of
# one comparison can be split over several calls; the summary covers every K run in OUT.
if [[ ! -s $OUT/batch/manifest.jsonl ]]; then
  "$KZ" -q train teacher --out "$OUT/teach" --pairs "$T" --seed 5 >/dev/null || exit 2
  python3 bench/throughput/make_batch.py "$OUT/teach/pairs.jsonl" "$OUT/batch" --samples "$S" || exit 2
fi
# Warm the caches (bytecode, Triton) once, outside the measured runs: all K see them warm.
head -n 2 "$OUT/batch/manifest.jsonl" >"$OUT/batch/warm.jsonl"
"$KZ" -q verify --json "${DEV[@]}" --manifest "$OUT/batch/warm.jsonl" --timeout "$TIMEOUT" >/dev/null 2>&1
for k in $KS; do
  t0=$(date +%s.%N)
  "$KZ" verify --json "${DEV[@]}" --manifest "$OUT/batch/manifest.jsonl" --timeout "$TIMEOUT" \
    --gpu-concurrency "$k" >"$OUT/k$k.jsonl" 2>"$OUT/k$k.err"
  echo "K=$k: kz exited $?"
  python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$t0" "$(date +%s.%N)" >"$OUT/k$k.wall"
  tail -n 2 "$OUT/k$k.err"
done
DONE=$(cd "$OUT" && ls k*.wall 2>/dev/null | sed 's/^k//; s/\.wall$//' | sort -n | tr '\n' ' ')
python3 bench/throughput/summarize.py "$OUT/batch/manifest.jsonl" "$OUT" $DONE | tee "$OUT/summary.md"
