#!/usr/bin/env bash
# kz train teacher from outside (docs/training.md, "Cold start"): pairs of every family made
# and verified by the real verifier on the CPU (Triton under the interpreter), sft.jsonl
# holding exactly the correct ones with the Coder's own prompt; a rerun resumes (nothing
# verified twice); another option set on the same directory and bad options are refused.
KZ=$1
source "$(dirname "$0")/lib.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
T=("$KZ" -q train teacher --out "$TMP/run" --seed 5 --max-elements 8192 --max-cols 512)

expect_exit 0 "teacher makes 6 pairs without verifying" -- "${T[@]}" --pairs 6
[[ $(wc -l <"$TMP/run/pairs.jsonl") -eq 6 && $(ls "$TMP/run/tasks" | wc -l) -eq 6 && ! -e "$TMP/run/sft.jsonl" ]] \
  && { PASSES=$((PASSES + 1)); echo "ok   6 tasks, 6 kernels, no sft.jsonl yet"; } \
  || { FAILS=$((FAILS + 1)); echo "FAIL files after the first run"; ls -R "$TMP/run"; }

# Every family, verified (the four families forced through --families on a second dir).
expect_exit 0 "every family verified correct on the CPU" -- "$KZ" -q train teacher --out "$TMP/all" --seed 2 \
  --pairs 8 --max-elements 8192 --max-cols 512 --families elementwise,broadcast,row_reduce,softmax --verify --timeout 300 -j 2
python3 - "$TMP/all" <<'PY' && { PASSES=$((PASSES + 1)); echo "ok   sft.jsonl: the correct pairs with the Coder's prompt"; } || { FAILS=$((FAILS + 1)); echo "FAIL sft.jsonl"; }
import json, sys
run = sys.argv[1]
pairs = [json.loads(l) for l in open(run + "/pairs.jsonl")]
verdicts = [json.loads(l) for l in open(run + "/verdicts.jsonl")]
sft = [json.loads(l) for l in open(run + "/sft.jsonl")]
assert len(pairs) == 8 and len(verdicts) == 8, (len(pairs), len(verdicts))
assert all(v["status"] == "correct" for v in verdicts), [v for v in verdicts if v["status"] != "correct"]
assert len({p["family"] for p in pairs}) == 4, {p["family"] for p in pairs}
assert [s["id"] for s in sft] == [p["id"] for p in pairs]
for s, p in zip(sft, pairs):
    task = open(p["task"]).read()
    assert task in s["prompt"] and "ModelNew" in s["prompt"], s["prompt"][:200]
    assert s["completion"].startswith("```python\n") and s["completion"].endswith("```")
    assert open(p["candidate"]).read() in s["completion"]
PY
grep -q "kz train teacher: verifying" "$ERR_FILE" && { PASSES=$((PASSES + 1)); echo "ok   the first run verified"; } || { FAILS=$((FAILS + 1)); echo "FAIL no verification reported"; }

# Resume: the same run again verifies nothing.
expect_exit 0 "the same run again" -- "$KZ" -q train teacher --out "$TMP/all" --seed 2 --pairs 8 --max-elements 8192 \
  --max-cols 512 --families elementwise,broadcast,row_reduce,softmax --verify
! grep -q "verifying" "$ERR_FILE" && [[ $(wc -l <"$TMP/all/verdicts.jsonl") -eq 8 ]] \
  && { PASSES=$((PASSES + 1)); echo "ok   resumed: nothing verified twice"; } \
  || { FAILS=$((FAILS + 1)); echo "FAIL resume verified again"; cat "$ERR_FILE"; }

# Refusals.
expect_exit 2 "another seed on the same directory" -- "$KZ" -q train teacher --out "$TMP/run" --seed 6 --max-elements 8192 --max-cols 512 --pairs 6
err_contains "names the stored options" "holds another run's options"
expect_exit 2 "an unknown family" -- "$KZ" -q train teacher --out "$TMP/x" --pairs 2 --families matmul
err_contains "names the family" "unknown family 'matmul'"
expect_exit 2 "sizes that cannot fit" -- "$KZ" -q train teacher --out "$TMP/x" --pairs 2 --max-elements 4
err_contains "names max_elements" "max_elements"
expect_exit 2 "no --pairs" -- "$KZ" -q train teacher --out "$TMP/x"
expect_exit 2 "train without a subcommand" -- "$KZ" -q train

finish
