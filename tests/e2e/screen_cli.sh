#!/usr/bin/env bash
# kz screen from outside: exit codes (0 pass, 14 reject, 2 usage), the human lines, the JSON
# shape, and speed (every example screened in well under 5 s). No GPU, no torch import.
KZ=$1
source "$(dirname "$0")/lib.sh"
C=examples/candidates
S=("$KZ" -q screen)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

expect_exit 2 "screen without files" -- "${S[@]}"
expect_exit 2 "missing candidate file" -- "${S[@]}" /nonexistent/cand.py
err_contains "missing file is named" "/nonexistent/cand.py"
expect_exit 2 "unknown backend" -- "${S[@]}" --backend opencl $C/relu_cuda_ok.py
expect_exit 2 "unknown policy" -- "${S[@]}" --policy lenient $C/relu_cuda_ok.py

expect_exit 0 "honest CUDA candidate passes" -- "${S[@]}" --json $C/relu_cuda_ok.py
json_check "verdict, backend detected, rules version" \
  'v["verdict"] == "pass" and v["backend"] == "cuda" and v["policy"] == "strict" and v["rules_version"] == 1 and v["findings"] == []'
json_check "candidate path is absolute" 'v["candidate"]["path"].startswith("/")'
expect_exit 0 "honest Triton candidate passes" -- "${S[@]}" --json $C/relu_triton_ok.py
json_check "Triton backend detected" 'v["backend"] == "triton" and v["verdict"] == "pass"'
expect_exit 0 "human summary of a pass" -- "${S[@]}" $C/softmax_triton_ok.py
grep -q "softmax_triton_ok.py: pass (0 reject, 0 warn; policy strict, backend triton)" "$OUT_FILE" \
  && { PASSES=$((PASSES + 1)); echo "ok   pass summary line"; } \
  || { FAILS=$((FAILS + 1)); echo "FAIL pass summary line"; cat "$OUT_FILE"; }

cat > "$TMP/torch_relu.py" <<'PY'
import torch
import torch.nn as nn
import triton


@triton.jit
def unused(x):
    pass


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
PY
expect_exit 14 "PyTorch compute in forward is rejected under strict" -- "${S[@]}" "$TMP/torch_relu.py"
grep -qF "torch_relu.py:13: reject [py.torch_compute] torch.relu() in ModelNew.forward" "$OUT_FILE" \
  && { PASSES=$((PASSES + 1)); echo "ok   finding line names file, line, rule"; } \
  || { FAILS=$((FAILS + 1)); echo "FAIL finding line"; cat "$OUT_FILE"; }
expect_exit 0 "...and only warned under kernelbench" -- "${S[@]}" --json --policy kernelbench "$TMP/torch_relu.py"
json_check "warn finding with its line" \
  'v["verdict"] == "pass" and [(f["rule"], f["severity"], f["line"]) for f in v["findings"]] == [("py.torch_compute", "warn", 13)]'
expect_exit 14 "forced CUDA backend without load_inline: gen.no_kernel" -- "${S[@]}" --json --backend cuda "$TMP/torch_relu.py"
json_check "gen.no_kernel reported" 'any(f["rule"] == "gen.no_kernel" for f in v["findings"]) and v["backend"] == "cuda"'

printf 'import time\ntime.perf_counter = lambda: 0.0\n' > "$TMP/timer.py"
expect_exit 14 "timer patch is rejected under kernelbench too" -- "${S[@]}" --json --policy kernelbench "$TMP/timer.py"
json_check "timer patch line" 'any(f["rule"] == "py.timer_patch" and f["line"] == 2 for f in v["findings"])'
expect_exit 14 "syntax error" -- "${S[@]}" --json $C/cand_syntax_error.py
json_check "py.syntax with a line" 'v["findings"][0]["rule"] == "py.syntax" and v["findings"][0]["line"] > 0'

expect_exit 14 "several files: any reject rejects" -- "${S[@]}" --json $C/relu_cuda_ok.py "$TMP/torch_relu.py"
[[ $(grep -c '^{' "$OUT_FILE") -eq 2 ]] && { PASSES=$((PASSES + 1)); echo "ok   one JSON line per file"; } \
  || { FAILS=$((FAILS + 1)); echo "FAIL one JSON line per file"; cat "$OUT_FILE"; }

expect_exit 3 "a worker that cannot start is an internal error" -- \
  env KZ_PYTHON=/nonexistent/python "${S[@]}" $C/relu_cuda_ok.py
err_contains "the failure is explained" "relu_cuda_ok.py"

# Speed: every example and timing candidate, one kz call each (about 1-3 s idle).
start_ns=$(date +%s%N)
for f in $C/*.py bench/timing/candidates/*.py; do "${S[@]}" "$f" >/dev/null 2>&1; done
elapsed_ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
# The screen never imports torch: a torch import per example would take well over 20 s.
if (( elapsed_ms < 20000 )); then PASSES=$((PASSES + 1)); echo "ok   all examples screened in ${elapsed_ms} ms"
else FAILS=$((FAILS + 1)); echo "FAIL screening all examples took ${elapsed_ms} ms (limit 20000)"; fi
finish
