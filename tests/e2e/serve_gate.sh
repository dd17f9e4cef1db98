#!/usr/bin/env bash
# kz serve --gpu-concurrency (docs/throughput.md), on the CPU: the --cpu-slots share one GPU
# gate, as the K slots of one GPU do. Three slots, a gate of two: two slow jobs hold its
# shared stages while the third waits for it; that wait is not counted against the third's
# wall limit (--timeout is shorter than its wait plus its run, and it is still correct), the
# verdicts carry child.gate_held_s, and /metrics shows the gate (kz_gate_*{device="cpu"}).
# A sample that hangs while holding the gate is killed at its own limit and changes no other
# sample's verdict.
KZ=$1
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/serve_lib.sh"
CACHE_DIR="$TMP/cache"
SERVE_FLAGS=(--cpu-slots 3 --gpu-concurrency 2 --build-threads 3 --timeout 24 --wait-timeout 120)
check() { if eval "$2"; then ok "$1"; else bad "$1 ($2)"; fi; }
verdict_field() {  # ID PYEXPR(v = the verdict)
  curl -s --max-time 5 "$BASE/v1/jobs/$1" | python3 -c "import json,sys; v=json.load(sys.stdin)['verdict']; print($2)"
}

start_server
http "healthz" 200 GET /healthz
json_check "three slots" 'v["slots"] == 3'
# Each sleeps S s in its first forward, inside its shared hold: the third waits >= ~S s.
batch "$TMP/slow.json" slow:14 slow:14.1 slow:14.2
http "three slow jobs" 202 POST /v1/batch "$TMP/slow.json"
mapfile -t JOBS < <(ids)
for id in "${JOBS[@]}"; do wait_state "$id" done 240 && ok "job $id done" || bad "job $id not done in 240 s"; done
for id in "${JOBS[@]}"; do
  check "job $id correct" '[[ $(verdict_field $id "v[\"status\"]") == correct ]]'
done
HELD=$(for id in "${JOBS[@]}"; do verdict_field "$id" 'v["child"].get("gate_held_s", -1)'; done | sort -g | tail -1)
WALL=$(for id in "${JOBS[@]}"; do verdict_field "$id" 'v["child"]["wall_s"]'; done | sort -g | tail -1)
echo "     longest gate hold ${HELD} s, longest child wall ${WALL} s (limit 24 s)"
check "one job waited for the gate (>= 8 s held)" 'python3 -c "import sys; sys.exit(not float(\"$HELD\") >= 8)"'
check "its wall time passed the limit; the hold was not counted" 'python3 -c "import sys; sys.exit(not float(\"$WALL\") > 24)"'
# A hanging sample among correct ones, sharing the gate.
batch "$TMP/hang.json" slow:3 slow:1000 slow:3.1
http "a hanging sample between two correct ones" 202 POST /v1/batch "$TMP/hang.json"
mapfile -t HANG < <(ids)
for id in "${HANG[@]}"; do wait_state "$id" done 240 || bad "job $id not done in 240 s"; done
check "the hanging one is killed at its limit" '[[ $(verdict_field ${HANG[1]} "v[\"status\"]") == timeout ]]'
check "the others are correct" '[[ $(verdict_field ${HANG[0]} "v[\"status\"]") == correct && $(verdict_field ${HANG[2]} "v[\"status\"]") == correct ]]'
http "metrics" 200 GET /metrics
metric() { grep -E "^$1 " "$OUT_FILE" | awk '{print $2}'; }
check "gate: two shared holders at most" '[[ $(metric "kz_gate_max_shared\{device=\"cpu\"\}") == 2 ]]'
check "gate: idle now" '[[ $(metric "kz_gate_shared_holders\{device=\"cpu\"\}") == 0 && $(metric "kz_gate_queued\{device=\"cpu\"\}") == 0 ]]'
check "gate: held seconds counted" 'python3 -c "import sys; sys.exit(not float(\"$(metric "kz_gate_held_seconds_total\{device=\"cpu\"\}")\") >= 8)"'
stop_server "SIGTERM"
finish
