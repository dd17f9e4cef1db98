#!/usr/bin/env bash
# The compile farm's limits (issue 3) through the built `kz verify` and the real worker,
# torch load_inline and ninja, with a stand-in compiler (fake_compiler.sh) that hangs or
# exhausts memory on cue: each gets a clear verdict and no compiler outlives its build
# (ninja starts each compiler in a process group of its own). Enormous generated sources
# are refused at extraction. No GPU needed.
KZ=$1
source "$(dirname "$0")/lib.sh"
KZ=$(realpath "$KZ")
WORK=$(mktemp -d)
trap 'chmod -R u+w "$WORK" 2>/dev/null; rm -rf "$WORK"' EXIT
source "$(dirname "$0")/fake_compiler.sh"

# --- A compiler that hangs: the build's wall-time limit, and no compiler left behind
# (ninja starts each compiler in a process group of its own).
cand "$WORK/hang.py" kz_fake_hang KZ_FAKE_HANG
expect_exit 13 "hanging compiler: timeout" -- "${FAKE[@]}" "${V[@]}" --candidate "$WORK/hang.py" --cache-dir "$C" --compile-timeout 3
json_check "hanging compiler: the build's time limit is named" \
  'v["status"] == "timeout" and v["error"]["kind"] == "timeout" and "wall-time limit" in v["error"]["message"]'
no_survivors "hanging compiler: killed with its build"

# --- A compiler that exhausts memory: the build's memory limit counts every compiler.
cand "$WORK/oom.py" kz_fake_oom KZ_FAKE_OOM
expect_exit 11 "memory-hungry compiler: compile_error" -- "${FAKE[@]}" "${V[@]}" --candidate "$WORK/oom.py" --cache-dir "$C" --max-host-mem 1024 --compile-timeout 60
json_check "memory-hungry compiler: the memory limit is named" \
  'v["error"]["kind"] == "memory_limit" and "host-memory limit of 1024 MiB" in v["error"]["message"] and "memory_limit" in v["reason"]'
no_survivors "memory-hungry compiler: killed with its build"

# --- Enormous sources, generated at import (the file itself is small; files over
# --max-source-mib are refused up front, see verify_cli.sh): refused at extraction.
cat >"$WORK/enormous.py" <<'EOF'
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = "// padding\n" * 2_000_000 + "torch::Tensor f(torch::Tensor x) { return x; }\n"
ext = load_inline(name="kz_enormous", cpp_sources="torch::Tensor f(torch::Tensor x);",
                  cuda_sources=cuda_source, functions=["f"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.f(x)
EOF
expect_exit 11 "enormous generated source: compile_error" -- "${FAKE[@]}" "${V[@]}" --candidate "$WORK/enormous.py" --cache-dir "$C"
json_check "enormous generated source: source_too_large names the limit" \
  'v["error"]["kind"] == "source_too_large" and "over the limit of 8 MiB" in v["error"]["message"] and "compile" not in v["stages"]'
# --- A candidate that asks the compiler to run its own program (-wrapper): refused before any
# build, with the flag named; the program never runs.
cat >"$WORK/wrapper.py" <<EOF
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

ext = load_inline(name="kz_wrapper", cpp_sources="torch::Tensor f(torch::Tensor x);",
                  cuda_sources="__global__ void k() {}\ntorch::Tensor f(torch::Tensor x) { return x; }\n",
                  functions=["f"], extra_cuda_cflags=["-Xcompiler=-wrapper,/bin/sh,-c,touch $WORK/pwned"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.f(x)
EOF
expect_exit 11 "a -wrapper flag: compile_error" -- "${V[@]}" --candidate "$WORK/wrapper.py" --cache-dir "$C"
json_check "a -wrapper flag: refused, the flag named" \
  'v["status"] == "compile_error" and "-wrapper" in json.dumps(v) and "not allowed" in json.dumps(v)'
check "a -wrapper flag: its program never ran" test ! -e "$WORK/pwned"
no_survivors "no compiler outlived the suite"
finish
