#!/usr/bin/env bash
# Every shipped example on a GPU, in one run: correct kernels pass and are timed; the
# illegal-address, hanging and segfaulting kernels get their own verdicts and the samples
# after them still verify. Exit 77 (skipped) where there is no GPU.
KZ=$1
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "SKIPPED: needs an NVIDIA GPU (nvidia-smi found none)"; exit 77
fi
source "$(dirname "$0")/lib.sh"
expect_exit 0 "all examples get their expected GPU verdicts" -- \
  "$KZ" verify --json --manifest examples/manifest.jsonl --cache-dir "$CACHE_DIR" --timeout 60
tail -n 3 "$ERR_FILE"
cp "$OUT_FILE" "${KZ_GPU_VERDICTS:-/dev/null}" 2>/dev/null || true
finish
