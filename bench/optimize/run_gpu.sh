#!/usr/bin/env bash
# kz optimize demonstration (docs/optimize.md): on each of 5 small level-1-style tasks, the
# search starts from a deliberately naive seed kernel and, within a fixed GPU-second budget,
# verifies what a SCRIPTED STAND-IN proposer (standin_server.py, not a model) sends: two
# faster correct kernels, two planted cheats, one wrong kernel, then a duplicate. Prints per
# task the seed's and the best speedup, the cheats planted vs accepted, the ledger's
# GPU-seconds against the records' sum and the stop reason (summarize.py).
#
# Run from anywhere with build/bin/kz built (cmake -S . -B build -G Ninja && ninja -C build kz):
#
#   OUT=/path/to/results bench/optimize/run_gpu.sh          # GPU host (the H200)
#   CPU=1 TASKS="relu row_sum" bench/optimize/run_gpu.sh     # CPU check: --cpu, small sizes
#
# Environment (all optional):
#   OUT      results directory (default: a new temporary directory); one run directory per
#            task ($OUT/<task>), $OUT/experience.db (shared by the tasks), $OUT/logs/,
#            $OUT/summary.md. Call again with the same OUT to finish: a task whose run has a
#            stop_reason is skipped, one cut short is continued with kz optimize --resume.
#   KZ       kz binary (default build/bin/kz)
#   TASKS    tasks to run, space-separated (default: relu scale_shift softmax row_sum gelu_tanh)
#   GPU_S    --budget-gpu-s per task (default 240)
#   ITERS    --iterations per task (default 6: the stand-in's whole schedule)
#   CPU=1    verify on the CPU (--cpu) with the tasks' small sizes (KZ_DEMO_SMALL=1); no timing,
#            so every speedup is 0
#   BUDGET_S seconds this call may take (0: no limit, the default). A task still running then is
#            killed (its run directory stays consistent: kz optimize is kill-safe) and the
#            script exits 3: call again with the same OUT to resume it.
#   KZ_ARGS  extra kz optimize arguments, word-split (e.g. "--timeout 60 --sandbox off")
#   PY       Python for the stand-in server and summarize.py (stdlib only; default python3)
#
# Exit: 0 every selected task finished and no cheat or wrong kernel was accepted and every
# ledger matches its records; 1 a check or a kz optimize run failed; 2 usage; 3 not finished
# within BUDGET_S (call again).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
ROOT=$PWD
KZ=${KZ:-build/bin/kz}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/kz-optimize-demo.XXXXXX")}
TASKS=${TASKS:-relu scale_shift softmax row_sum gelu_tanh}
GPU_S=${GPU_S:-240}
ITERS=${ITERS:-6}
CPU=${CPU:-0}
BUDGET=${BUDGET_S:-0}
PY=${PY:-python3}
HERE=bench/optimize
START=$(date +%s)
[[ -x $KZ ]] || { echo "run_gpu: $KZ not found (build it: cmake -S . -B build -G Ninja && ninja -C build kz)" >&2; exit 2; }
mkdir -p "$OUT/logs" || exit 2
OUT=$(cd "$OUT" && pwd)
EXTRA=()
if [[ $CPU == 1 ]]; then
  EXTRA+=(--cpu)
  export KZ_DEMO_SMALL=1
fi
read -r -a USER_ARGS <<< "${KZ_ARGS:-}"
note() { echo "run_gpu: $*" | tee -a "$OUT/logs/steps.log" >&2; }

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git -C "$ROOT" rev-parse HEAD 2>/dev/null) $(git -C "$ROOT" status --porcelain 2>/dev/null | wc -l) changed files"
  echo "kz: $("$KZ" --version 2>&1 | head -1)"
  echo "settings: TASKS=$TASKS GPU_S=$GPU_S ITERS=$ITERS CPU=$CPU KZ_ARGS=${KZ_ARGS:-}"
  command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
} >> "$OUT/logs/env.txt" 2>&1

SERVER=""
stop_server() {
  if [[ -n $SERVER ]]; then kill "$SERVER" 2> /dev/null; wait "$SERVER" 2> /dev/null; SERVER=""; fi
}
trap stop_server EXIT

start_server() {  # start_server TASK: the stand-in at $URL, its requests in $OUT/logs/TASK.requests
  local port_file=$OUT/logs/$1.port
  rm -f "$port_file"
  "$PY" "$HERE/standin_server.py" "$port_file" --log "$OUT/logs/$1.requests" > "$OUT/logs/$1.server.log" 2>&1 &
  SERVER=$!
  for _ in $(seq 100); do [[ -s $port_file ]] && break; sleep 0.1; done
  [[ -s $port_file ]] || { note "the stand-in server did not start (see $OUT/logs/$1.server.log)"; return 1; }
  URL="http://127.0.0.1:$(cat "$port_file")/v1"
}

finished() {  # finished RUN: its state.json has a stop_reason
  [[ -f $1/state.json ]] && "$PY" -c 'import json, sys; sys.exit(not json.load(open(sys.argv[1])).get("stop_reason"))' "$1/state.json"
}

FAILED=0
UNFINISHED=0
for t in $TASKS; do
  task=$HERE/tasks/$t.py
  [[ -f $task ]] || { note "no task $task"; exit 2; }
  run=$OUT/$t
  if finished "$run"; then note "$t: already finished in $run, skipped"; continue; fi
  limit=()
  if [[ $BUDGET != 0 ]]; then
    left=$(( BUDGET - ($(date +%s) - START) ))
    if (( left < 30 )); then note "$t: not started, BUDGET_S spent"; UNFINISHED=1; continue; fi
    limit=(timeout -s KILL "$left")
  fi
  start_server "$t" || { FAILED=1; continue; }
  if [[ -f $run/run.json ]]; then
    note "$t: resuming $run"
    cmd=("$KZ" optimize --resume "$run" --endpoint "$URL")
  else
    note "$t: kz optimize, seed $HERE/candidates/$t/seed.py, $ITERS iterations, $GPU_S GPU-s"
    cmd=("$KZ" optimize --task "$task" --initial "$HERE/candidates/$t/seed.py" --endpoint "$URL"
         --model standin --budget-tokens 200000 --budget-gpu-s "$GPU_S" --iterations "$ITERS"
         --experience "$OUT/experience.db" --out "$run" "${EXTRA[@]}" "${USER_ARGS[@]}")
  fi
  t0=$(date +%s)
  "${limit[@]}" "${cmd[@]}" >> "$OUT/logs/$t.log" 2>&1
  rc=$?
  stop_server
  note "$t: exit $rc after $(( $(date +%s) - t0 )) s (log: $OUT/logs/$t.log)"
  if [[ $rc == 137 && $BUDGET != 0 ]]; then
    note "$t: killed at BUDGET_S; call again with OUT=$OUT to resume"
    UNFINISHED=1
  elif [[ $rc != 0 ]]; then
    tail -5 "$OUT/logs/$t.log" >&2
    FAILED=1
  fi
done

echo
"$PY" "$HERE/summarize.py" "$OUT" --md "$OUT/summary.md" --check
check=$?
note "results in $OUT (summary.md, logs/)"
if [[ $FAILED != 0 || $check == 1 ]]; then exit 1; fi
if [[ $UNFINISHED != 0 ]]; then exit 3; fi
[[ $check == 0 ]] || exit 1
exit 0
