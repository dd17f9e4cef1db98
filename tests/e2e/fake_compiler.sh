# A stand-in compiler for the compile farm's e2e suites (source it after lib.sh, with
# $WORK set to a fresh directory): $WORK/c++ and $WORK/cuda/bin/nvcc, reached through
# CXX and CUDA_HOME ("${FAKE[@]}" sets both); `cand` writes candidates that steer it.
# With --plain-build the farm adds no precompiled header, so nothing but these runs.
# A stand-in for c++ and nvcc: what it does depends on a marker in the sources it
# compiles; it writes a placeholder object or library. torch's version queries go to the
# real compiler. Every invocation appends its pid to $KZ_FAKE_PIDS.
cat >"$WORK/fakecc" <<'EOF'
#!/usr/bin/env bash
out= dep= srcs=()
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    -o) out=${args[i+1]} ;;
    -MF) dep=${args[i+1]} ;;
    *.cu | *.cpp) srcs+=("${args[i]}") ;;
  esac
done
if [[ -z $out ]]; then
  if [[ $(basename "$0") == nvcc ]]; then exec /usr/local/cuda/bin/nvcc "$@"; else exec c++ "$@"; fi
fi
echo $$ >>"$KZ_FAKE_PIDS"
# A compile step looks at its source; the link step at the sources in its directory.
marker() { if [[ $out == *.so ]]; then cat "$(dirname "$out")"/*.cu; else cat "${srcs[@]}"; fi 2>/dev/null | grep -q "$1"; }
[[ -n $dep ]] && echo "$out: ${srcs[*]}" >"$dep"
if [[ $out != *.so ]]; then
  if marker KZ_FAKE_HANG; then exec sleep 300; fi
  if marker KZ_FAKE_OOM; then  # allocates (touching every page) up to 3 GiB, then waits
    exec python3 -c 'import time
b = []
for i in range(48):
    b.append(b"x" * (64 << 20)); time.sleep(0.01)
time.sleep(300)'
  fi
  echo "fake object" >"$out"
  exit 0
fi
if marker KZ_FAKE_SLOW; then  # a 1.25 MiB library written over ~1 s
  for i in $(seq 1 20); do head -c 65536 /dev/zero | tr '\0' x >>"$out" || exit 1; sleep 0.04; done
fi
echo "FAKE-LIB-END" >>"$out"
EOF
chmod +x "$WORK/fakecc"
mkdir -p "$WORK/cuda/bin"
ln -s "$WORK/fakecc" "$WORK/cuda/bin/nvcc"
ln -s "$WORK/fakecc" "$WORK/c++"
ln -s /usr/local/cuda/include "$WORK/cuda/include"
ln -s /usr/local/cuda/lib64 "$WORK/cuda/lib64"
PIDS=$WORK/pids
: >"$PIDS"

# cand FILE EXTENSION MARKER: a CUDA ReLU candidate whose kernel source carries MARKER.
cand() {
  cat >"$1" <<EOF
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
// $3
__global__ void relu_kernel(const float* x, float* y, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}
torch::Tensor relu_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    relu_kernel<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}
"""
ext = load_inline(name="$2", cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);",
                  cuda_sources=cuda_source, functions=["relu_cuda"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu_cuda(x)
EOF
}

C=$WORK/cache
FAKE=(env "CUDA_HOME=$WORK/cuda" "CXX=$WORK/c++" "KZ_FAKE_PIDS=$PIDS")
# --sandbox off: the stand-in compiler reports its pids to a file of the test ($KZ_FAKE_PIDS)
# that a sandboxed build could not reach (and would report namespace pids); these suites test
# the farm's logic. The sandboxed build is covered by tests/escape (cuda_include_secret).
V=("$KZ" verify --json --cpu --no-screen --plain-build --sandbox off --ref examples/tasks/relu.py)

# no_survivors NAME: every process the stand-in compiler started is gone (or a zombie).
no_survivors() {
  local left="" pid state
  for _ in $(seq 40); do
    left=""
    while read -r pid; do
      state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)
      [[ -n $state && $state != Z && $state != X ]] && left="$left $pid"
    done <"$PIDS"
    [[ -z $left ]] && break
    sleep 0.1
  done
  if [[ -z $left ]]; then PASSES=$((PASSES + 1)); echo "ok   $1"
  else FAILS=$((FAILS + 1)); echo "FAIL $1: still running:$left"; ps -o pid,pgid,etime,args -p ${left// /,}
    for pid in $left; do kill -9 "$pid" 2>/dev/null; done; fi
  : >"$PIDS"
}

# cache_whole NAME [KEY_MUST_BE_ABSENT]: every published entry is whole (meta.json parses;
# an ok entry's library was written to its end), and no entry holds the given extension.
cache_whole() {
  if python3 - "$C" "${2:-}" <<'PY'
import glob, json, os, sys
root, absent = sys.argv[1], sys.argv[2]
for meta in glob.glob(os.path.join(root, "v1", "*", "*", "meta.json")):
    m = json.load(open(meta))
    if absent and m.get("name") == absent:
        sys.exit(f"an entry for {absent} was published: {meta}")
    if m.get("ok", True):
        lib = os.path.join(os.path.dirname(meta), m["name"] + ".so")
        if not open(lib, "rb").read().endswith(b"FAKE-LIB-END\n"):
            sys.exit(f"torn library {lib}")
PY
  then PASSES=$((PASSES + 1)); echo "ok   $1"; else FAILS=$((FAILS + 1)); echo "FAIL $1"; fi
}

# wait_for_library NAME: until a staging directory holds part of NAME.so.
wait_for_library() {
  for _ in $(seq 150); do compgen -G "$C/tmp/build-*/$1.so" >/dev/null && return 0; sleep 0.1; done
  return 1
}

