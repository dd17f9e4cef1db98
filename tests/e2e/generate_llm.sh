#!/usr/bin/env bash
# kz generate against a real model server: llama.cpp's OpenAI-compatible server (xllamacpp)
# with SmolLM2-135M-Instruct, started by scripts/test.sh (scripts/llm_server.py) and named by
# $KZ_TEST_LLM_URL. For each backend, 2 tasks x 3 samples, then kz bench --cpu on the
# result (a report with tokens); then a run killed (SIGKILL or SIGINT) at a random point
# and resumed, counting the server's requests through counting_proxy.py: no finished
# sample is asked twice. Without $KZ_TEST_LLM_URL it skips (exit 77) with a message, unless
# KZ_REQUIRE_LLM=1 (scripts/test.sh, CI): then it fails. A server that does not answer fails.
KZ=$1
source "$(dirname "$0")/lib.sh"
S=tests/bench_suite
URL=${KZ_TEST_LLM_URL:-}
if [[ -z "$URL" ]]; then
  if [[ "${KZ_REQUIRE_LLM:-0}" == 1 ]]; then
    echo "FAIL: KZ_REQUIRE_LLM=1 but KZ_TEST_LLM_URL is not set: the LLM server did not start (scripts/test.sh)"
    exit 1
  fi
  echo "SKIP: no LLM server: KZ_TEST_LLM_URL is not set. Run through scripts/test.sh, or:"
  echo "  export KZ_TEST_LLM_URL=\$(.venv/bin/python scripts/llm_server.py start) && ctest --test-dir build -L llm"
  exit 77
fi
if ! curl -sf --max-time 10 "${URL%/v1}/health" >/dev/null; then
  echo "FAIL: the LLM server at $URL does not answer /health (scripts/llm_server.py status)"
  exit 1
fi
W=$(mktemp -d)
PROXY_PID=""
trap '[[ -n "$PROXY_PID" ]] && kill "$PROXY_PID" 2>/dev/null; rm -rf "$W"' EXIT
jsonl_check() {  # jsonl_check NAME FILE PYTHON_EXPR: EXPR with rs = the records of FILE
  if python3 - "$2" "$3" <<'PY'
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
sys.exit(0 if eval(sys.argv[2], {"rs": rs}) else 1)
PY
  then PASSES=$((PASSES + 1)); echo "ok   $1"
  else FAILS=$((FAILS + 1)); echo "FAIL $1: $3"; head -c 3000 "$2"; fi
}
lines() { if [[ -f "$1" ]]; then wc -l < "$1"; else echo 0; fi; }
MAX_TOKENS=32
G=("$KZ" generate --suite $S --model smollm2 -n 3 --concurrency 4 --max-tokens $MAX_TOKENS --temperature 0.8)

for B in cuda triton; do
  expect_exit 0 "$B: kz generate, 2 tasks x 3 samples from SmolLM2" -- "${G[@]}" --backend $B --seed 1 \
    --endpoint "$URL" --out "$W/$B"
  err_contains "$B: progress reached 6/6" "6/6 samples"
  jsonl_check "$B: 6 records with the model's tokens" "$W/$B/generations.jsonl" \
    "len(rs) == 6 and all(r['backend'] == '$B' and 0 < r['tokens']['completion'] <= $MAX_TOKENS and r['output_tokens'] == r['tokens']['completion'] and r['tokens']['prompt'] > 100 and r['finish_reason'] in ('stop', 'length') and r['latency_s'] > 0 for r in rs)"
  jsonl_check "$B: every sample has code or a reason" "$W/$B/generations.jsonl" \
    "all((r['reason'] is None) == (r['code'] != '') for r in rs)"
  expect_exit 0 "$B: kz bench --cpu on the run" -- "$KZ" bench --suite $S --cpu --cache-dir "$CACHE_DIR" --timeout 120 \
    --generations "$W/$B/generations.jsonl" --out "$W/$B-bench"
  check "$B: the report counts 6 samples and their tokens" python3 - "$W/$B-bench/report.json" "$W/$B/generations.jsonl" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
gens = [json.loads(l) for l in open(sys.argv[2])]
mean = sum(g["output_tokens"] for g in gens) / len(gens)
o = r["metrics"]["overall"]
sys.exit(0 if r["samples"]["total"] == 6 and abs(o["mean_output_tokens"] - mean) < 1e-9 and "pass@1" in o else 1)
PY
done

# Killed at a random point, then resumed; the server's requests counted by a proxy.
rm -f "$W/port"
python3 tests/e2e/counting_proxy.py "${URL%/v1}" "$W/port" "$W/requests.jsonl" 1_ReLU 1_Row_sum & PROXY_PID=$!
for _ in $(seq 100); do [[ -f "$W/port" ]] && break; sleep 0.1; done
PURL="http://127.0.0.1:$(cat "$W/port")/v1"
SIG=$([[ $((RANDOM % 2)) -eq 0 ]] && echo KILL || echo INT)
AFTER=$((1 + RANDOM % 4))                    # finished samples to wait for (1-4)
DELAY=$(printf '0.%03d' $((RANDOM % 1000)))  # then 0-1 s more
echo "kill point: SIG$SIG after $AFTER finished samples + ${DELAY} s"
"${G[@]}" --backend triton --seed 11 --endpoint "$PURL" --out "$W/killed" 2>"$W/killed.err" & GEN=$!
for _ in $(seq 1200); do [[ $(lines "$W/killed/generations.jsonl") -ge $AFTER ]] && break; sleep 0.1; done
sleep "$DELAY"
kill -$SIG $GEN; wait $GEN; rc=$?
check "killed run ended by SIG$SIG or finished (exit $rc)" test $rc -eq 137 -o $rc -eq 130 -o $rc -eq 0
cp "$W/killed/generations.jsonl" "$W/finished_before.jsonl" 2>/dev/null || : > "$W/finished_before.jsonl"
sent_before=$(lines "$W/requests.jsonl")
echo "before the restart: $(lines "$W/finished_before.jsonl") samples finished, $sent_before requests sent"
expect_exit 0 "restarted run completes" -- "${G[@]}" --backend triton --seed 11 --endpoint "$PURL" --out "$W/killed"
check "no request sent twice for a sample finished before the kill" python3 - "$W/finished_before.jsonl" "$W/requests.jsonl" "$W/killed/generations.jsonl" <<'PY'
import collections, json, sys
def records(path):
    out = []
    for line in open(path):
        try: out.append(json.loads(line))
        except ValueError: pass  # a line torn by SIGKILL is not a finished sample
    return out
names = {"L1_1": "1_ReLU", "L2_1": "1_Row_sum"}
finished = {(names[r["task"]], 11 + r["sample"]) for r in records(sys.argv[1])}
sent = collections.Counter((r["task"], r["seed"]) for r in records(sys.argv[2]))
final = {(names[r["task"]], 11 + r["sample"]) for r in records(sys.argv[3])}
twice = [k for k in finished if sent[k] != 1]
print(f"finished before the kill: {len(finished)}, requests: {sum(sent.values())}, asked twice: {twice}")
sys.exit(0 if not twice and len(final) == 6 and set(sent) == final and sum(sent.values()) <= 6 + 4 else 1)
PY
finish
