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
# The same CUDA samples again: every library now comes from the cache.
expect_exit 0 "second run is all cache hits" -- \
  "$KZ" verify --json --cpu --manifest examples/manifest.jsonl --cache-dir "$CACHE_DIR" --timeout 120
if grep -q '"cache":"miss"' "$OUT_FILE"; then FAILS=$((FAILS + 1)); echo "FAIL a rebuild happened"; else PASSES=$((PASSES + 1)); echo "ok   no rebuild"; fi
finish
