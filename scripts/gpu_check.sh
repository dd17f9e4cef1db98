#!/usr/bin/env bash
# One H200 session's checks, with logs under $OUT (see docs/gpu-results.md):
#   env     GPU, driver and versions
#   native  the native runtime's GPU test
#   examples every shipped example through one `kz verify --manifest` run
#   timing  kz's medians beside triton.testing.do_bench on three tasks (bench/timing)
#   compile load_inline's parallel path against the farm on 32 samples (bench/compile)
#   compile-verify  the farm-built samples through the GPU correctness checks
#   corpus  the adversarial corpus against its expected verdicts (tests/corpus), and the
#           host-time cross-check alone on the unjoined-stream cheat
#   streams  only the corpus entries about streams and graphs
#   integrity  wall time with and without the integrity checks (bench/integrity)
#   serve   a mixed labelled batch through kz serve (bench/serve/gpu_batch.py): one run per
#           GPU list in KZ_BATCH_GPUS (default "0,1 0": the first cold), KZ_BATCH_COUNT samples
# KZ_VERIFY_EXTRA: more `kz verify` options for examples and corpus (e.g. --gpu-concurrency 8);
# KZ_TIMING_ARGS: bench/timing's (e.g. "--kz-arg=--timing-ci --kz-arg=0.02").
# Usage: scripts/gpu_check.sh [env] [native] [examples] [timing]   (default: all)
# Expects build/bin/kz and build/lib/libkz_runtime.so built beforehand (carried).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/kz-gpu-out}; mkdir -p "$OUT"
export KZ_PYTHON=${KZ_PYTHON:-python3} KZ_CACHE_DIR=${KZ_CACHE_DIR:-/tmp/kz-cache}
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
export CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$NVCC")")}
export PATH="$CUDA_HOME/bin:$PATH"
steps=("$@"); [[ ${#steps[@]} -eq 0 ]] && steps=(env native examples timing)
summary=()
for step in "${steps[@]}"; do
  t0=$(date +%s)
  case $step in
    env)
      { date -u; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv
        $KZ_PYTHON -c "import sys, torch, triton; print(sys.version.split()[0], torch.__version__, torch.version.cuda, triton.__version__)"
        $NVCC --version | tail -2; nproc; ldd build/bin/kz; } > "$OUT/env.txt" 2>&1
      rc=$?; cat "$OUT/env.txt" ;;
    native)
      { build/bin/kz_runtime_test_gpu; r1=$?; build/bin/kz_trace_test_gpu; r2=$?; } > "$OUT/native.txt" 2>&1
      rc=$(( r1 || r2 )); grep -E "PASSED|FAILED|SKIPPED" "$OUT/native.txt" | tail -8 ;;
    examples)
      build/bin/kz verify --json --manifest examples/manifest.jsonl --timeout 45 -j 8 ${KZ_VERIFY_EXTRA:-} \
        > "$OUT/examples.jsonl" 2> "$OUT/examples.err"; rc=$?
      tail -3 "$OUT/examples.err"
      $KZ_PYTHON - "$OUT/examples.jsonl" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    v = json.loads(l)
    t = v["stages"].get("timing", {})
    sp = f'{t["speedup"]:.2f}x c={t["candidate"]["median_us"]:.1f}us' if t.get("status") == "ok" else ""
    print(f'{v["candidate"]["path"].split("/")[-1]:34s} {v["status"]:14s} {v["seconds"]:6.1f}s {sp} {v["reason"][:70]}')
PY
      ;;
    compile)
      $KZ_PYTHON bench/compile/run.py --kz build/bin/kz --jobs "$(nproc)" --count 32 --out "$OUT" > "$OUT/compile.txt" 2>&1; rc=$?
      tail -9 "$OUT/compile.txt" ;;
    compile-verify)
      # The farm-built libraries of the compile bench (cache hits) through the GPU checks.
      build/bin/kz verify --json --manifest /tmp/kz-compile-bench-work/manifest_farm.jsonl --cache-dir /tmp/kz-compile-bench-work/cache \
        --timing-budget 1 > "$OUT/compile_verify.jsonl" 2> "$OUT/compile_verify.err"; rc=$?
      tail -2 "$OUT/compile_verify.err" ;;
    corpus)
      # The labelled adversarial corpus (tests/corpus): every verdict against expect_gpu.
      build/bin/kz verify --json --manifest tests/corpus/manifest.jsonl --timeout 120 -j "$(nproc)" ${KZ_VERIFY_EXTRA:-} \
        > "$OUT/corpus.jsonl" 2> "$OUT/corpus.err"
      $KZ_PYTHON scripts/corpus_check.py "$OUT/corpus.jsonl" > "$OUT/corpus_check.txt"; rc=$?
      grep -v "^ok" "$OUT/corpus_check.txt" | tail -20
      # The host-time cross-check alone (trace off): the unjoined-stream CUDA cheat.
      KZ_TRACE=0 build/bin/kz verify --json --ref tests/corpus/tasks/matmul.py \
        --candidate tests/corpus/cheats/matmul_side_stream_cuda.py > "$OUT/host_mismatch.json" 2>&1
      $KZ_PYTHON -c "import json,sys; v=json.loads(open(sys.argv[1]).read().splitlines()[-1]); print('host-only check:', v['status'], v['reason'][:160])" "$OUT/host_mismatch.json" ;;
    streams)
      # The corpus entries about streams and graphs only (the side-stream rule's cases).
      grep -E 'side_stream|two_streams|graph' tests/corpus/manifest.jsonl > "$OUT/streams_manifest.jsonl"
      build/bin/kz verify --json --manifest "$OUT/streams_manifest.jsonl" --timeout 120 -j "$(nproc)" \
        > "$OUT/streams.jsonl" 2> "$OUT/streams.err"
      $KZ_PYTHON scripts/corpus_check.py "$OUT/streams.jsonl" --manifest "$OUT/streams_manifest.jsonl" \
        > "$OUT/streams_check.txt"; rc=$?; cat "$OUT/streams_check.txt" ;;
    integrity)
      $KZ_PYTHON bench/integrity/run.py --kz build/bin/kz --repeats "${KZ_INTEGRITY_REPEATS:-3}" --out "$OUT" > "$OUT/integrity.txt" 2>&1; rc=$?
      tail -5 "$OUT/integrity.txt" ;;
    serve)
      gl=(); for g in ${KZ_BATCH_GPUS:-0,1 0}; do gl+=(--gpus "$g"); done
      $KZ_PYTHON bench/serve/gpu_batch.py --kz build/bin/kz --count "${KZ_BATCH_COUNT:-32}" "${gl[@]}" \
        --timeout "${KZ_BATCH_TIMEOUT:-25}" --max-wait "${KZ_BATCH_MAX_WAIT:-400}" --gpu-concurrency "${KZ_BATCH_CONCURRENCY:-1}" --out "$OUT/serve" \
        > "$OUT/serve.txt" 2>&1; rc=$?
      tail -16 "$OUT/serve.txt" ;;
    timing)
      $KZ_PYTHON bench/timing/run.py --kz build/bin/kz --repeats 3 --out "$OUT" ${KZ_TIMING_ARGS:-} > "$OUT/timing.txt" 2>&1; rc=$?
      tail -6 "$OUT/timing.txt" ;;
    *) echo "unknown step $step"; rc=2 ;;
  esac
  summary+=("$step rc=$rc $(( $(date +%s) - t0 ))s")
done
printf '%s\n' "== summary" "${summary[@]}"
