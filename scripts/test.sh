#!/usr/bin/env bash
# Runs every test: C++ unit tests, the Python worker tests, and the built `kz` end to end.
# GPU suites (label gpu) skip with a message where no GPU is present.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
ctest --test-dir build --output-on-failure -j2 "$@"
