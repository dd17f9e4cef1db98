#!/usr/bin/env bash
# Issue 6 acceptance on a GPU host: the 20-task suite x 10 samples through kz bench, killed
# (SIGKILL) once verdicts.jsonl has KZ_SUITE_KILL_AT lines, resumed with the same command to
# the end, then the report checked against a hand computation from the stored verdicts
# (check_report.py). Run from the repository root with $OUT set and build/bin/kz built:
#
#   OUT=/path/to/results bench/suite20/run_gpu.sh
#
# Environment (all optional):
#   KZ                     kz binary (default build/bin/kz)
#   KZ_SUITE_ARGS          extra kz bench arguments, word-split (e.g. "-j 16 --timeout 300";
#                          "--cpu --task L1_1 ..." for a CPU-only test)
#   KZ_SUITE_SERVER        verify through a running kz serve at this URL (kz bench --server)
#   KZ_SUITE_SERVE         start a kz serve for the run with these arguments (e.g. "--gpus 0,1"),
#                          its job database under the work directory, and use it; stopped at the end
#   KZ_SUITE_KILL_AT       verdict lines before the deliberate kill (default 80)
#   KZ_SUITE_EXPECT_SCORED scored samples the check expects (default 200; empty: not checked)
#   KZ_SUITE_BUDGET_S      seconds this call may take (0: no limit). When a resumed run is still
#                          going after that, it is killed too (one more kill/resume), the state is
#                          kept in the work directory and the script exits 3: call it again with
#                          the same environment to go on. For a per-command limit of 600 s use ~540.
#   KZ_SUITE_DIR           work directory (default $OUT); set it to a directory that survives
#                          between calls (e.g. out/suite20, ignored by git) when the run needs
#                          more than one call; the results are copied into $OUT at every call.
#   PY                     Python for make_generations.py --check (default .venv/bin/python)
#
# Writes into the work directory (and $OUT): suite20/ (kz bench --out: verdicts.jsonl,
# report.json, report.md, plots, samples/), suite20_gens.jsonl (+ .labels.json),
# suite20_logs/ (generate.log, run<N>.log, kills.tsv, verdicts_at_kill<N>.jsonl, check.log,
# serve.log, steps.log, summary.txt). The summary table is printed last. Exit 0: every check
# passed; 1: a check failed; 2: usage; 3: not finished within KZ_SUITE_BUDGET_S (call again).
set -uo pipefail
: "${OUT:?set OUT to the directory for results and logs}"
cd "$(dirname "$0")/../.." || exit 2
START=$(date +%s.%N)
KZ=${KZ:-build/bin/kz}
KILL_AT=${KZ_SUITE_KILL_AT:-80}
EXPECT_SCORED=${KZ_SUITE_EXPECT_SCORED-200}
BUDGET=${KZ_SUITE_BUDGET_S:-0}
WORK=${KZ_SUITE_DIR:-$OUT}
PY=${PY:-.venv/bin/python}
[[ -x $PY ]] || PY=python3
R=$WORK/suite20
LOGS=$WORK/suite20_logs
G=$WORK/suite20_gens.jsonl
KILLS=$LOGS/kills.tsv  # one line per kill: run number, complete lines, keys to resume, torn tail
mkdir -p "$LOGS" "$OUT"
note() { echo "run_gpu: $*" | tee -a "$LOGS/steps.log" >&2; }
now() { date +%s.%N; }
dt() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
over_budget() { [[ $BUDGET != 0 ]] && awk -v a="$START" -v b="$(now)" -v l="$BUDGET" 'BEGIN { exit !(b - a > l) }'; }
lines() { if [[ -f $R/verdicts.jsonl ]]; then wc -l < "$R/verdicts.jsonl"; else echo 0; fi; }
publish() {  # copy the results into $OUT when working elsewhere
  [[ $(realpath "$WORK") == $(realpath "$OUT") ]] && return
  cp -r "$R" "$LOGS" "$G" "${G%.jsonl}.labels.json" "$OUT"/ 2>/dev/null
}

[[ -x $KZ ]] || { echo "run_gpu: $KZ not found (build it: cmake -S . -B build -G Ninja && ninja -C build kz)" >&2; exit 2; }
if [[ -e $R/verdicts.jsonl && ! -s $KILLS ]]; then
  echo "run_gpu: $R/verdicts.jsonl exists but no kill was recorded: move $R away for a fresh run" >&2
  exit 2
fi
if [[ -s $KILLS && ! -e $R/verdicts.jsonl ]]; then
  echo "run_gpu: $KILLS records a kill but $R/verdicts.jsonl is gone: move $LOGS away for a fresh run" >&2
  exit 2
fi
[[ -s $KILLS ]] || rm -f "$KILLS" "$LOGS/run_seconds.tsv"

# ---- the generations (first call only) --------------------------------------------------
if [[ ! -s $KILLS ]]; then
  note "writing the generations to $G"
  if ! "$PY" bench/suite20/make_generations.py "$G" --check > "$LOGS/generate.log" 2>&1; then
    cat "$LOGS/generate.log" >&2; echo "run_gpu: make_generations.py failed" >&2; exit 1
  fi
fi

# ---- the server (optional) ----------------------------------------------------------------
SERVE_PID=""
stop_serve() {
  if [[ -n $SERVE_PID ]] && kill -0 "$SERVE_PID" 2>/dev/null; then
    kill -TERM "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null; note "kz serve stopped"
  fi
  SERVE_PID=""
}
trap stop_serve EXIT
SERVER=${KZ_SUITE_SERVER:-}
if [[ -n ${KZ_SUITE_SERVE:-} ]]; then
  PORT=${KZ_SUITE_SERVE_PORT:-18471}
  mkdir -p "$WORK/suite20_serve"
  # shellcheck disable=SC2086
  "$KZ" serve --port "$PORT" --db "$WORK/suite20_serve/jobs.db" $KZ_SUITE_SERVE >> "$LOGS/serve.log" 2>&1 &
  SERVE_PID=$!
  SERVER=http://127.0.0.1:$PORT
  for _ in $(seq 120); do
    python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1] + "/healthz", timeout=2)' \
      "$SERVER" > /dev/null 2>&1 && break
    kill -0 "$SERVE_PID" 2>/dev/null || { tail -20 "$LOGS/serve.log" >&2; echo "run_gpu: kz serve exited" >&2; exit 1; }
    sleep 0.5
  done
  note "kz serve $KZ_SUITE_SERVE at $SERVER (pid $SERVE_PID)"
fi

CMD=("$KZ" bench --suite bench/suite20/suite --generations "$G" --out "$R")
[[ -n $SERVER ]] && CMD+=(--server "$SERVER")
# shellcheck disable=SC2206
[[ -n ${KZ_SUITE_ARGS:-} ]] && CMD+=($KZ_SUITE_ARGS)
note "command: ${CMD[*]}"

descendants() {  # every process below $1 (from /proc; no procps needed)
  python3 - "$1" <<'PY'
import os, sys
kids = {}
for d in os.listdir("/proc"):
    if d.isdigit():
        try:
            stat = open(f"/proc/{d}/stat").read()
        except OSError:
            continue
        ppid = int(stat[stat.rfind(")") + 2:].split()[1])
        kids.setdefault(ppid, []).append(int(d))
todo, out = [int(sys.argv[1])], []
while todo:
    for c in kids.get(todo.pop(), []):
        out.append(c); todo.append(c)
print(" ".join(map(str, out)))
PY
}

# kill_run N PID: SIGKILL kz and every process it started (its verification children run in
# process groups of their own and would otherwise go on, on the GPU, after kz is gone), then
# record what the next run must resume: the distinct (task, sample, code) keys of complete
# lines whose status is final (server_error records are verified again; a torn last line is
# cut off and verified again).
kill_run() {
  local n=$1 pid=$2 kids k resumable torn
  kill -STOP "$pid" 2>/dev/null  # frozen: it starts no child while its tree is read
  kids=$(descendants "$pid")
  kill -KILL "$pid" 2>/dev/null
  for k in $kids; do kill -KILL -- "-$k" 2>/dev/null; kill -KILL "$k" 2>/dev/null; done
  wait "$pid" 2>/dev/null
  read -r resumable torn < <(python3 - "$R/verdicts.jsonl" <<'PY'
import json, sys
try:
    data = open(sys.argv[1], "rb").read()
except OSError:
    data = b""
torn = "yes" if data and not data.endswith(b"\n") else "no"
data = data[: data.rfind(b"\n") + 1]
keys = {}
for l in data.splitlines():
    if l.strip():
        r = json.loads(l)
        keys[(r["task"], r["sample"], r["code_xxh"])] = r["status"]
print(sum(1 for s in keys.values() if s != "server_error"), torn)
PY
)
  [[ -f $R/verdicts.jsonl ]] && cp "$R/verdicts.jsonl" "$LOGS/verdicts_at_kill$n.jsonl"
  printf '%s\t%s\t%s\t%s\n' "$n" "$(lines)" "$resumable" "$torn" >> "$KILLS"
  note "run $n killed (with $(echo "$kids" | wc -w) child processes): $(lines) complete verdict lines, $resumable to resume, torn tail: $torn"
}

# ---- the runs ---------------------------------------------------------------------------
while :; do
  N=$(( $( { wc -l < "$KILLS"; } 2>/dev/null || echo 0) + 1 ))
  T0=$(now)
  "${CMD[@]}" > "$LOGS/run$N.log" 2>&1 &
  PID=$!
  if (( N == 1 )); then
    note "run 1: pid $PID; SIGKILL once verdicts.jsonl has >= $KILL_AT lines"
    while kill -0 "$PID" 2>/dev/null && (( $(lines) < KILL_AT )) && ! over_budget; do sleep 0.2; done
  else
    note "run $N (resumes run $((N - 1))): pid $PID"
    while kill -0 "$PID" 2>/dev/null && ! over_budget; do sleep 0.5; done
  fi
  if kill -0 "$PID" 2>/dev/null; then
    kill_run "$N" "$PID"
    echo -e "$N\t$(dt "$T0" "$(now)")" >> "$LOGS/run_seconds.tsv"
    if over_budget; then
      note "KZ_SUITE_BUDGET_S=$BUDGET reached: not finished; call again with the same environment (work dir $WORK)"
      stop_serve
      publish
      exit 3
    fi
    continue
  fi
  wait "$PID"
  RC=$?
  echo -e "$N\t$(dt "$T0" "$(now)")" >> "$LOGS/run_seconds.tsv"
  if (( N == 1 )); then
    echo "run_gpu: run 1 ended (exit $RC) before $KILL_AT verdicts: nothing was killed" >&2
    tail -5 "$LOGS/run1.log" >&2
    exit 1
  fi
  note "run $N exit $RC after $(dt "$T0" "$(now)") s"
  break
done
LAST=$N
stop_serve

# ---- checks -------------------------------------------------------------------------------
SUMMARY=$LOGS/summary.txt
: > "$SUMMARY"
FAILS=0
row() { printf '%-46s %s\n' "$1" "$2" >> "$SUMMARY"; }
verdict() { if [[ $2 == ok ]]; then row "$1" "ok   $3"; else row "$1" "FAIL $3"; FAILS=$((FAILS + 1)); fi; }
{
  echo "kz bench suite20: ${CMD[*]}"
  command -v nvidia-smi > /dev/null && echo "GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | xargs)"
  echo
} >> "$SUMMARY"
while IFS=$'\t' read -r n secs; do
  k=$(awk -F'\t' -v n="$n" '$1 == n { print $2 " complete lines at the kill, torn tail: " $4 }' "$KILLS")
  row "run $n" "${secs} s; ${k:-finished}"
done < "$LOGS/run_seconds.tsv"
if [[ $RC == 0 ]]; then verdict "run $LAST finished" ok "exit 0"; else verdict "run $LAST finished" fail "exit $RC"; fi
while IFS=$'\t' read -r n _ resumable _; do  # every run after a kill resumed exactly what was there
  printed=$(sed -n 's/.* \([0-9]\+\) resumed from verdicts.jsonl.*/\1/p' "$LOGS/run$((n + 1)).log" | head -1)
  if [[ $printed == "$resumable" ]]; then verdict "run $((n + 1)): resumed (printed) == at the kill" ok "$printed"
  else verdict "run $((n + 1)): resumed (printed) == at the kill" fail "printed '$printed', expected $resumable"; fi
done < "$KILLS"
RESUMABLE=$(tail -1 "$KILLS" | cut -f3)
read -r REP_RESUMED REP_VERIFIED REP_WITH < <(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["samples"]
print(s.get("resumed"), s.get("verified"), s.get("with_verdict"))' "$R/report.json" 2>/dev/null || echo "? ? ?")
if [[ $REP_RESUMED == "$RESUMABLE" ]]; then verdict "report samples.resumed == at the last kill" ok "$REP_RESUMED"
else verdict "report samples.resumed == at the last kill" fail "report $REP_RESUMED, expected $RESUMABLE"; fi
if [[ $REP_VERIFIED =~ ^[0-9]+$ && $REP_WITH =~ ^[0-9]+$ && $((REP_WITH - REP_VERIFIED)) == "$RESUMABLE" ]]; then
  verdict "report verified == with_verdict - resumed" ok "$REP_VERIFIED = $REP_WITH - $RESUMABLE"
else verdict "report verified == with_verdict - resumed" fail "verified $REP_VERIFIED, with_verdict $REP_WITH"; fi
if [[ $(lines) == "$REP_WITH" ]]; then verdict "verdicts.jsonl lines == with_verdict" ok "$(lines)"
else verdict "verdicts.jsonl lines == with_verdict" fail "$(lines) lines, with_verdict $REP_WITH"; fi
python3 bench/suite20/check_report.py "$R" ${EXPECT_SCORED:+--expect-scored "$EXPECT_SCORED"} \
  --labels "${G%.jsonl}.labels.json" > "$LOGS/check.log" 2>&1
RC_CHECK=$?
if [[ $RC_CHECK == 0 ]]; then verdict "check_report.py (hand computation)" ok "see suite20_logs/check.log"
else verdict "check_report.py (hand computation)" fail \
  "see $LOGS/check.log: $(grep -m3 -E 'MISMATCH|FAIL' "$LOGS/check.log" | tr '\n' ';')"; fi
{
  echo
  sed -n '/^check  /,/^check_report:/p' "$LOGS/check.log"
  echo
  python3 - "$R/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["samples"]
print(f"samples: total {s['total']}, bad inputs {s['bad_input']}, with verdict {s['with_verdict']}, "
      f"statuses {json.dumps(s['statuses'], sort_keys=True)}")
cols = ["tasks", "samples", "pass@1", "pass@5", "pass@10", "fast_0.0@1", "fast_1.0@1", "fast_1.5@1",
        "fast_1.0@10", "geomean_speedup_correct", "mean_output_tokens"]
short = {"geomean_speedup_correct": "geomean", "mean_output_tokens": "tokens"}
print(f"{'scope':9}" + "".join(f" {short.get(c, c):>11}" for c in cols) + f" {'fast_1.0 s0':>11}")
cell = lambda v: "-" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))
for scope in sorted(r["metrics"], key=lambda x: (x != "overall", x)):
    m = r["metrics"][scope]
    print(f"{scope:9}" + "".join(f" {cell(m.get(c)):>11}" for c in cols)
          + f" {cell(m['fast_p_sample0'].get('fast_1.0')):>11}")
PY
  echo
  if (( FAILS == 0 )); then echo "suite20: ALL CHECKS PASSED"; else echo "suite20: $FAILS CHECK(S) FAILED"; fi
} >> "$SUMMARY"
publish
cat "$SUMMARY"
exit $(( FAILS == 0 ? 0 : 1 ))
