#!/usr/bin/env bash
# kz worker end to end (docs/queue.md), loopback only: a real redis-server (AOF,
# appendfsync always) on a free port in a temp dir, 3 `kz worker --cpu` processes, 500 jobs
# enqueued through kz_queue_tool (most are cheats the static screen rejects, some real
# Triton runs under the interpreter), one worker kill -9'ed in the middle of a real job,
# redis-server killed and restarted once mid-run on the same data dir. Asserts that every
# job's verdict reached the front exactly once (lost 0, duplicates 0) with the right
# status, that the killed worker's job was reclaimed, that the queue ends empty, and that
# SIGTERM stops a worker with exit 0. Prints the throughput. Every wait is bounded.
# Usage: worker_redis.sh KZ KZ_QUEUE_TOOL
KZ=$1
TOOL=$2
source "$(dirname "$0")/lib.sh"
TMP=$(mktemp -d)
WORKERS=()
COLLECTOR=""
cleanup() {
  for p in "${WORKERS[@]}" $COLLECTOR $REDIS; do kill -KILL "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT
source "$(dirname "$0")/redis_lib.sh"
REAL=24 CHEATS=476 TOTAL=500
ok() { PASSES=$((PASSES + 1)); echo "ok   $1"; }
bad() { FAILS=$((FAILS + 1)); echo "FAIL $1"; }
start_worker() {  # start_worker N
  "$KZ" worker --cpu --queue "$URL" --name "w$1" --reclaim-after 5 --timeout 120 --cache-dir "$TMP/cache" \
    >"$TMP/w$1.log" 2>&1 &
  WORKERS[$1]=$!
}
delivered() { [[ -f $TMP/out.jsonl ]] && wc -l <"$TMP/out.jsonl" || echo 0; }

expect_exit 0 "kz worker --help" -- "$KZ" worker --help
grep -q -- "--reclaim-after" "$OUT_FILE" && ok "help lists --reclaim-after" || bad "help lacks --reclaim-after"
expect_exit 2 "kz worker with a bad URL" -- "$KZ" worker --queue http://127.0.0.1:1
err_contains "bad URL reason" "must start with redis://"

start_redis
for i in 1 2 3; do start_worker $i; done
T=examples/tasks C=examples/candidates K=tests/corpus
START_NS=$(date +%s%N)
"$TOOL" collect --queue "$URL" --expect $TOTAL --out "$TMP/out.jsonl" --timeout 480 >"$TMP/collect.out" 2>"$TMP/collect.log" &
COLLECTOR=$!
"$TOOL" enqueue --queue "$URL" --id-prefix real --count $REAL \
  $T/relu.py $C/relu_triton_ok.py $T/relu.py $C/relu_triton_wrong.py >"$TMP/enqueue.out" 2>&1
"$TOOL" enqueue --queue "$URL" --id-prefix cheat --count $CHEATS \
  $K/tasks/layernorm.py $K/cheats/layernorm_pure_torch.py $K/tasks/silu.py $K/cheats/silu_thread_later_triton.py \
  $K/tasks/softmax.py $K/cheats/softmax_identity_cache_triton.py $K/tasks/row_sum.py $K/cheats/row_sum_tensor_subclass_triton.py \
  $K/tasks/matmul.py $K/cheats/matmul_allclose_patch_triton.py $K/tasks/silu.py $K/cheats/silu_environ_write_triton.py \
  >>"$TMP/enqueue.out" 2>&1
grep -q "enqueued=$REAL duplicates=0" "$TMP/enqueue.out" && grep -q "enqueued=$CHEATS duplicates=0" "$TMP/enqueue.out" &&
  ok "$TOTAL jobs enqueued" || { bad "enqueue"; cat "$TMP/enqueue.out"; }
"$TOOL" enqueue --queue "$URL" --id-prefix real --count 3 $T/relu.py $C/relu_triton_ok.py >"$OUT_FILE" 2>&1
grep -q "enqueued=0 duplicates=3" "$OUT_FILE" && ok "re-enqueue of known ids adds nothing" || bad "re-enqueue: $(cat "$OUT_FILE")"

# kill -9 worker 1 in the middle of a real job (one it claimed and has not published).
KILLED_JOB=""
for _ in $(seq 600); do
  KILLED_JOB=$(grep -o 'event=claimed job=real-[0-9]*' "$TMP/w1.log" | tail -1 | cut -d= -f3)
  [[ -n $KILLED_JOB ]] && ! grep -q "event=verified job=$KILLED_JOB " "$TMP/w1.log" && break
  KILLED_JOB=""; sleep 0.1
done
sleep 0.5
if [[ -n $KILLED_JOB ]] && ! grep -q "event=verified job=$KILLED_JOB " "$TMP/w1.log"; then
  kill -KILL "${WORKERS[1]}"; wait "${WORKERS[1]}" 2>/dev/null; unset 'WORKERS[1]'
  ok "worker w1 kill -9'ed while running $KILLED_JOB"
else bad "w1 was never caught in the middle of a real job"; tail -5 "$TMP/w1.log"; KILLED_JOB=""; fi

# kill -9 and restart redis-server once, mid-run.
for _ in $(seq 1200); do (( $(delivered) >= 150 )) && break; sleep 0.1; done
BEFORE=$(delivered)
kill -KILL "$REDIS"; wait "$REDIS" 2>/dev/null
sleep 1
start_redis
ok "redis-server killed and restarted after $BEFORE of $TOTAL verdicts"

for _ in $(seq 2500); do kill -0 "$COLLECTOR" 2>/dev/null || break; sleep 0.1; done
wait "$COLLECTOR"; RC=$?; COLLECTOR=""
ELAPSED_MS=$(( ($(date +%s%N) - START_NS) / 1000000 ))
cat "$TMP/collect.out"
[[ $RC -eq 0 ]] && ok "collector got $TOTAL distinct verdicts, no duplicates" || { bad "collector exit $RC"; tail -5 "$TMP/collect.log"; }
python3 - "$TMP/out.jsonl" "$TOTAL" "$KILLED_JOB" <<'PY' && ok "lost=0 duplicates=0, statuses as expected" || bad "verdict check"
import collections, json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
n = int(sys.argv[2])
ids = collections.Counter(r["id"] for r in rows)
lost, dups = n - len(ids), sum(c - 1 for c in ids.values())
wrong = [r for r in rows if r["state"] != "done" or r["status"] != (
    "rejected" if r["id"].startswith("cheat") else "correct" if int(r["id"].split("-")[1]) % 2 == 0 else "incorrect")]
killed = [r for r in rows if r["id"] == sys.argv[3]]
print(f"jobs={n} delivered={len(rows)} lost={lost} duplicates={dups} wrong_status={len(wrong)} "
      f"killed_job={sys.argv[3]} finished_by={[r['worker'] for r in killed]}")
for r in wrong[:5]: print("  unexpected:", r)
real = [r for r in rows if r["id"].startswith("real")]
warm = sum(r.get("prestarted", False) for r in real)
print(f"real runs in a child started ahead (torch imported): {warm} of {len(real)}")
sys.exit(0 if lost == 0 and dups == 0 and not wrong and (not sys.argv[3] or killed[0]["worker"] != "w1")
         and warm >= len(real) // 2 else 1)
PY
echo "throughput: $TOTAL jobs in $((ELAPSED_MS / 1000)).$(( ELAPSED_MS % 1000 / 100 )) s = $(python3 -c "print(f'{$TOTAL * 1000 / $ELAPSED_MS:.1f}')") jobs/s (3 workers, 2 cores, $REAL real runs, 1 worker killed, 1 Redis restart)"
grep -h "event=claimed job=$KILLED_JOB .*reclaimed=1" "$TMP"/w[23].log | grep -q . &&
  ok "the killed worker's job was reclaimed" || bad "no reclaim of $KILLED_JOB"
[[ $(rcli xlen kz:jobs) == 0 && $(rcli xlen kz:verdicts) == 0 ]] && ok "streams empty" || bad "streams not empty"
[[ $(rcli xpending kz:jobs workers | head -1) == 0 && $(rcli xpending kz:verdicts front | head -1) == 0 ]] &&
  ok "nothing pending" || bad "entries still pending"
echo "info: $(cat "$TMP"/w[23].log | grep -c duplicate_dropped) verdict(s) of re-run jobs dropped by Complete," \
  "$(cat "$TMP"/w[23].log | grep -c 'redis: lost') lost-connection line(s) in the workers' logs"

# stop_worker N: SIGTERM; expects exit 0 within 10 s and the stop event in its log.
stop_worker() {
  kill -TERM "${WORKERS[$1]}"
  for _ in $(seq 100); do kill -0 "${WORKERS[$1]}" 2>/dev/null || break; sleep 0.1; done
  wait "${WORKERS[$1]}"; local rc=$?; unset "WORKERS[$1]"
  [[ $rc -eq 0 ]] && grep -q "event=stop" "$TMP/w$1.log" && ok "w$1: SIGTERM -> exit 0" || { bad "w$1: exit $rc"; tail -5 "$TMP/w$1.log"; }
}

# SIGTERM in the middle of a job: that worker exits 0 without acking it, the other reclaims it.
"$TOOL" collect --queue "$URL" --expect 1 --out "$TMP/late.jsonl" --timeout 90 >"$TMP/late.out" 2>&1 &
COLLECTOR=$!
"$TOOL" enqueue --queue "$URL" --id-prefix late --count 1 $T/relu.py $C/relu_triton_ok.py >/dev/null 2>&1
STOPPED=""
for _ in $(seq 300); do
  for i in 2 3; do grep -q "event=claimed job=late-0 " "$TMP/w$i.log" && STOPPED=$i; done
  [[ -n $STOPPED ]] && break; sleep 0.1
done
if [[ -n $STOPPED ]]; then
  OTHER=$((5 - STOPPED))
  stop_worker "$STOPPED"
  grep -q "event=abandoned job=late-0 .*reason=shutdown" "$TMP/w$STOPPED.log" && ok "w$STOPPED abandoned late-0 (not acked)" ||
    { bad "w$STOPPED did not abandon late-0"; tail -5 "$TMP/w$STOPPED.log"; }
  wait "$COLLECTOR"; RC=$?; COLLECTOR=""
  [[ $RC -eq 0 ]] && grep -q "\"worker\":\"w$OTHER\"" "$TMP/late.jsonl" && ok "late-0 reclaimed and finished by w$OTHER" ||
    { bad "late-0 not finished by w$OTHER"; cat "$TMP/late.out"; }
  stop_worker "$OTHER"
else bad "no worker claimed late-0"; fi
finish
