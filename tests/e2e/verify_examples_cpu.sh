#!/usr/bin/env bash
# Every shipped example through one `kz verify --manifest` run on a CPU-only host: Triton
# and PyTorch candidates run under the interpreter, CUDA candidates are compiled (real
# nvcc) and reported not_run; each verdict must match the manifest's expect_cpu.
KZ=$1
source "$(dirname "$0")/lib.sh"
expect_exit 0 "all examples get their expected CPU verdicts" -- \
  "$KZ" verify --json --cpu --manifest examples/manifest.jsonl --cache-dir "$CACHE_DIR" --timeout 120
tail -n 3 "$ERR_FILE"
json_check "the last verdict is complete" '"status" in v and "checked" in v'
# nvcc's error (EDG format, "cuda.cu(10): error: ...") is mapped back to the candidate's line.
mapped_error() {
  if python3 - "$OUT_FILE" <<'PY'
import json, sys
vs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
v = next(v for v in vs if v["candidate"]["path"].endswith("/relu_cuda_compile_error.py"))
d = v["stages"]["compile"]["diagnostics"]
want = 'relu_cuda_compile_error.py:16 (cuda_sources line 7): error: a value of type "float *" cannot'
sys.exit(0 if d.startswith(want) and "cuda.cu(10): error" in d else "diagnostics:\n" + d)
PY
  then PASSES=$((PASSES + 1)); echo "ok   $1"; else FAILS=$((FAILS + 1)); echo "FAIL $1"; fi
}
mapped_error "nvcc's error is mapped to line 16 of the candidate"
# The same samples again, two at a time through the GPU gate (docs/throughput.md; on the CPU
# every stage is shared): every verdict still as expected, and every library from the cache.
expect_exit 0 "second run, two at once, is all cache hits" -- \
  "$KZ" verify --json --cpu --manifest examples/manifest.jsonl --cache-dir "$CACHE_DIR" --timeout 120 --gpu-concurrency 2
err_contains "two children held the gate at once" "2 children at a time, up to 2 at once"
json_check "the run's gate waits are in its profile" '(v.get("profile") or {}).get("gate", {}).get("shared_wait_s", -1) >= 0 or v["status"] in ("not_run", "compile_error", "invalid_task")'
mapped_error "a cached compile error is mapped the same way"
if grep -q '"cache":"miss"' "$OUT_FILE"; then FAILS=$((FAILS + 1)); echo "FAIL a rebuild happened"; else PASSES=$((PASSES + 1)); echo "ok   no rebuild"; fi
finish
