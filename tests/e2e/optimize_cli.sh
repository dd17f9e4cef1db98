#!/usr/bin/env bash
# kz optimize end to end on the CPU verifier with a scripted stand-in model
# (fake_llm_server.py: seed % 3 == 0 the correct ReLU kernel, 1 a wrong one, 2 no code):
# a 5-iteration run (verified correct, verified incorrect, no code, the fix of the wrong one,
# duplicates never verified again), the ledger's totals against the records, a kill -9 and
# --resume to the same result without asking a finished iteration twice, --replay byte for
# byte, and the bad inputs: a zero budget, a task that cannot be verified (refused before any
# request), a corrupted run directory, a second run on a busy directory, a new run over an
# existing one, an endpoint that does not answer (iterations spent, the run goes on); --ncu on
# a host without ncu (the fallback line in the record and the prompts).
KZ=$1
source "$(dirname "$0")/lib.sh"
W=$(mktemp -d)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$W"' EXIT
TASK=tests/bench_suite/level1/1_ReLU.py
serve() {  # serve NAME DELAY: a fake server at $URL; requests in $W/NAME.log
  python3 tests/e2e/fake_llm_server.py "$W/$1.port" "$W/$1.log" "$2" >/dev/null 2>&1 & PIDS+=($!)
  for _ in $(seq 100); do [[ -s "$W/$1.port" ]] && break; sleep 0.1; done
  URL="http://127.0.0.1:$(cat "$W/$1.port")/v1"
}
serve fast 0; U=$URL
BASE=("$KZ" optimize --model fake --cpu --experience $W/experience.db)
OPT=("${BASE[@]}" --task $TASK --iterations 5 --budget-tokens 20000 --budget-gpu-s 300)
py() { python3 - "$@"; }

# A whole run.
expect_exit 0 "a 5-iteration run ends" -- "${OPT[@]}" --endpoint "$U" --out $W/a
check "outcomes: correct, incorrect, no code, then duplicates" py $W/a <<'PY'
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1] + "/candidates.jsonl")]
got = [(r["id"], r["outcome"], r.get("status", "")) for r in rs]
want = [("task", "task_check", "correct"), ("c0", "verified", "correct"), ("c1", "verified", "incorrect"),
        ("c2", "no_code", ""), ("c3", "duplicate", ""), ("c4", "duplicate", "")]
print(got); sys.exit(got != want)
PY
check "c3 was the fix of the refused c1" py $W/a <<'PY'
import json, sys
rs = {json.loads(l)["id"]: json.loads(l) for l in open(sys.argv[1] + "/candidates.jsonl")}
sys.exit(not (rs["c3"]["mutation"] == "fix" and rs["c3"]["parent"] == "c1" and rs["c2"]["mutation"] == "rewrite"))
PY
check "best.py is the correct kernel" cmp -s $W/a/best.py tests/bench_suite/kernels/relu_ok.py
check "the ledger's totals equal the records' (tokens, requests, seconds)" \
  python3 tests/e2e/optimize_ledger.py $W/a --requests 5
check "every prompt and reply recorded" test "$(wc -l < $W/a/transcript.jsonl)" -eq 5
check "lineage, curve and plot written" test -s $W/a/lineage.json -a -s $W/a/curve.tsv -a -s $W/a/curve.svg

# --replay: no model, no verifier; the same files byte for byte.
expect_exit 0 "--replay redoes the run from its transcript and verdicts" -- "$KZ" optimize --replay $W/a --out $W/r
for f in candidates.jsonl state.json lineage.json curve.tsv best.py best_verdict.json task_check.json; do
  check "replay: $f identical" cmp -s $W/a/$f $W/r/$f
done

# --ncu where the host has no ncu (issue 21): the kept candidate's record and the prompts that
# use it as a parent say so; nothing is charged for it; a replay gives the same files.
expect_exit 0 "--ncu without ncu: the run goes on" -- env KZ_NCU=/nonexistent/ncu "${OPT[@]}" --endpoint "$U" --out $W/n --ncu
check "--ncu: the kept candidate's profile names the fallback, the prompts carry it" py $W/n <<'PY'
import json, sys
d = sys.argv[1]
rs = {r["id"]: r for r in map(json.loads, open(d + "/candidates.jsonl"))}
prof = rs["c0"].get("profile")
print(prof)
prompts = [json.dumps(json.loads(l)) for l in open(d + "/transcript.jsonl")]
spent = json.load(open(d + "/state.json"))["budget"]["spent"]
tot = sum(r.get("spent", {}).get("gpu_s", 0) for r in rs.values())
sys.exit(not (prof == {"available": False, "reason": "ncu: not installed", "version": "", "seconds": 0.0, "kernels": []}
              and "profile" not in rs["c1"] and any("ncu: not installed" in p for p in prompts)
              and json.load(open(d + "/run.json"))["ncu"] is True and abs(spent["gpu_s"] - tot) < 1e-6))
PY
expect_exit 0 "--replay of an --ncu run" -- "$KZ" optimize --replay $W/n --out $W/nr
check "replay of an --ncu run: candidates.jsonl identical" cmp -s $W/n/candidates.jsonl $W/nr/candidates.jsonl

# kill -9 mid-run, then --resume: the same outcomes, no finished iteration asked twice.
serve slow 1.5; U2=$URL
"${OPT[@]}" --endpoint "$U2" --out $W/k > $W/k.log 2>&1 & KPID=$!
for _ in $(seq 600); do
  [[ $(grep -c '"id":"c' $W/k/candidates.jsonl 2>/dev/null) -ge 2 ]] && break; sleep 0.1
done
kill -9 $KPID; wait $KPID 2>/dev/null
before=$(grep -c '"id":"c' $W/k/candidates.jsonl)
check "killed after $before iterations" test "$before" -ge 2 -a "$before" -lt 5
expect_exit 0 "--resume finishes the run" -- "$KZ" optimize --resume $W/k --endpoint "$U2"
err_contains "it says where it resumes" "resuming at iteration"
check "resumed run: the same outcomes and code as the whole run" py $W/a $W/k <<'PY'
import json, sys
key = lambda d: [(r["id"], r["outcome"], r.get("status", ""), r.get("code_xxh", "")) for r in map(json.loads, open(d + "/candidates.jsonl"))]
sys.exit(key(sys.argv[1]) != key(sys.argv[2]))
PY
check "no seed asked of the model more than twice, finished ones once" py $W/slow.log $before <<'PY'
import collections, sys
c = collections.Counter(l.split()[1] for l in open(sys.argv[1]))
done = int(sys.argv[2])
print(dict(c)); sys.exit(not (all(c[str(s)] == 1 for s in range(done)) and max(c.values()) <= 2 and len(c) == 5))
PY

check "replay of the resumed run: records, state, verdicts and transcript identical" bash -c "
  '$KZ' optimize --replay $W/k --out $W/kr >/dev/null 2>&1 &&
  for f in candidates.jsonl state.json verdicts.jsonl transcript.jsonl lineage.json; do cmp -s $W/k/\$f $W/kr/\$f || exit 1; done"

# A GPU-second budget that runs out: the run stops before a request it could not verify,
# the ledger equals the records, and --resume (settings from run.json: no --cpu given) stops again.
# 8 s: the task check (1-5 s) and at most two candidates (1-3 s each) fit, then less than the
# 5 s a verification needs is left; after c1 the stand-in only repeats itself (duplicates cost
# nothing), so a larger budget would end by iterations instead.
expect_exit 0 "a run stopped by its GPU-second budget ends" -- "${BASE[@]}" --task $TASK --iterations 20 \
  --budget-tokens 200000 --budget-gpu-s 8 --endpoint "$U" --out $W/g
ledger_eq() { python3 tests/e2e/optimize_ledger.py "$1" --stopped-by gpu_s; }
check "  ... stopped by gpu_s, the ledger equal to the records, no paid request left unverified" ledger_eq $W/g
cp $W/g/candidates.jsonl $W/g.before
expect_exit 0 "  ... --resume with the settings of run.json" -- "$KZ" optimize --resume $W/g
check "  ... changes nothing" cmp -s $W/g.before $W/g/candidates.jsonl
check "  ... and still balances" ledger_eq $W/g

# Suite mode: every task of a KernelBench-layout suite with the same budget, fast_p reported;
# the same command again continues (finished tasks ask nothing more).
SUITE=("${BASE[@]}" --suite tests/bench_suite --iterations 2 --budget-tokens 20000 --budget-gpu-s 300 --endpoint "$U" --out $W/s)
expect_exit 0 "--suite runs every task" -- "${SUITE[@]}"
check "  ... a run per task and fast_0 = 1 (both tasks solved by the stand-in)" python3 -c "
import json; s = json.load(open('$W/s/suite.json'))
assert [t['task'] for t in s['tasks']] == ['L1_1', 'L2_1'] and s['fast_p']['0'] == 1.0, s"
n=$(wc -l < $W/fast.log)
expect_exit 0 "  ... the same command again" -- "${SUITE[@]}"
check "  ... asks the model nothing more" test "$(wc -l < $W/fast.log)" -eq "$n"

# Corrupted run directories: refused with the file named, nothing rewritten.
corrupt() {  # corrupt NAME SHELL_EDIT: a copy of run a, edited, must be refused
  rm -rf $W/c && cp -r $W/a $W/c && rm -f $W/c/lock && (cd $W/c && eval "$2")
  cp $W/c/candidates.jsonl $W/c.before 2>/dev/null || : > $W/c.before
  expect_exit 2 "a corrupted run directory is refused: $1" -- "$KZ" optimize --resume $W/c --endpoint "$U"
  check "  ... and candidates.jsonl is left as it was" bash -c "[[ ! -e $W/c/candidates.jsonl ]] || cmp -s $W/c.before $W/c/candidates.jsonl"
}
corrupt "state.json missing, records present" "rm state.json"
corrupt "candidates.jsonl missing" "rm candidates.jsonl"
corrupt "a middle record garbled" "sed -i '3s/.*/{\"iteration\": 1, oops/' candidates.jsonl"
corrupt "a record of the wrong type" "sed -i '2s/\"outcome\":\"verified\"/\"outcome\":5/' candidates.jsonl"
corrupt "next_iteration out of range" "sed -i 's/\"next_iteration\": 5/\"next_iteration\": -3/' state.json"

# Bad inputs.
expect_exit 2 "a budget of zero is refused" -- "${BASE[@]}" --task $TASK --endpoint "$U" --out $W/z --budget-tokens 0 \
  --budget-gpu-s 300
err_contains "  ... naming the flag" "--budget-tokens"
expect_exit 2 "a task that cannot be verified is refused" -- "${BASE[@]}" --budget-tokens 20000 --budget-gpu-s 300 --endpoint "$U2" \
  --out $W/t --task examples/tasks/task_no_get_inputs.py
err_contains "  ... saying why, before any request" "the task cannot be verified (no request was sent)"
check "  ... and no request was sent" test ! -e $W/t/transcript.jsonl -o ! -s $W/t/transcript.jsonl
expect_exit 2 "a new run over an existing one is refused" -- "${OPT[@]}" --endpoint "$U" --out $W/a
err_contains "  ... pointing to --resume" "already holds a run"
cp -r $W/a $W/c && echo '{"format": "kz.optimize.state/1", "next_it' > $W/c/state.json
expect_exit 2 "a corrupted run directory is refused, not restarted" -- "$KZ" optimize --resume $W/c --endpoint "$U"
err_contains "  ... naming the file" "state.json"
"${OPT[@]}" --endpoint "$U2" --out $W/busy > /dev/null 2>&1 & BPID=$!
for _ in $(seq 300); do [[ -e $W/busy/lock ]] && break; sleep 0.1; done
expect_exit 2 "a second kz optimize on a busy directory is refused" -- "$KZ" optimize --resume $W/busy --endpoint "$U2"
err_contains "  ... saying it is in use" "in use by another kz optimize"
kill -9 $BPID; wait $BPID 2>/dev/null
expect_exit 0 "an endpoint that does not answer: iterations spent, the run ends" -- "${BASE[@]}" --out $W/d \
  --task $TASK --budget-tokens 20000 --budget-gpu-s 300 \
  --endpoint http://127.0.0.1:9/v1 --iterations 2 --deadline 3
check "  ... both recorded as endpoint errors" test "$(grep -c '"outcome":"endpoint_error"' $W/d/candidates.jsonl)" -eq 2
finish
