#!/usr/bin/env bash
# kz serve's batches, cancellation, priorities and fairness, and metrics, on the CPU and
# loopback only (a real server, SQLite store and HTTP): a batch with a malformed sample,
# batches too large (413) and not fitting in the queue (429, nothing queued), cancel of a
# queued and of the running job, 409 for a done one, priority and per-client round-robin
# order (done timestamps), /metrics histograms and slot time, and a cancelled job that
# stays cancelled across a restart. Every wait is bounded.
KZ=$1
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/serve_lib.sh"
SERVE_FLAGS=(--max-batch 8 --max-queue 10 --wait-timeout 120)
check() { if eval "$2"; then ok "$1"; else bad "$1 ($2)"; fi; }
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$OUT_FILE" "$1"; }

# body OUT [ENVELOPE_JSON] SPEC...: a /v1/verify body (one SPEC, no envelope) or a
# /v1/batch body. SPEC: seed:N (correct relu, 1 trial, seed N), slow:S (sleeps S s on its
# first forward), bad (no candidate); a ",prio=P" or ",client=C" suffix sets the sample's own.
body() {
  python3 - "$@" <<'PY'
import json, sys
sys.path.insert(0, "tests/e2e")
from slow_candidate import OK as ok, slow
out, rest = sys.argv[1], sys.argv[2:]
env = json.loads(rest.pop(0)) if rest and rest[0].startswith("{") else None
task = open("examples/tasks/relu.py").read()
def sample(spec):
    kind, *extra = spec.split(",")
    name, _, arg = kind.partition(":")
    if name == "bad": s = {"task": task}
    elif name == "slow": s = {"task": task, "candidate": slow(arg), "options": {"trials": 1}}
    else: s = {"task": task, "candidate": ok, "backend": "triton", "options": {"trials": 1, "seed": int(arg)}}
    for e in extra:
        k, v = e.split("=")
        s["priority" if k == "prio" else k] = int(v) if k == "prio" else v
    return s
samples = [sample(s) for s in rest]
json.dump(dict(env or {}, samples=samples) if env is not None else samples[0], open(out, "w"))
PY
}

start_server
# A slow job holds the slot; everything after it queues.
body "$TMP/slow60.json" slow:60,client=slow
http "slow job accepted" 202 POST /v1/verify "$TMP/slow60.json"
SLOW=$(field id)
wait_state "$SLOW" running 30 && ok "slow job running" || bad "slow job not running"
body "$TMP/q.json" seed:100
http "a second job queues behind it" 202 POST /v1/verify "$TMP/q.json" clientq
Q=$(field id)
check "it is queued, client from X-KZ-Client" '[[ $(job_field $Q state) == queued && $(job_field $Q client) == clientq ]]'

body "$TMP/mixed.json" '{"client": "e2e", "priority": 0}' seed:1 bad seed:2
http "batch with a malformed sample" 202 POST /v1/batch "$TMP/mixed.json"
json_check "per-index results: error at 1, jobs at 0 and 2" \
  'len(v["jobs"]) == 3 and [j["index"] for j in v["jobs"]] == [0, 1, 2] and "candidate" in v["jobs"][1]["error"] and all(v["jobs"][i]["status"] == "queued" and len(v["jobs"][i]["id"]) == 16 and v["jobs"][i]["deduplicated"] is False for i in (0, 2))'
B0=$(python3 -c "import json; print(json.load(open('$OUT_FILE'))['jobs'][0]['id'])")
B2=$(python3 -c "import json; print(json.load(open('$OUT_FILE'))['jobs'][2]['id'])")
check "batch client recorded" '[[ $(job_field $B0 client) == e2e ]]'

body "$TMP/eight.json" '{}' seed:11 seed:12 seed:13 seed:14 seed:15 seed:16 seed:17 seed:18
http "batch that does not fit in the queue" 429 POST /v1/batch "$TMP/eight.json"
json_check "429 reason names the queue" '"queue is full" in v["error"] and "needs 8" in v["error"]'
grep -qi '^retry-after: ' "$TMP/headers" && ok "429 has Retry-After" || bad "429 without Retry-After"
http "healthz" 200 GET /healthz
json_check "nothing of the refused batch was queued" 'v["queue_depth"] == 3'
body "$TMP/nine.json" '{}' seed:11 seed:12 seed:13 seed:14 seed:15 seed:16 seed:17 seed:18 seed:19
http "batch over --max-batch" 413 POST /v1/batch "$TMP/nine.json"
json_check "413 reason names the limit" '"over the limit of 8" in v["error"]'
echo '{"samples": []}' >"$TMP/empty.json"
http "empty batch" 400 POST /v1/batch "$TMP/empty.json"

http "cancel the queued job" 200 DELETE "/v1/jobs/$Q"
json_check "it is cancelled while queued" 'v["state"] == "cancelled" and v["cancelled_while"] == "queued" and v["verdict"] is None'
http "cancel it again" 409 DELETE "/v1/jobs/$Q"
json_check "409 reason and state" '"cancelled" in v["error"] and v["state"] == "cancelled"'
http "cancel an unknown job" 404 DELETE /v1/jobs/0123456789abcdef

START=$(date +%s%N)
http "cancel the running job" 200 DELETE "/v1/jobs/$SLOW"
json_check "it is cancelled while running" 'v["state"] == "cancelled" and v["cancelled_while"] == "running"'
# Running or already done (a fast job passes "running" between two polls of a loaded host).
wait_state "$B0" "running|done" 20
CANCEL_MS=$(( ($(date +%s%N) - START) / 1000000 ))
(( CANCEL_MS < 10000 )) && ok "the slot moved on to the next job in ${CANCEL_MS} ms" || bad "next job not started ${CANCEL_MS} ms after the cancel"
for _ in $(seq 40); do grep -q "job $SLOW cancelled while running" "$TMP/server.log" && break; sleep 0.25; done
grep -q "job $SLOW cancelled while running" "$TMP/server.log" && ok "the running verification was stopped" || bad "no stop logged"
wait_state "$B0" done 60 && wait_state "$B2" done 60 && ok "batch jobs done" || bad "batch jobs not done"
check "cancelled slow job stays cancelled" '[[ $(job_field $SLOW state) == cancelled ]]'
check "the cancelled queued job never started" '[[ $(job_field $Q state) == cancelled && $(job_field $Q started_at_ms) == None ]]'
http "cancel a done job" 409 DELETE "/v1/jobs/$B0"
json_check "409 says done" 'v["state"] == "done" and "only queued or running" in v["error"]'
http "resubmitting the cancelled job's inputs makes a new job" 202 POST /v1/verify "$TMP/q.json"
json_check "not deduplicated to the cancelled one" 'v["id"] != "'"$Q"'" and v["deduplicated"] is False'
wait_state "$(field id)" done 60 || bad "resubmitted job not done"

# Fairness: a blocker (client C) holds the slot while A queues 6 jobs, then B 1, then P
# one of priority 5. Expected order after the blocker: P, A1, B1, A2..A6. The blocker is
# long enough for the build threads to stage A1, A2, then P and B (the picker's order)
# before the slot frees: the slot applies the same picker to the staged jobs.
body "$TMP/block.json" slow:10,client=C
http "blocker" 202 POST /v1/verify "$TMP/block.json"
BLOCK=$(field id)
wait_state "$BLOCK" running 30 || bad "blocker not running"
body "$TMP/a.json" '{"client": "A"}' seed:21 seed:22 seed:23 seed:24 seed:25 seed:26
http "client A's batch of 6" 202 POST /v1/batch "$TMP/a.json"
mapfile -t AIDS < <(python3 -c "import json; [print(j['id']) for j in json.load(open('$OUT_FILE'))['jobs']]")
body "$TMP/b.json" seed:31
http "client B's single job" 202 POST /v1/verify "$TMP/b.json" B
BID=$(field id)
body "$TMP/p.json" seed:41,prio=5
http "client P's priority job" 202 POST /v1/verify "$TMP/p.json" P
PID_=$(field id)
for id in "${AIDS[@]}" "$BID" "$PID_"; do wait_state "$id" done 120 || bad "job $id not done"; done
ORDER=$(for id in "${AIDS[@]}" "$BID" "$PID_"; do echo "$(job_field "$id" finished_at_ms) $(job_field "$id" client)"; done | sort -n | awk '{print $2}' | tr '\n' ' ')
echo "     finish order by client: $ORDER"
check "priority 5 ran first" '[[ $ORDER == "P "* ]]'
check "B finished before A's last ones (at most one A before it)" '[[ $ORDER == "P A B "* || $ORDER == "P B "* ]]'

http "metrics" 200 GET /metrics
for line in 'kz_stage_seconds_bucket{stage="queue_wait",le="+Inf"}' 'kz_stage_seconds_bucket{stage="total",le="0.5"}' \
    'kz_stage_seconds_sum{stage="run"}' 'kz_stage_seconds_count{stage="screen"}' 'kz_gpu_slot_busy_seconds_total ' \
    'kz_uptime_seconds ' 'kz_jobs{state="cancelled"} 2' 'kz_compile_cache_total{result="hit"}' \
    'kz_requests_total{outcome="batch_too_large"} 1' 'kz_requests_total{outcome="rejected_queue_full"} 8'; do
  grep -qF "$line" "$OUT_FILE" && ok "metrics: $line" || bad "metrics lack '$line'"
done
python3 - "$OUT_FILE" <<'PY' && ok "metrics: counts, and busy <= uptime" || bad "metrics values"
import re, sys
t = open(sys.argv[1]).read()
val = lambda name: float(re.search("^" + re.escape(name) + r" (\S+)$", t, re.M).group(1))
assert val('kz_stage_seconds_count{stage="total"}') >= 11, t
assert val('kz_stage_seconds_count{stage="queue_wait"}') >= 11
busy, up = val("kz_gpu_slot_busy_seconds_total"), val("kz_uptime_seconds")
assert 5 < busy <= up, (busy, up)
PY

# A queued job cancelled before a restart does not run after it.
body "$TMP/slow2.json" slow:2,client=R
http "another slow job" 202 POST /v1/verify "$TMP/slow2.json"
wait_state "$(field id)" running 30 || bad "slow job not running"
body "$TMP/r.json" seed:51
http "a job queued behind it" 202 POST /v1/verify "$TMP/r.json"
R=$(field id)
http "cancel it" 200 DELETE "/v1/jobs/$R"
stop_server "SIGTERM"
RESUMES=$(grep -c "resuming" "$TMP/server.log")
start_server
sleep 2
check "nothing resumed after the restart" '[[ $(grep -c "resuming" "$TMP/server.log") == "$RESUMES" ]]'
check "the cancelled job is still cancelled and never started" '[[ $(job_field $R state) == cancelled && $(job_field $R started_at_ms) == None ]]'
stop_server "final SIGTERM"
finish
