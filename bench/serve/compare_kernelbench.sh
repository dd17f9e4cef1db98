#!/usr/bin/env bash
# Issue 5: samples per GPU-hour of `kz serve` and of KernelBench's pipeline on the same batch,
# side by side in one run on a 2-GPU host: kz serve on GPU 0 with the first half of the
# cores, KernelBench's pipeline (kernelbench_pipeline.py) on GPU 1 with the other half, so
# that each side has one GPU and the same CPU share, and both see the same neighbour.
#   OUT=DIR bench/serve/compare_kernelbench.sh [COUNT=48] [TIMEOUT_S=60]
# TIMEOUT_S limits a run on both sides; builds have their own limits (kz: 900 s; KernelBench's
# pre-compile: KZ_COMPARE_COMPILE_TIMEOUT, 180 s = its default). Env: KZ_PYTHON (python3), KZ_COMPARE_MAX_WALL (540: KernelBench's side starts no new work
# after it; rerun with KZ_COMPARE_RESUME=1 to continue it). Expects build/bin/kz. Prints
# both tables last; logs and JSON under $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
OUT=${OUT:-/tmp/kz-compare}
COUNT=${1:-48}
TIMEOUT=${2:-60}
PY=${KZ_PYTHON:-python3}
N=$(nproc)
H=$((N / 2))
mkdir -p "$OUT" build-kb
RESUME=()
[[ ${KZ_COMPARE_RESUME:-0} == 1 ]] && RESUME=(--resume)
if [[ ${KZ_COMPARE_RESUME:-0} != 1 ]]; then
  taskset -c "0-$((H - 1))" "$PY" bench/serve/gpu_batch.py --kz build/bin/kz --count "$COUNT" --gpus 0 \
    --timeout "$TIMEOUT" --build-threads "$(( H / 4 > 2 ? H / 4 : 2 ))" --out "$OUT/kz" > "$OUT/kz.txt" 2>&1 &
  KZ_PID=$!
fi
taskset -c "$H-$((N - 1))" "$PY" bench/serve/kernelbench_pipeline.py --count "$COUNT" --jobs "$H" --gpu 1 \
  --timeout "$TIMEOUT" --compile-timeout "${KZ_COMPARE_COMPILE_TIMEOUT:-180}" --out build-kb/out --build-dir build-kb/cache \
  --max-wall "${KZ_COMPARE_MAX_WALL:-540}" "${RESUME[@]}" > "$OUT/kb.txt" 2>&1
RC_KB=$?
cp build-kb/out/kernelbench_pipeline.json "$OUT/" 2>/dev/null
RC_KZ=0
if [[ -n ${KZ_PID:-} ]]; then wait "$KZ_PID"; RC_KZ=$?; fi
echo "== kz serve, GPU 0, cores 0-$((H - 1)) (exit $RC_KZ)"
[[ -f $OUT/kz.txt ]] && tail -6 "$OUT/kz.txt"
echo "== KernelBench's pipeline, GPU 1, cores $H-$((N - 1)) (exit $RC_KB; 3: stopped at --max-wall, rerun with KZ_COMPARE_RESUME=1)"
tail -14 "$OUT/kb.txt"
exit $(( RC_KZ != 0 ? RC_KZ : RC_KB ))
