#!/usr/bin/env bash
# kz bench --generate: generation and verification overlap. The scripted server
# (fake_llm_server.py) holds the third request (seed 2) until a file exists; one request at
# a time, so generation cannot finish before the test releases it. The first verdict must
# be written while it is held: verified as they arrive, not after the last one. Then the
# run completes, the report counts all 6 samples, and a rerun verifies nothing again.
KZ=$1
source "$(dirname "$0")/lib.sh"
S=tests/bench_suite
W=$(mktemp -d)
SERVER_PID=""
BENCH_PID=""
trap '[[ -n "$BENCH_PID" ]] && kill "$BENCH_PID" 2>/dev/null; [[ -n "$SERVER_PID" ]] && kill "$SERVER_PID" 2>/dev/null; rm -rf "$W"' EXIT
lines() { if [[ -f "$1" ]]; then wc -l < "$1"; else echo 0; fi; }

python3 tests/e2e/fake_llm_server.py "$W/port" "$W/requests.log" 0 2 "$W/release" & SERVER_PID=$!
for _ in $(seq 100); do [[ -f "$W/port" ]] && break; sleep 0.1; done
B=("$KZ" bench --suite $S --cpu --cache-dir "$CACHE_DIR" --timeout 120 --out "$W/bench" --generate "$W/run" --
   --endpoint "http://127.0.0.1:$(cat "$W/port")/v1" --model tiny-test --backend triton -n 3 --seed 0 --concurrency 1)
"${B[@]}" >"$W/bench.out" 2>"$W/bench.err" & BENCH_PID=$!
for _ in $(seq 3000); do  # up to 300 s for the first verdict (Triton under the interpreter)
  [[ $(lines "$W/bench/verdicts.jsonl") -ge 1 ]] && break
  kill -0 $BENCH_PID 2>/dev/null || break
  sleep 0.1
done
held=$(lines "$W/run/generations.jsonl")
check "first verdict written while generation is held ($(lines "$W/bench/verdicts.jsonl") verdicts, $held of 6 generated)" \
  test "$(lines "$W/bench/verdicts.jsonl")" -ge 1 -a "$held" -lt 6
check "the held request is the third" test "$(lines "$W/requests.log")" -eq 3
touch "$W/release"
wait $BENCH_PID; rc=$?; BENCH_PID=""
check "kz bench --generate exits 0 (got $rc)" test $rc -eq 0 || tail -c 3000 "$W/bench.err"
check "the generator's progress line is shown" grep -q "6/6 samples" "$W/bench.err"
check "verified in more than one round" grep -q "verification rounds; final round" "$W/bench.err"
check "report: 6 samples, pass@1 0.5, tokens" python3 - "$W/bench/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
o = r["metrics"]["overall"]
ok = r["samples"]["total"] == 6 and r["samples"]["bad_input"] == 2 and abs(o["pass@1"] - 0.5) < 1e-9
sys.exit(0 if ok and abs(o["mean_output_tokens"] - (100 + 101 + 102) / 3) < 1e-9 else 1)
PY
verdicts=$(lines "$W/bench/verdicts.jsonl")
check "4 samples with code verified once each" test "$verdicts" -eq 4
expect_exit 0 "rerun" -- "${B[@]}"
check "rerun: no new request" test "$(lines "$W/requests.log")" -eq 6
check "rerun: nothing verified again" test "$(lines "$W/bench/verdicts.jsonl")" -eq "$verdicts"
expect_exit 2 "--generate with --generations" -- "$KZ" bench --suite $S --out "$W/x" --generate "$W/run" --generations "$W/run/generations.jsonl"
err_contains "says which" "give --generations or --generate, not both"
expect_exit 2 "arguments after -- without --generate" -- "$KZ" bench --suite $S --out "$W/x" --generations "$W/run/generations.jsonl" -- --model m
finish
