#!/usr/bin/env bash
# kz serve --queue end to end, loopback only: a real redis-server (AOF, appendfsync always),
# `kz serve --queue` as the front (SQLite store, HTTP) and 2 `kz worker --cpu` processes, the
# second with two consumers sharing one GPU gate (--gpu-concurrency 2: w2.0 and w2.1).
# 120 jobs through POST /v1/batch (cheats the screen rejects, and real Triton runs under the
# interpreter, correct and wrong); mid-run the front is stopped and restarted (dispatched
# jobs are requeued: Enqueue is idempotent) and redis-server is killed and restarted.
# Asserts every job ends done with its expected status, each verdict stored once, a job
# cancelled while dispatched stays cancelled, and the healthz/metrics of the remote mode.
KZ=$1
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/serve_lib.sh"
source "$(dirname "$0")/redis_lib.sh"
WORKERS=()
stop_all() { for p in "${WORKERS[@]}" $REDIS; do kill -KILL "$p" 2>/dev/null; done; cleanup; }
trap stop_all EXIT
SERVE_FLAGS=(--queue "$URL" --max-batch 200)
CACHE_DIR=$TMP/cache
check() { if eval "$2"; then ok "$1"; else bad "$1 ($2)"; fi; }
start_worker() {  # N [more kz worker options]
  "$KZ" worker --cpu --queue "$URL" --name "w$1" --reclaim-after 5 --timeout 120 --cache-dir "$TMP/cache" "${@:2}" \
    >"$TMP/w$1.log" 2>&1 &
  WORKERS[$1]=$!
}
# The batch: index i is real (relu, correct if i % 2 == 0 else wrong) for i < REAL, else a
# cheat; a comment makes every candidate's content distinct (no deduplication).
REAL=12 TOTAL=120
python3 - "$TMP/batch.json" $REAL $TOTAL <<'PY'
import json, sys
out, real, total = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
task = open("examples/tasks/relu.py").read()
good, wrong = (open(f"examples/candidates/relu_triton_{k}.py").read() for k in ("ok", "wrong"))
cheats = [(open(f"tests/corpus/tasks/{t}.py").read(), open(f"tests/corpus/cheats/{c}.py").read())
          for t, c in [("layernorm", "layernorm_pure_torch"), ("softmax", "softmax_identity_cache_triton"),
                       ("matmul", "matmul_allclose_patch_triton")]]
samples = []
for i in range(total):
    t, c = (task, good if i % 2 == 0 else wrong) if i < real else cheats[i % len(cheats)]
    samples.append({"task": t, "candidate": c + f"\n# sample {i}\n", "backend": "triton"})
json.dump({"samples": samples, "client": "e2e"}, open(out, "w"))
PY

start_redis
start_server
http "healthz" 200 GET /healthz
json_check "remote mode: no local slots" 'v["slots"] == 0'
start_worker 1
start_worker 2 --gpu-concurrency 2
START_NS=$(date +%s%N)
http "batch of $TOTAL" 202 POST /v1/batch "$TMP/batch.json"
mapfile -t IDS < <(python3 -c "import json; [print(j['id']) for j in json.load(open('$OUT_FILE'))['jobs']]")
check "$TOTAL job ids" '(( ${#IDS[@]} == TOTAL ))'
done_count() { python3 - "$TMP/jobs.db" <<'PY'
import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute("select count(*) from jobs where state in ('done','failed')").fetchone()[0])
PY
}
# Cancel a dispatched real job (it is "running": sent to the workers).
CANCEL=${IDS[REAL - 1]}
http "cancel a dispatched job" 200 DELETE "/v1/jobs/$CANCEL"
json_check "cancelled" 'v["state"] == "cancelled"'

for _ in $(seq 600); do (( $(done_count) >= 30 )) && break; sleep 0.1; done
stop_server "front SIGTERM after $(done_count) verdicts"
start_server
grep -q "resuming" "$TMP/server.log" && ok "front resumed its unfinished jobs" || bad "no resume logged"
for _ in $(seq 600); do (( $(done_count) >= 60 )) && break; sleep 0.1; done
kill -KILL "$REDIS"; wait "$REDIS" 2>/dev/null
sleep 1
start_redis
ok "redis-server killed and restarted after $(done_count) verdicts"
for _ in $(seq 2400); do (( $(done_count) >= TOTAL - 1 )) && break; sleep 0.1; done
ELAPSED_MS=$(( ($(date +%s%N) - START_NS) / 1000000 ))
python3 - "$TMP/jobs.db" "$REAL" "$CANCEL" "$TMP/server.log" "${IDS[@]}" <<'PY' && ok "lost=0, one verdict per job, statuses right" || bad "verdicts"
import collections, json, re, sqlite3, sys
db, real, cancel, log, ids = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5:]
rows = {r[0]: r[1:] for r in sqlite3.connect(db).execute("select id, state, verdict from jobs")}
bad = []
for i, jid in enumerate(ids):
    state, verdict = rows[jid]
    want = "cancelled" if jid == cancel else "done"
    status = json.loads(verdict)["status"] if verdict and state == "done" else None
    want_status = None if jid == cancel else ("correct" if i % 2 == 0 else "incorrect") if i < real else "rejected"
    if state != want or status != want_status: bad.append((i, jid, state, status, want_status))
stored = collections.Counter(re.findall(r"serve: job (\w+) (?:done|failed) by worker", open(log).read()))
dups = {k: c for k, c in stored.items() if c > 1}
print(f"     jobs={len(ids)} stored={len(stored)} duplicates={len(dups)} wrong={len(bad)} {bad[:3]}")
sys.exit(0 if not bad and not dups else 1)
PY
echo "     throughput: $TOTAL jobs in $((ELAPSED_MS / 1000)) s through the front (2 workers, 2 cores, $REAL real runs, 1 front restart, 1 Redis restart)"
for c in w2.0 w2.1; do
  grep -q "done by worker $c" "$TMP/server.log" && ok "consumer $c of the two-consumer worker published verdicts" || bad "no verdict from $c"
done
http "metrics" 200 GET /metrics
grep -q 'kz_jobs_done_total{status="rejected"}' "$OUT_FILE" && ok "metrics count remote verdicts" || bad "metrics"
http "healthz at the end" 200 GET /healthz
json_check "nothing waiting" 'v["queue_depth"] == 0'
stop_server "final SIGTERM"
finish
