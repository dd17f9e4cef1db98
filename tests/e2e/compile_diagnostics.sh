#!/usr/bin/env bash
# Real nvcc errors through the built `kz verify`, mapped back to the candidate: a #error
# line, an #include of a missing file, and a source built at run time (no literal to point
# at). main.cpp goes to the stand-in compiler (fake_compiler.sh; g++ would spend ~20 s on
# torch's headers for nothing); cuda.cu goes to the real nvcc, which stops at the
# preprocessor, so each build takes seconds. A second run serves the cached failures,
# mapped the same way. (The EDG-format error of a full nvcc front-end pass is checked on
# examples/candidates/relu_cuda_compile_error.py in verify_examples_cpu.sh.) No GPU needed.
KZ=$1
source "$(dirname "$0")/lib.sh"
KZ=$(realpath "$KZ")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
source "$(dirname "$0")/fake_compiler.sh"
if ! command -v /usr/local/cuda/bin/nvcc >/dev/null && ! command -v nvcc >/dev/null; then
  echo "skip: no nvcc"; exit 77
fi

# Line numbers matter below: each literal starts on line 4, so cuda_sources line N is
# line 3 + N of the file (and line 3 + N of cuda.cu, after its three implicit #includes).
cat >"$WORK/diag_error.py" <<'EOF'
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
__global__ void relu_kernel(const float* x, float* y, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}
#error "kz: a deliberate error on line 9 of diag_error.py"
torch::Tensor relu_cuda(torch::Tensor x) { return x; }
"""
ext = load_inline(name="kz_diag_error", cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);",
                  cuda_sources=cuda_source, functions=["relu_cuda"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu_cuda(x)
EOF
cat >"$WORK/diag_missing_include.py" <<'EOF'
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include "kz_no_such_header.h"
torch::Tensor relu_cuda(torch::Tensor x) { return x; }
"""
ext = load_inline(name="kz_diag_missing_include", cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);",
                  cuda_sources=cuda_source, functions=["relu_cuda"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu_cuda(x)
EOF
cat >"$WORK/diag_runtime.py" <<'EOF'
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

lines = ["// generated at import", "#error kz: a generated error", "torch::Tensor relu_cuda(torch::Tensor x) { return x; }"]
ext = load_inline(name="kz_diag_runtime", cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);",
                  cuda_sources="\n".join(lines), functions=["relu_cuda"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu_cuda(x)
EOF
# The same text under another name: one extraction-cache entry and one build for both, yet
# each sample's diagnostics name its own file (kz names the calls after the sample's path).
cp "$WORK/diag_error.py" "$WORK/diag_error_copy.py"
M=$WORK/manifest.jsonl
for c in diag_error diag_missing_include diag_runtime diag_error_copy; do
  echo "{\"task\": \"examples/tasks/relu.py\", \"candidate\": \"$WORK/$c.py\", \"backend\": \"cuda\", \"expect_cpu\": \"compile_error\"}" >>"$M"
done
# Real nvcc (CUDA_HOME unset: the farm's default), stand-in c++ for main.cpp.
REAL_NVCC=(env -u CUDA_HOME "CXX=$WORK/c++" "KZ_FAKE_PIDS=$PIDS")
RUN=("${REAL_NVCC[@]}" "$KZ" verify --json --cpu --no-screen --plain-build -j 2 --manifest "$M" --cache-dir "$WORK/cache")

# check NAME CANDIDATE PYTHON_EXPR: EXPR over d = that candidate's stages.compile.diagnostics
# and v = its verdict, in the manifest run's output.
check() {
  if python3 - "$OUT_FILE" "$2" "$3" <<'PY'
import json, sys
out, cand, expr = sys.argv[1:]
vs = [json.loads(l) for l in open(out) if l.startswith("{")]
v = next(v for v in vs if v["candidate"]["path"].endswith("/" + cand))
d = v["stages"]["compile"].get("diagnostics", "")
if not eval(expr, {"v": v, "d": d}):
    sys.exit("diagnostics:\n" + d)
PY
  then PASSES=$((PASSES + 1)); echo "ok   $1"; else FAILS=$((FAILS + 1)); echo "FAIL $1: $3"; fi
}

for round in "first run (nvcc)" "second run (cached failures)"; do
  expect_exit 0 "$round: every sample is a compile_error" -- "${RUN[@]}"
  check "$round: #error mapped to its line of the candidate" diag_error.py \
    'd.startswith("diag_error.py:9 (cuda_sources line 6): error: #error \"kz: a deliberate error on line 9 of diag_error.py\"\n")'
  check "$round: the original nvcc line is kept" diag_error.py \
    '"compiler output:\n" in d and "/cuda.cu:9:" in d.split("compiler output:\n")[1]'
  check "$round: missing include mapped, named and a compile_error" diag_missing_include.py \
    'd.startswith("diag_missing_include.py:5 (cuda_sources line 2): fatal error: kz_no_such_header.h: No such file or directory\n") and v["error"]["kind"] == "compile_error"'
  check "$round: a source built at run time maps to its own line" diag_runtime.py \
    'd.startswith("cuda_sources line 2: error: #error kz: a generated error\n")'
  check "$round: the verdict's error message holds the mapped lines" diag_error.py \
    'v["error"]["message"].startswith("diag_error.py:9 ")'
  check "$round: a copy under another name is mapped to its own name" diag_error_copy.py \
    'd.startswith("diag_error_copy.py:9 (cuda_sources line 6): error: ")'
done
check "second run: the failures came from the cache" diag_error.py 'v["stages"]["compile"]["libraries"][0]["cache"] == "hit"'
finish
