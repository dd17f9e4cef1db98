#!/usr/bin/env bash
# On the H200 (docs/gpu-results.md, "How to run on the device"): kz beside KernelBench's own
# eval on KernelBench's real sizes. Expects the device set-up (build/bin/kz, carried libs) and
# a KernelBench snapshot at $KB (default .kb, an ignored folder carried with the call).
# Usage: OUT=... bench/kernelbench/run_gpu.sh [run.py arguments...]
set -uo pipefail
cd "$(dirname "$0")/../.."
KB=${KB:-.kb}
OUT=${OUT:-/tmp/kz-kb-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 KZ_PYTHON=${KZ_PYTHON:-python3} KZ_CACHE_DIR=${KZ_CACHE_DIR:-/tmp/kz-cache}
python3 bench/kernelbench/run.py --kernelbench "$KB" --kz build/bin/kz --out "$OUT/kb" "$@" \
  2>&1 | tee "$OUT/kernelbench_run.txt"
