#!/usr/bin/env bash
# Runs every test: C++ unit tests, the Python worker tests, and the built `kz` end to end.
# GPU suites (label gpu) skip with a message where no GPU is present. A local LLM server
# (scripts/llm_server.py) runs for the duration, for the suites labelled llm.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# The real LLM server for the kz generate end-to-end tests (label llm), stopped on exit.
# With KZ_REQUIRE_LLM=1 those tests fail, never skip, when it is not up.
export KZ_REQUIRE_LLM=1
STATE=build/llm_server.json
trap '.venv/bin/python scripts/llm_server.py stop --state $STATE' EXIT
if URL=$(.venv/bin/python scripts/llm_server.py start --state $STATE); then
  export KZ_TEST_LLM_URL=$URL
  echo "test: LLM server (llama.cpp, SmolLM2-135M) at $URL"
else
  echo "test: the LLM server did not start; the llm tests will fail" >&2
fi
ctest --test-dir build --output-on-failure -j2 "$@"
