#!/usr/bin/env bash
# kz generate end to end on the tiny fixture suite (tests/bench_suite: 2 tasks) x 3 samples:
# against a scripted OpenAI-compatible server (fake_llm_server.py) with --record, a rerun
# that requests nothing, a kill (SIGINT) and a resume that asks no finished sample again,
# --replay of the transcript giving byte-identical files, usage errors, and the result piped
# into kz bench --cpu.
KZ=$1
source "$(dirname "$0")/lib.sh"
S=tests/bench_suite
W=$(mktemp -d)
SERVER_PID=""
stop_server() { [[ -n "$SERVER_PID" ]] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null; SERVER_PID=""; }
trap 'stop_server; rm -rf "$W"' EXIT
start_server() {  # start_server LOG [DELAY_S]: sets PORT
  rm -f "$W/port"
  python3 tests/e2e/fake_llm_server.py "$W/port" "$1" "${2:-0}" & SERVER_PID=$!
  for _ in $(seq 100); do [[ -f "$W/port" ]] && break; sleep 0.1; done
  PORT=$(cat "$W/port")
}
# jsonl_check NAME FILE PYTHON_EXPR: EXPR with rs = the records of FILE.
jsonl_check() {
  if python3 - "$2" "$3" <<'PY'
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
sys.exit(0 if eval(sys.argv[2], {"rs": rs}) else 1)
PY
  then PASSES=$((PASSES + 1)); echo "ok   $1"
  else FAILS=$((FAILS + 1)); echo "FAIL $1: $3"; head -c 2000 "$2"; fi
}
lines() { if [[ -f "$1" ]]; then wc -l < "$1"; else echo 0; fi; }

start_server "$W/requests.log"
G=("$KZ" generate --suite $S --model tiny-test --backend triton -n 3 --seed 0)
expect_exit 0 "first run" -- "${G[@]}" --concurrency 2 --endpoint "http://127.0.0.1:$PORT/v1" --out "$W/run" --record "$W/transcript.jsonl"
err_contains "progress line" "6/6 samples"
check "6 requests seen by the server" test "$(lines "$W/requests.log")" -eq 6
jsonl_check "6 records, one per (task, sample)" "$W/run/generations.jsonl" \
  'len(rs) == 6 and sorted((r["task"], r["sample"]) for r in rs) == sorted((t, s) for t in ("L1_1", "L2_1") for s in range(3))'
jsonl_check "records sorted by level, problem, sample" "$W/run/generations.jsonl" \
  '[(r["level"], r["sample"]) for r in rs] == [(1, 0), (1, 1), (1, 2), (2, 0), (2, 1), (2, 2)]'
jsonl_check "sample 2 has no code and a reason" "$W/run/generations.jsonl" \
  'all((r["reason"] == "no_code") == (r["sample"] == 2) and (r["code"] == "") == (r["sample"] == 2) for r in rs)'
jsonl_check "tokens, finish reason, latency, prompt hash" "$W/run/generations.jsonl" \
  'all(r["output_tokens"] == 100 + r["sample"] and r["tokens"]["prompt"] > 100 and r["finish_reason"] == "stop" and r["latency_s"] > 0 and len(r["prompt_xxh"]) == 32 for r in rs)'
jsonl_check "one prompt hash per task" "$W/run/generations.jsonl" 'len({(r["task"], r["prompt_xxh"]) for r in rs}) == 2 and len({r["prompt_xxh"] for r in rs}) == 2'
check "KernelBench layout: 6 files" test "$(ls "$W/run"/level_*_problem_*_sample_*_kernel.py | wc -l)" -eq 6
check "file holds the extracted code" grep -q "class ModelNew" "$W/run/level_2_problem_1_sample_0_kernel.py"
check "no-code sample's file is empty" test ! -s "$W/run/level_1_problem_1_sample_2_kernel.py"
check "transcript has 6 lines" test "$(lines "$W/transcript.jsonl")" -eq 6

expect_exit 0 "rerun" -- "${G[@]}" --endpoint "http://127.0.0.1:$PORT/v1" --out "$W/run"
err_contains "nothing to request" "0 to request, 6 done before"
check "still 6 requests seen by the server" test "$(lines "$W/requests.log")" -eq 6
stop_server

# SIGINT mid-run (slow server, one request at a time), then a resume: no finished sample is asked twice.
start_server "$W/kill.log" 0.4
"${G[@]}" --concurrency 1 --endpoint "http://127.0.0.1:$PORT/v1" --out "$W/killed" 2>"$W/kill.err" &
GEN=$!
for _ in $(seq 100); do [[ $(lines "$W/kill.log") -ge 3 ]] && break; sleep 0.05; done
kill -INT $GEN; wait $GEN; rc=$?
check "SIGINT exits 130 (got $rc)" test $rc -eq 130
done_before=$(lines "$W/killed/generations.jsonl")
check "some but not all samples finished ($done_before)" test "$done_before" -ge 1 -a "$done_before" -lt 6
expect_exit 0 "resume after SIGINT" -- "${G[@]}" --endpoint "http://127.0.0.1:$PORT/v1" --out "$W/killed"
err_contains "resume counts the finished" "$((6 - done_before)) to request, $done_before done before"
check "no finished sample requested twice" python3 - "$W/killed/generations.jsonl" "$W/kill.log" <<'PY'
import collections, json, sys
done = {(r["task"], r["sample"]) for r in map(json.loads, open(sys.argv[1]))}
asked = collections.Counter(tuple(l.split()) for l in open(sys.argv[2]))
names = {"L1_1": "1_ReLU", "L2_1": "1_Row_sum"}
sys.exit(0 if len(done) == 6 and all(asked[(names[t], str(s))] >= 1 for t, s in done) and sum(asked.values()) <= 7 else 1)
PY
check "resumed run equals the uninterrupted one (latency aside)" cmp -s <(python3 -c '
import json, sys
for l in open(sys.argv[1]): r = json.loads(l); r.pop("latency_s"); print(json.dumps(r, sort_keys=True))' "$W/killed/generations.jsonl") \
  <(python3 -c '
import json, sys
for l in open(sys.argv[1]): r = json.loads(l); r.pop("latency_s"); print(json.dumps(r, sort_keys=True))' "$W/run/generations.jsonl")
stop_server

# Replay: no server; the same seed and transcript give byte-identical files.
R=("$KZ" generate --suite $S --model tiny-test --backend triton -n 3 --seed 0 --replay "$W/transcript.jsonl")
expect_exit 0 "replay" -- "${R[@]}" --out "$W/replayed"
check "replayed generations.jsonl is byte-identical" cmp "$W/run/generations.jsonl" "$W/replayed/generations.jsonl"
check "replayed kernel files are byte-identical" diff -r -x '*.jsonl' -x summary.json "$W/run" "$W/replayed"
expect_exit 0 "replay rerun" -- "${R[@]}" --out "$W/replayed"
err_contains "replay rerun requests nothing" "0 to request, 6 done before"
expect_exit 1 "replay with another seed" -- "${R[@]/--seed/--temperature}" --seed 7 --out "$W/other"
err_contains "unknown request is named" "is not in the transcript"

# Proposer mode: API sets in, modules (class Model) out, resumable; bad lines named and skipped.
printf '%s\n' '{"id": "relu", "apis": ["torch.relu", "torch.sigmoid"]}' '{"id": "tanh", "apis": ["torch.tanh"]}' > "$W/sets.jsonl"
start_server "$W/prop.log"
P=("$KZ" generate --proposer --model tiny-test -n 3 --seed 0 --endpoint "http://127.0.0.1:$PORT/v1" --out "$W/prop")
expect_exit 0 "proposer: 2 API sets x 3 samples" -- "${P[@]}" --api-sets "$W/sets.jsonl"
check "proposer: 6 requests" test "$(lines "$W/prop.log")" -eq 6
check "proposer: the prompt carried the API set" grep -q "^torch.relu 0$" "$W/prop.log"
jsonl_check "proposer: 6 kz.proposal/1 records in (set, sample) order" "$W/prop/proposals.jsonl" \
  '[(r["format"], r["set"], r["sample"]) for r in rs] == [("kz.proposal/1", s, i) for s in ("relu", "tanh") for i in range(3)]'
jsonl_check "proposer: apis, tokens and prompt recorded" "$W/prop/proposals.jsonl" \
  'all(r["apis"] == (["torch.relu", "torch.sigmoid"] if r["set"] == "relu" else ["torch.tanh"]) and r["output_tokens"] == 100 + r["sample"] and r["prompt"] == "proposer_module.v1.txt" and "backend" not in r for r in rs)'
jsonl_check "proposer: sample 2 has no code and a reason" "$W/prop/proposals.jsonl" \
  'all((r["reason"] == "no_code") == (r["sample"] == 2) and ("class Model(nn.Module)" in r["code"]) == (r["sample"] != 2) for r in rs)'
check "proposer: one module file per sample" test "$(ls "$W/prop/modules" | wc -l)" -eq 6
check "proposer: the module file holds the module" grep -q "return torch.relu(x)" "$W/prop/modules/relu_sample_0.py"
check "proposer: a sample without code has an empty file" test ! -s "$W/prop/modules/tanh_sample_2.py"
printf '%s\n' 'not json' '{"id": "../up", "apis": ["torch.abs"]}' '{"id": "relu", "apis": ["torch.abs"]}' '{"id": "x", "apis": []}' >> "$W/sets.jsonl"
expect_exit 1 "proposer rerun with bad lines: exit 1" -- "${P[@]}" --api-sets "$W/sets.jsonl"
err_contains "bad JSON line named" "sets.jsonl:3: not a JSON object; skipped"
err_contains "a path in an id refused" "sets.jsonl:4: \"id\" must be"
err_contains "a repeated id named" "sets.jsonl:5: id \"relu\" repeated"
err_contains "empty apis named" "sets.jsonl:6: \"apis\" must be"
err_contains "proposer rerun asks nothing" "0 to request, 6 done before"
check "proposer: still 6 requests" test "$(lines "$W/prop.log")" -eq 6
printf 'nope\n' > "$W/bad_sets.jsonl"
expect_exit 2 "proposer: no valid set" -- "${P[@]}" --api-sets "$W/bad_sets.jsonl"
err_contains "says so" "holds no valid API set"
expect_exit 2 "proposer with --suite" -- "${P[@]}" --api-sets "$W/sets.jsonl" --suite $S
expect_exit 2 "proposer without --api-sets" -- "${P[@]}"
stop_server

# TLS failure: https:// to a plain-HTTP server. A clear message, the run stops asking (every
# request would fail the same way), ends cleanly (exit 1), and keeps what finished before.
start_server "$W/tls.log"
T=("$KZ" generate --suite $S --model tiny-test --backend triton --seed 0 --out "$W/tls")
expect_exit 0 "before TLS: 1 sample per task over http" -- "${T[@]}" -n 1 --endpoint "http://127.0.0.1:$PORT/v1"
expect_exit 1 "https to a plain-HTTP server: exit 1" -- "${T[@]}" -n 3 --retries 3 --endpoint "https://127.0.0.1:$PORT/v1"
err_contains "TLS failure named" "tls:"
err_contains "the run stops asking" "stopping: every other request would fail the same way"
jsonl_check "finished samples kept" "$W/tls/generations.jsonl" 'sorted((r["task"], r["sample"]) for r in rs) == [("L1_1", 0), ("L2_1", 0)]'
jsonl_check "failures.jsonl: kind tls, not retried" "$W/tls/failures.jsonl" 'len(rs) >= 1 and all(r["kind"] == "tls" and r["attempts"] == 1 for r in rs)'
check "no request reached the server over TLS" test "$(lines "$W/tls.log")" -eq 2
expect_exit 0 "back on http: the rest is asked" -- "${T[@]}" -n 3 --endpoint "http://127.0.0.1:$PORT/v1"
check "4 more requests" test "$(lines "$W/tls.log")" -eq 6
stop_server

# Usage errors.
expect_exit 2 "both --endpoint and --replay" -- "${R[@]}" --endpoint http://127.0.0.1:1/v1 --out "$W/x"
err_contains "says which" "exactly one of --endpoint and --replay"
mkdir -p "$W/empty_suite"
expect_exit 2 "empty suite" -- "$KZ" generate --suite "$W/empty_suite" --model m --replay "$W/transcript.jsonl" --out "$W/x"
echo "{{no_such_value}}" > "$W/bad_prompt.txt"
expect_exit 2 "template with an unknown placeholder" -- "${R[@]}" --prompt "$W/bad_prompt.txt" --out "$W/x"
err_contains "placeholder named" "{{no_such_value}}"
expect_exit 1 "server down: connection refused" -- "$KZ" generate --suite $S --model m -n 1 --retries 1 --endpoint "http://127.0.0.1:$PORT/v1" --out "$W/down"
err_contains "connect error reported" "connect:"

# Scored by kz bench (CPU: Triton under the interpreter).
expect_exit 0 "kz bench on the generations" -- "$KZ" bench --suite $S --cpu --cache-dir "$CACHE_DIR" --timeout 120 \
  --generations "$W/run/generations.jsonl" --out "$W/bench"
check "report written" python3 - "$W/bench/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
o = r["metrics"]["overall"]
# 6 samples: L1_1 correct/wrong/no code, L2_1 correct/correct/no code; the no-code ones are scored bad inputs.
ok = r["samples"]["total"] == 6 and r["samples"]["bad_input"] == 2 and abs(o["pass@1"] - 0.5) < 1e-9
ok = ok and abs(o["mean_output_tokens"] - (100 + 101 + 102) / 3) < 1e-9
sys.exit(0 if ok else 1)
PY
finish
