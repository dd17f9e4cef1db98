#!/usr/bin/env bash
# kz optimize with the real local model (llama.cpp + SmolLM2-135M, $KZ_TEST_LLM_URL, started by
# scripts/test.sh) and the CPU verifier: a 3-iteration run on a small task finishes within its
# budget; the same run killed with SIGKILL after its first iteration and resumed ends with the
# same records (the finished iteration answered from the transcript, not asked again); both
# replay byte for byte from their transcripts and verdicts.
KZ=$1
source "$(dirname "$0")/lib.sh"
require_llm_url
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
OPT=("$KZ" optimize --task tests/bench_suite/level1/1_ReLU.py --model smollm2 --endpoint "$URL" --cpu
     --budget-tokens 6000 --budget-gpu-s 300 --iterations 3 --max-tokens 256 --seed 7 --experience $W/experience.db)
expect_exit 0 "a 3-iteration run with the real model ends" -- "${OPT[@]}" --out $W/a
err_contains "  ... and says why it stopped" "stopped ("
check "  ... within its budget, every iteration recorded" python3 - $W/a <<'PY'
import json, sys
d = sys.argv[1]
st = json.load(open(d + "/state.json"))
spent, limits = st["budget"]["spent"], st["budget"]["limits"]
rs = [json.loads(l) for l in open(d + "/candidates.jsonl")]
its = [r for r in rs if r["iteration"] >= 0]
print(spent, [(r["id"], r["outcome"], r.get("status", "")) for r in rs], st["stop_reason"])
ok = all(spent[k] <= limits[k] for k in spent) and spent["tokens"] > 0
ok &= (len(its) == 3 and st["stop_reason"] == "iterations") or st["stop_reason"].startswith("budget")
sys.exit(not ok)
PY
"${OPT[@]}" --out $W/k > $W/k.log 2>&1 & KPID=$!
for _ in $(seq 1800); do [[ $(grep -c '"id":"c' $W/k/candidates.jsonl 2>/dev/null) -ge 1 ]] && break; sleep 0.1; done
kill -9 $KPID; wait $KPID 2>/dev/null
cp $W/k/candidates.jsonl $W/k.before
cp $W/k/transcript.jsonl $W/k.transcript
expect_exit 0 "killed after its first iteration, --resume ends the run" -- "$KZ" optimize --resume $W/k --endpoint "$URL"
check "  ... the records written before the kill are unchanged" python3 - $W/k.before $W/k/candidates.jsonl <<'PY'
import sys
a, b = open(sys.argv[1]).read().splitlines(), open(sys.argv[2]).read().splitlines()
sys.exit(not (len(a) >= 2 and b[:len(a)] == a))
PY
check "  ... the finished request was not asked again" python3 - $W/k.transcript $W/k/transcript.jsonl <<'PY'
import json, sys
before = [json.loads(l)["key"] for l in open(sys.argv[1])]
after = [json.loads(l)["key"] for l in open(sys.argv[2])]
sys.exit(not (after[:len(before)] == before and len(after) == len(set(after))))
PY
for run in a k; do
  expect_exit 0 "--replay of run $run" -- "$KZ" optimize --replay $W/$run --out $W/$run.replay
  for f in candidates.jsonl state.json lineage.json curve.tsv verdicts.jsonl transcript.jsonl; do
    same() { [[ ! -e $1 && ! -e $2 ]] || cmp -s "$1" "$2"; }  # verdicts.jsonl: absent when nothing was verified
    check "  ... $f identical" same $W/$run/$f $W/$run.replay/$f
  done
done
finish
