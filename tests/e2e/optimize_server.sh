#!/usr/bin/env bash
# kz optimize --server end to end: the search's verifications go to a real kz serve --cpu
# started here (loopback) instead of the in-process verifier, with the scripted stand-in model
# (fake_llm_server.py): the same outcomes as in process (the task check as a self_check job,
# correct, incorrect, no code), every verification one job on the server, the ledger charged
# with the server's measured child time; a resume with --server again; and the bad inputs: an
# unreachable server (refused before any request), a self_check job whose candidate is not the
# task (400).
KZ=$1
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/serve_lib.sh"
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; cleanup' EXIT
TASK=tests/bench_suite/level1/1_ReLU.py
python3 tests/e2e/fake_llm_server.py "$TMP/llm.port" "$TMP/llm.log" 0 >/dev/null 2>&1 & PIDS+=($!)
for _ in $(seq 100); do [[ -s "$TMP/llm.port" ]] && break; sleep 0.1; done
U="http://127.0.0.1:$(cat "$TMP/llm.port")/v1"
OPT=("$KZ" optimize --model fake --cpu --experience none --task $TASK --budget-tokens 20000 --budget-gpu-s 300 --endpoint "$U")
py() { python3 - "$@"; }

expect_exit 2 "an unreachable server is refused before any request" -- "${OPT[@]}" --iterations 3 --out $TMP/x \
  --server http://127.0.0.1:1
err_contains "unreachable: a clear error" "127.0.0.1:1"
check "no request was sent to the model" test ! -s "$TMP/llm.log"

start_server
expect_exit 0 "a 3-iteration run through kz serve" -- "${OPT[@]}" --iterations 3 --out $TMP/a --server "$BASE"
check "outcomes as in process: task check (self_check job), correct, incorrect, no code" py $TMP/a <<'PY'
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1] + "/candidates.jsonl")]
got = [(r["id"], r["outcome"], r.get("status", "")) for r in rs]
want = [("task", "task_check", "correct"), ("c0", "verified", "correct"), ("c1", "verified", "incorrect"),
        ("c2", "no_code", "")]
print(got); sys.exit(got != want)
PY
accepted=$(curl -s "$BASE/metrics" | awk '/^kz_requests_total\{outcome="accepted"\}/ {print $2}')
check "each verification was one job on the server (3: the task check and two candidates; got $accepted)" \
  test "${accepted%.*}" = 3
check "the ledger charged the server's child seconds, and equals the records" \
  python3 tests/e2e/optimize_ledger.py $TMP/a --gpu-positive
check "best.py is the correct kernel" cmp -s $TMP/a/best.py tests/bench_suite/kernels/relu_ok.py

# The same task's self check again with the wrong candidate: refused at submission.
python3 - "$TMP/bad.json" <<'PY'
import json, sys
task = open("tests/bench_suite/level1/1_ReLU.py").read()
json.dump({"task": task, "candidate": task + "\n# not the task\n", "options": {"self_check": True}}, open(sys.argv[1], "w"))
PY
http "a self_check job whose candidate is not the task is a 400" 400 POST /v1/verify "$TMP/bad.json"
check "... with the reason" grep -q "candidate must be the task" "$OUT_FILE"

# Resume a finished run with more iterations allowed? No: resume continues the same settings;
# a finished run resumes to its end at once, asking nothing more.
n=$(wc -l < "$TMP/llm.log")
expect_exit 0 "--resume with --server again: already finished" -- "$KZ" optimize --resume $TMP/a --endpoint "$U" --server "$BASE"
check "no new request on resume" test "$(wc -l < "$TMP/llm.log")" -eq "$n"

# Suite mode through the same server: one task of the suite, its summary with fast_p.
expect_exit 0 "--suite through kz serve" -- "$KZ" optimize --model fake --cpu --experience none --suite tests/bench_suite \
  --task-id L1_1 --iterations 2 --budget-tokens 20000 --budget-gpu-s 300 --endpoint "$U" --server "$BASE" --out $TMP/s
check "the suite's summary names the task and its fast_p" py $TMP/s <<'PY'
import json, sys
s = json.load(open(sys.argv[1] + "/suite.json"))
print(json.dumps(s)[:400]); sys.exit(not ("L1_1" in json.dumps(s) and "fast" in json.dumps(s)))
PY

finish
