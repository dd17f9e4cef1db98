#!/usr/bin/env bash
# Sets up KernelZero on a fresh Debian machine: system packages, the Python venv with the
# worker's pinned dependencies, and the C++ build. Idempotent: a second run is quick.
# Usage: scripts/setup.sh [--no-apt]
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(cmake ninja-build g++ pkg-config python3-venv
  nlohmann-json3-dev libcli11-dev libxxhash-dev libgtest-dev
  libcpp-httplib-dev libsqlite3-dev curl
  librsvg2-bin  # rsvg-convert: kz bench's PNG plots from its own SVGs (docs/bench.md)
  libhiredis-dev redis-server  # kz worker's Redis queue (hiredis, static); redis-server for its tests (docs/queue.md)
  libcurl4-openssl-dev)  # kz generate's OpenAI-compatible client: HTTPS to hosted models, HTTP to local servers (kz-generate only; docs/generate.md)

need_apt=()
if [[ "${1:-}" != "--no-apt" ]] && command -v dpkg-query >/dev/null; then
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || need_apt+=("$p")
  done
fi
if ((${#need_apt[@]})); then
  echo "setup: installing ${need_apt[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

if [[ ! -x .venv/bin/python ]] || ! .venv/bin/python -c "import torch, triton, ninja, pytest" 2>/dev/null; then
  echo "setup: creating .venv with torch and triton (a few minutes the first time)"
  python3 -m venv .venv
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -r python/requirements.txt
fi

if ! command -v nvcc >/dev/null && [[ ! -x /usr/local/cuda/bin/nvcc ]]; then
  echo "setup: warning: nvcc not found; CUDA candidates will fail to compile" >&2
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build
echo "setup: done — build/bin/kz is ready"
