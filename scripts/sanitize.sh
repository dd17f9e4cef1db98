#!/usr/bin/env bash
# AddressSanitizer + UBSan over the C++ unit tests of the process, gate, ledger, reward and
# framing code (issue 20's guard rail, the part CI can afford: a whole sanitized build takes
# ~40 min on a 2-core machine, these two binaries ~3 min). Exit 0 when every test passes with
# no sanitizer report (ASan aborts on its first error; UBSan is made fatal here).
# Usage: scripts/sanitize.sh [OUT_DIR]   (default build/sanitize); ctest runs it as `sanitize_subset`.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-build/sanitize}
mkdir -p "$OUT"
CXX=${CXX:-g++}
FLAGS=(-std=c++20 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
       -Isrc -Itests/unit -DKZ_SOURCE_DIR=\"$PWD\")
# Binary 1: child processes, the GPU gate and its enforcement, the run child's channel and the
# judges over its untrusted facts (trace rules, timing statistics, the task check's rules), the
# budget ledger (threads).
PROC_SRC=(src/util/subprocess.cc src/util/spawn.cc src/util/frame.cc src/util/proc_stats.cc src/util/log.cc
          src/util/fs.cc src/verify/gpu_gate.cc src/verify/gate_hub.cc src/verify/run_channel.cc src/verify/run_judges.cc
          src/verify/trace_judge.cc src/verify/trace_joins.cc src/verify/trace_names.cc src/verify/trace_facts.cc
          src/verify/timing_stats.cc src/verify/verdict.cc src/verify/status.cc src/optimize/budget_ledger.cc
          src/verify/task_facts.cc src/verify/task_rules.cc tests/unit/verify/task_rules_test.cc
          tests/unit/util/subprocess_test.cc tests/unit/verify/gate_hub_test.cc tests/unit/verify/gpu_gate_test.cc
          tests/unit/verify/timing_stats_test.cc tests/unit/verify/trace_judge_test.cc tests/unit/verify/trace_joins_test.cc
          tests/unit/optimize/budget_ledger_test.cc)
# Binary 2: the reward math, frames, hashes, kz optimize's islands, duplicate detection,
# diagnostics, short-term memory, mutation rule and the experience library (SQLite).
MATH_SRC=(src/rewards/ca_grpo.cc src/rewards/frontier.cc src/rewards/multi_turn.cc src/rewards/retry_buffer.cc
          src/rewards/mirror_pop.cc src/rewards/rft_select.cc src/util/frame.cc src/util/hash.cc src/util/fs.cc
          src/optimize/islands.cc src/optimize/dedup.cc src/optimize/diagnostics.cc src/verify/feedback.cc src/verify/ncu_report.cc src/optimize/short_memory.cc
          src/optimize/mutation.cc src/optimize/experience.cc src/optimize/embedding.cc src/generate/prompt.cc
          src/scoring/generations.cc
          src/scoring/suite.cc
          tests/unit/rewards/ca_grpo_test.cc tests/unit/rewards/frontier_test.cc tests/unit/rewards/multi_turn_test.cc
          tests/unit/util/frame_test.cc
          tests/unit/util/hash_test.cc tests/unit/optimize/islands_test.cc tests/unit/optimize/dedup_test.cc
          tests/unit/optimize/loop_parts_test.cc tests/unit/optimize/experience_test.cc)
# What the judges' verdict helpers reach beyond these sources (the worker client's exit
# descriptions, hashes) links from the project's own (uninstrumented) libraries, which
# scripts/setup.sh builds beside OUT.
LIBS=$(dirname "$OUT")/lib
"$CXX" "${FLAGS[@]}" "${PROC_SRC[@]}" "$LIBS/libkz_worker_client.a" "$LIBS/libkz_sandbox.a" "$LIBS/libkz_util.a" \
  -lgtest -lgtest_main -lpthread -lxxhash -o "$OUT/sanitize_proc" &
"$CXX" "${FLAGS[@]}" "${MATH_SRC[@]}" -lgtest -lgtest_main -lpthread -lxxhash -lsqlite3 -o "$OUT/sanitize_math" &
wait %1 && wait %2 || { echo "sanitize: build failed"; exit 1; }
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1
rc=0
for b in sanitize_proc sanitize_math; do
  if "$OUT/$b" --gtest_brief=1 >"$OUT/$b.log" 2>&1 && ! grep -qE "runtime error|Sanitizer" "$OUT/$b.log"; then
    echo "sanitize: $b: $(grep -E '^\[  PASSED  \]' "$OUT/$b.log")"
  else
    echo "sanitize: $b FAILED"; grep -E "runtime error|Sanitizer|FAILED|Failure" "$OUT/$b.log" | head -20; rc=1
  fi
done
exit $rc
