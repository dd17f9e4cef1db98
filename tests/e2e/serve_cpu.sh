#!/usr/bin/env bash
# kz serve from outside, on the CPU and loopback only: the HTTP API (wait, async + poll,
# deduplication, 4xx reasons, 429 with Retry-After, metrics), graceful shutdown on SIGTERM
# (exit 0), and a restart on the same store that keeps done jobs and resumes queued ones.
# Every wait is bounded.
KZ=$1
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/serve_lib.sh"
SERVE_FLAGS=(--max-body-bytes 1048576 --wait-timeout 300)
T=examples/tasks
C=examples/candidates

# request FILE TASK CAND [BACKEND] [OPTIONS_JSON]: writes a /v1/verify body.
request() {
  python3 - "$@" <<'PY'
import json, sys
out, task, cand = sys.argv[1:4]
body = {"task": open(task).read(), "candidate": open(cand).read()}
if len(sys.argv) > 4 and sys.argv[4]: body["backend"] = sys.argv[4]
if len(sys.argv) > 5: body["options"] = json.loads(sys.argv[5])
json.dump(body, open(out, "w"))
PY
}
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$OUT_FILE" "$1"; }

# poll_done ID NAME: polls GET /v1/jobs/ID (<= 240 s) until its state is done.
poll_done() {
  for _ in $(seq 480); do
    curl -s --max-time 5 -o "$OUT_FILE" "$BASE/v1/jobs/$1"
    grep -q '"state":"done"' "$OUT_FILE" && { ok "$2"; return 0; }
    sleep 0.5
  done
  bad "$2: job $1 not done after 240 s"
}

start_server
request "$TMP/ok.json" $T/relu.py $C/relu_triton_ok.py
http "verify ?wait=true" 200 POST "/v1/verify?wait=true" "$TMP/ok.json"
json_check "verdict is correct, schema as kz verify --json" 'v["status"] == "correct" and v["backend"] == "triton" and "checked" in v'
cp "$OUT_FILE" "$TMP/first_verdict.json"
FIRST_ID=$(tr -d '\r' <"$TMP/headers" | awk -F': ' 'tolower($1) == "x-kz-job-id" {print $2}')
[[ -n $FIRST_ID ]] && ok "job id header" || bad "no X-KZ-Job-Id header"

request "$TMP/wrong.json" $T/relu.py $C/relu_triton_wrong.py triton '{"trials": 2}'
http "async submit" 202 POST /v1/verify "$TMP/wrong.json"
json_check "202 body: id and queued" 'v["status"] in ("queued", "running") and len(v["id"]) == 16 and v["deduplicated"] is False'
ASYNC_ID=$(field id)
poll_done "$ASYNC_ID" "async job polled to done"
json_check "polled verdict is incorrect" 'v["state"] == "done" and v["verdict"]["status"] == "incorrect" and v["id"] == "'"$ASYNC_ID"'"'

START=$(date +%s%N)
http "resubmit (dedup)" 200 POST "/v1/verify?wait=true" "$TMP/ok.json"
ELAPSED_MS=$(( ($(date +%s%N) - START) / 1000000 ))
cmp -s "$OUT_FILE" "$TMP/first_verdict.json" && ok "dedup returns the stored verdict" || bad "dedup verdict differs"
grep -qi '^x-kz-deduplicated: true' "$TMP/headers" && ok "dedup header" || bad "no X-KZ-Deduplicated: true"
(( ELAPSED_MS < 1000 )) && ok "dedup is fast (${ELAPSED_MS} ms)" || bad "dedup took ${ELAPSED_MS} ms"
http "async resubmit (dedup)" 202 POST /v1/verify "$TMP/ok.json"
json_check "dedup 202 names the done job" 'v["status"] == "done" and v["deduplicated"] is True and v["id"] == "'"$FIRST_ID"'"'

echo '{"task": "x", ' >"$TMP/malformed.json"
http "malformed JSON" 400 POST /v1/verify "$TMP/malformed.json"
json_check "reason: malformed" '"malformed" in v["error"]'
echo '{"task": "class Model: pass"}' >"$TMP/missing.json"
http "missing candidate" 400 POST /v1/verify "$TMP/missing.json"
json_check "reason names candidate" '"candidate" in v["error"]'
echo '{"task": "a", "candidate": 3}' >"$TMP/nonstring.json"
http "non-string candidate" 400 POST /v1/verify "$TMP/nonstring.json"
request "$TMP/backend.json" $T/relu.py $C/relu_triton_ok.py opencl
http "unknown backend" 400 POST /v1/verify "$TMP/backend.json"
json_check "reason names the backend" '"opencl" in v["error"]'
request "$TMP/option.json" $T/relu.py $C/relu_triton_ok.py "" '{"warp_speed": 9}'
http "unknown option" 400 POST /v1/verify "$TMP/option.json"
json_check "reason names the option" '"warp_speed" in v["error"]'
request "$TMP/share.json" $T/relu.py $C/relu_triton_ok.py "" '{"min_candidate_share": 1.5}'
http "min_candidate_share out of range" 400 POST /v1/verify "$TMP/share.json"
json_check "reason names the range" '"min_candidate_share" in v["error"] and "0..1" in v["error"]'
python3 -c 'import json; json.dump({"task": "x" * 1500000, "candidate": "y"}, open("'"$TMP/big.json"'", "w"))'
http "oversize body" 413 POST /v1/verify "$TMP/big.json"
json_check "reason: too large" '"too large" in v["error"]'
http "unknown job" 404 GET /v1/jobs/0123456789abcdef
json_check "reason names the id" '"0123456789abcdef" in v["error"]'
http "unknown endpoint" 404 GET /v2/nothing
http "healthz after bad requests" 200 GET /healthz
json_check "healthz fields" 'v["ok"] is True and v["queue_depth"] == 0 and v["device"] == "cpu"'
http "metrics" 200 GET /metrics
for line in 'kz_queue_depth 0' 'kz_requests_total{outcome="accepted"} 2' 'kz_requests_total{outcome="deduplicated"} 2' \
    'kz_requests_total{outcome="bad_request"} 6' 'kz_jobs_done_total{status="correct"} 1' 'kz_jobs_done_total{status="incorrect"} 1' \
    'kz_footprint_bytes{jobs="staged"} 0' 'kz_footprint_refused_total 0'; do
  grep -qF "$line" "$OUT_FILE" && ok "metrics: $line" || bad "metrics lack '$line'"
done
stop_server "SIGTERM: graceful shutdown"

# Restart on the same store, with room for one queued job: done jobs are still there,
# a burst gets 429 with Retry-After, and a SIGTERM while jobs are queued loses none.
start_server --max-queue 1
http "earlier job after restart" 200 GET "/v1/jobs/$FIRST_ID"
json_check "its verdict survived" 'v["state"] == "done" and v["verdict"]["status"] == "correct"'
# This process has not measured relu.py's footprint yet (one CPU child per task, then
# cached): one job first, so that the burst below is staged as fast as before the restart.
request "$TMP/warm.json" $T/relu.py $C/relu_triton_ok.py triton '{"seed": 99, "trials": 1}'
http "warm-up job (footprint measured once)" 200 POST "/v1/verify?wait=true" "$TMP/warm.json"
ACCEPTED=()
GOT_429=0
# left_queue ID: waits (<= 120 s) until job ID has left the queue (a build thread took it),
# so that the burst below finds room for exactly one more, however loaded the machine is.
left_queue() {
  for _ in $(seq 240); do
    curl -s --max-time 5 -o "$TMP/state.json" "$BASE/v1/jobs/$1"
    grep -q '"state":"queued"' "$TMP/state.json" || return 0
    sleep 0.5
  done
}
for seed in 1 2 3 4 5; do
  request "$TMP/seed$seed.json" $T/relu.py $C/relu_triton_ok.py triton "{\"seed\": $seed, \"trials\": 1}"
done
for seed in 1 2 3 4 5; do
  [[ $seed == 2 && ${#ACCEPTED[@]} == 1 ]] && left_queue "${ACCEPTED[0]}"
  code=$(curl -s --max-time 10 -o "$OUT_FILE" -D "$TMP/headers" -w '%{http_code}' -H 'Content-Type: application/json' \
    --data-binary "@$TMP/seed$seed.json" "$BASE/v1/verify")
  if [[ $code == 202 ]]; then ACCEPTED+=("$(field id)"); LAST_ACCEPTED="$TMP/seed$seed.json"
  elif [[ $code == 429 ]]; then GOT_429=1; grep -qi '^retry-after: ' "$TMP/headers" || bad "429 without Retry-After"
  else bad "burst submit: HTTP $code"; fi
done
[[ $GOT_429 == 1 ]] && ok "queue full: 429 with Retry-After" || bad "no 429 with --max-queue 1"
(( ${#ACCEPTED[@]} >= 2 )) && ok "burst: ${#ACCEPTED[@]} accepted" || bad "burst: ${#ACCEPTED[@]} accepted, want >= 2"
# A ?wait=true client of the queued job (deduplicated to it): shutdown must not wait for it (202, job queued).
curl -s --max-time 100 -o "$TMP/waiter.out" -w '%{http_code}' -H 'Content-Type: application/json' \
  --data-binary "@$LAST_ACCEPTED" "$BASE/v1/verify?wait=true" >"$TMP/waiter.code" &
WAITER=$!
sleep 0.3
STOP_START=$(date +%s)
stop_server "SIGTERM with jobs queued"
wait "$WAITER"
STOP_S=$(( $(date +%s) - STOP_START ))
(( STOP_S < 60 )) && ok "shutdown does not wait for ?wait=true clients (${STOP_S} s)" || bad "shutdown took ${STOP_S} s"
grep -qE '^(200|202)$' "$TMP/waiter.code" && ok "waiting client answered ($(cat "$TMP/waiter.code"))" \
  || bad "waiting client got '$(cat "$TMP/waiter.code")'"
grep -q "resuming" "$TMP/server.log" && bad "nothing should have been resumed yet" || true
start_server
grep -qE "serve: resuming [12] queued job" "$TMP/server.log" && ok "restart resumes the queued job(s)" || bad "no resume logged"
for id in "${ACCEPTED[@]}"; do poll_done "$id" "accepted job $id done after restart"; done
stop_server "final SIGTERM"
finish
