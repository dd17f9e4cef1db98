#!/usr/bin/env bash
# Clang's thread-safety analysis (-Wthread-safety, as errors) over the sources whose locks
# are annotated (src/util/thread_annotations.h): a syntax-only pass, seconds, not a second
# build (issue 20's guard rail). ctest runs it as `thread_safety`. Add a file to FILES when
# its class's members get GUARDED_BY annotations.
set -euo pipefail
cd "$(dirname "$0")/.."
CXX=${CLANGXX:-clang++}
command -v "$CXX" >/dev/null || { echo "thread_safety: $CXX not found (scripts/setup.sh installs clang)"; exit 1; }
FILES=(src/optimize/budget_ledger.cc src/generate/replay_endpoint.cc src/generate/openai_endpoint.cc src/store/job_store.cc src/queue/job_queue.cc
       src/queue/job_queue_worker.cc src/queue/queue_worker.cc src/queue/verdict_reader.cc src/service/admission.cc
       src/service/execution.cc src/service/execution_jobs.cc src/service/execution_remote.cc src/service/execution_run.cc)
rc=0
# The check itself must bite: an unlocked write to a GUARDED_BY member has to be refused.
probe='#include "util/thread_annotations.h"
struct P { kz::util::Mutex mu; int n GUARDED_BY(mu) = 0; void Bad() { n = 1; } };'
if "$CXX" -std=c++20 -fsyntax-only -Wthread-safety -Werror -Isrc -x c++ - <<<"$probe" 2>/dev/null; then
  echo "thread_safety: FAIL the analysis did not refuse an unlocked write (is $CXX clang?)"; rc=1
else
  echo "thread_safety: ok   the analysis refuses an unlocked write"
fi
for f in "${FILES[@]}"; do
  if "$CXX" -std=c++20 -fsyntax-only -Wthread-safety -Wthread-safety-beta -Werror -Isrc "$f"; then
    echo "thread_safety: ok   $f"
  else
    echo "thread_safety: FAIL $f"; rc=1
  fi
done
exit $rc
