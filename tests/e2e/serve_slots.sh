#!/usr/bin/env bash
# kz serve's pipeline with several slots, on the CPU (--cpu-slots 2 --build-threads 2; the
# same code drives one slot per GPU): two jobs run at once, in children each slot started
# ahead (child.prestarted), each slot accounts its busy
# time, a job whose verdict is known at staging (screen rejection) finishes while both
# slots are busy, a staged job waiting for a slot can be cancelled (it never starts), and
# jobs staged when the server stops are run after a restart. Every wait is bounded.
KZ=$1
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/serve_lib.sh"
SERVE_FLAGS=(--cpu-slots 2 --build-threads 2 --wait-timeout 120)
check() { if eval "$2"; then ok "$1"; else bad "$1 ($2)"; fi; }

start_server
http "healthz" 200 GET /healthz
json_check "two slots" 'v["slots"] == 2 and v["running"] == 0'

T0=$(date +%s)
batch "$TMP/slow.json" slow:6 slow:6.1 slow:6.2 slow:6.3
http "four slow jobs" 202 POST /v1/batch "$TMP/slow.json"
mapfile -t SLOW < <(ids)
MAX_RUNNING=0
for _ in $(seq 240); do  # until two run at once (<= 60 s)
  r=$(curl -s --max-time 2 "$BASE/healthz" | python3 -c "import json,sys; print(json.load(sys.stdin)['running'])")
  (( r > MAX_RUNNING )) && MAX_RUNNING=$r
  (( MAX_RUNNING >= 2 )) && break
  sleep 0.25
done
check "two jobs run at once" '(( MAX_RUNNING == 2 ))'
batch "$TMP/cheat.json" cheat
http "a screen-rejected job while both slots are busy" 202 POST /v1/batch "$TMP/cheat.json"
CHEAT=$(ids)
wait_state "$CHEAT" done 60 && ok "it is done without a slot" || bad "cheat not done"
check "rejected by the screen" '[[ $(curl -s "$BASE/v1/jobs/$CHEAT" | python3 -c "import json,sys; print(json.load(sys.stdin)[\"verdict\"][\"status\"])") == rejected ]]'
check "before the slow jobs finished" '[[ $(job_field ${SLOW[3]} state) != done ]]'
for id in "${SLOW[@]}"; do wait_state "$id" done 180 || bad "job $id not done"; done
WALL=$(( $(date +%s) - T0 ))
python3 - "$BASE" "${SLOW[@]}" <<'PY' && ok "runs overlapped (two slots), all correct; ${WALL} s wall" || bad "no overlap"
import json, sys, urllib.request
base, ids = sys.argv[1], sys.argv[2:]
jobs = [json.load(urllib.request.urlopen(f"{base}/v1/jobs/{i}")) for i in ids]
assert all(j["verdict"]["status"] == "correct" for j in jobs), [j["verdict"]["status"] for j in jobs]
pre = sum(1 for j in jobs if j["verdict"]["child"].get("prestarted"))
print(f"     {pre} of {len(jobs)} ran in a child the slot had started ahead (torch imported)")
assert pre >= 2, pre
iv = sorted((j["started_at_ms"], j["finished_at_ms"]) for j in jobs)
overlaps = sum(1 for a in iv for b in iv if a < b and b[0] < a[1])
print(f"     run intervals (ms from first start): {[(s - iv[0][0], e - iv[0][0]) for s, e in iv]}")
assert overlaps >= 2, iv
PY
http "metrics" 200 GET /metrics
python3 - "$OUT_FILE" <<'PY' && ok "metrics: both slots were busy, summed busy time" || bad "slot metrics"
import re, sys
t = open(sys.argv[1]).read()
val = lambda name: float(re.search("^" + re.escape(name) + r" (\S+)$", t, re.M).group(1))
assert val("kz_slots") == 2
a, b = val('kz_slot_busy_seconds_total{slot="cpu:0"}'), val('kz_slot_busy_seconds_total{slot="cpu:1"}')
assert a > 5 and b > 5, (a, b)
assert abs(val("kz_gpu_slot_busy_seconds_total") - (a + b)) < 1, t
assert val('kz_stage_seconds_count{stage="slot_wait"}') >= 4
PY

# Both slots held by long jobs: a third, staged, waits for a slot; cancelling it means it
# never starts; then the long ones are cancelled too.
batch "$TMP/long.json" slow:60 slow:60.1 slow:60.2
http "three long jobs" 202 POST /v1/batch "$TMP/long.json"
mapfile -t LONG < <(ids)
for _ in $(seq 240); do
  [[ $(curl -s --max-time 2 "$BASE/healthz" | python3 -c "import json,sys; print(json.load(sys.stdin)['running'])") == 2 ]] && break
  sleep 0.25
done
WAITING=""
for id in "${LONG[@]}"; do [[ $(job_field "$id" state) == queued ]] && WAITING=$id; done
check "one of them waits for a slot" '[[ -n $WAITING ]]'
sleep 3  # staged by now (screen ~1 s)
http "cancel the waiting job" 200 DELETE "/v1/jobs/$WAITING"
json_check "cancelled while queued" 'v["state"] == "cancelled" and v["cancelled_while"] == "queued"'
for id in "${LONG[@]}"; do [[ $id != "$WAITING" ]] && http "cancel running $id" 200 DELETE "/v1/jobs/$id"; done
sleep 2
check "the waiting job never started" '[[ $(job_field $WAITING started_at_ms) == None ]]'
http "healthz after the cancels" 200 GET /healthz
json_check "both slots free again" 'v["running"] == 0 and v["queue_depth"] == 0'

# Staged jobs survive a stop: while two 10 s jobs hold the slots, two more are staged;
# SIGTERM lets the running ones finish and leaves the staged ones queued in the store.
batch "$TMP/hold.json" slow:10 slow:10.1
http "two holders" 202 POST /v1/batch "$TMP/hold.json"
batch "$TMP/after.json" slow:0.1 slow:0.2
for _ in $(seq 240); do
  [[ $(curl -s --max-time 2 "$BASE/healthz" | python3 -c "import json,sys; print(json.load(sys.stdin)['running'])") == 2 ]] && break
  sleep 0.25
done
http "two jobs behind them" 202 POST /v1/batch "$TMP/after.json"
mapfile -t AFTER < <(ids)
sleep 3
check "both still waiting" '[[ $(job_field ${AFTER[0]} state) == queued && $(job_field ${AFTER[1]} state) == queued ]]'
stop_server "SIGTERM with staged jobs"
start_server
# 2 staged jobs resume; on a loaded machine the holders may outlive the 20 s grace and are
# interrupted, so they resume too (4).
RESUMED=$(grep -oE "resuming [0-9]+ queued job" "$TMP/server.log" | tail -1 | grep -oE "[0-9]+")
check "the staged jobs are resumed (${RESUMED:-none} resumed)" '[[ -n $RESUMED && $RESUMED -ge 2 ]]'

for id in "${AFTER[@]}"; do wait_state "$id" done 120 && ok "staged job $id done after the restart" || bad "job $id lost"; done
stop_server "final SIGTERM"
finish
