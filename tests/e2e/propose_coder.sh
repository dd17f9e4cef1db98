#!/usr/bin/env bash
# The Frontier Reward end to end (docs/curriculum.md, "Frontier Reward end to end"):
# kz propose --coder-endpoint URL --coder-samples 2 against a scripted server that is both
# Proposer (fake_proposer_server.py: a module, a duplicate, no code per set) and Coder (a
# ModelNew that is never correct, then a reply without code). Every proposal gets a reward
# line with a reason: the penalty for the refused ones, r(p̂ = 0) = 0 for the valid ones with
# both Coder samples verified; the pool holds the attempts once. A rerun asks nothing,
# verifies nothing and records nothing again; a fresh run replaying the Coder's transcript
# gives the same rewards without a Coder request.
KZ=$1
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/propose_lib.sh"
TMP=$(mktemp -d)
unset KZ_KERNELBENCH
write_three_api_catalog "$TMP/cat3.json"
start_fake_proposer "$TMP"
URL=$FAKE_URL
coder_requests() { grep -c '^coder ' "$TMP/requests.log"; }

L=("$KZ" -q propose --catalog "$TMP/cat3.json" --endpoint "$URL" --model fake --sets 3 -k 2 -n 3 --seed 0
   --no-decontaminate --round 1 --coder-samples 2 --coder-backend triton --coder-timeout 60
   --invalid-penalty -0.5)
expect_exit 0 "the loop with the Coder" -- "${L[@]}" --pool "$TMP/pool.db" --out "$TMP/run" --coder-endpoint "$URL" --coder-record "$TMP/coder.transcript"
json_check "summary: every valid module has its 2 samples" \
  'v["coder"]["valid_modules"] >= 1 and v["coder"]["with_all_samples"] == v["coder"]["valid_modules"] and v["coder"]["recorded_in_pool"] == v["coder"]["valid_modules"] and v["rewards"] == v["proposals"] == 9'
valid=$(python3 -c 'import json,sys; print(sum(json.loads(l)["valid"] for l in open(sys.argv[1])))' "$TMP/run/rewards.jsonl")
check "2 Coder requests per valid module ($valid valid)" test "$(coder_requests)" -eq $((2 * valid))
check "rewards: penalty for refused, 0 for valid (p̂ = 0), a reason for each" python3 - "$TMP/run/rewards.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
ok = len(rows) == 9
for r in rows:
    print("    ", r["set"], r["sample"], r["reward"], r["reason"][:110])
    if r["valid"]:
        ok &= r["reward"] == 0.0 and r["p_hat"] == 0.0 and r["attempts"] == 2 and r["reason"].startswith("coder: 0 of 2 correct (")
    else:
        ok &= r["reward"] == -0.5 and bool(r["reason"]) and r["p_hat"] is None
sys.exit(0 if ok else 1)
PY
expect_exit 0 "pool stats" -- "$KZ" -q frontier --db "$TMP/pool.db" stats
json_check "pool: the valid modules unsolved, 2 attempts each" "v['attempts'] == 2 * $valid and v['by_status'] == {'unsolved': $valid}"
verdicts=$(wc -l <"$TMP/run/coder_bench/verdicts.jsonl")
requests=$(wc -l <"$TMP/requests.log")
expect_exit 0 "rerun" -- "${L[@]}" --pool "$TMP/pool.db" --out "$TMP/run" --coder-endpoint "$URL"
check "rerun: no request" test "$(wc -l <"$TMP/requests.log")" -eq "$requests"
check "rerun: nothing verified again" test "$(wc -l <"$TMP/run/coder_bench/verdicts.jsonl")" -eq "$verdicts"
expect_exit 0 "pool stats after the rerun" -- "$KZ" -q frontier --db "$TMP/pool.db" stats
json_check "rerun: attempts not recorded twice" "v['attempts'] == 2 * $valid"

before=$(coder_requests)
expect_exit 0 "a fresh run, the Coder replayed" -- "${L[@]}" --pool "$TMP/pool2.db" --out "$TMP/replayed" --coder-replay "$TMP/coder.transcript"
check "replay: no Coder request" test "$(coder_requests)" -eq "$before"
check "replay: the same rewards and Coder reasons" python3 -c '
import json, sys
def key(path):  # refusal reasons name the run directory; the rest must be equal
    return [{k: v for k, v in json.loads(l).items() if k != "reason" or v.startswith("coder:")} for l in open(path)]
sys.exit(0 if key(sys.argv[1]) == key(sys.argv[2]) else 1)' "$TMP/run/rewards.jsonl" "$TMP/replayed/rewards.jsonl"

# verl export of the pool: rows always; the parquet file where pyarrow is installed.
if python3 -c 'import pyarrow' 2>/dev/null || .venv/bin/python -c 'import pyarrow' 2>/dev/null; then
  expect_exit 0 "frontier export --format verl" -- "$KZ" -q frontier --db "$TMP/pool.db" export --format verl --out "$TMP/verl"
  check "train.parquet: one row per pool module, verl's columns" "${KZ_PYTHON:-$( [[ -x .venv/bin/python ]] && echo .venv/bin/python || echo python3)}" -c '
import sys, pyarrow.parquet as pq
rows = pq.read_table(sys.argv[1]).to_pylist()
ok = len(rows) == int(sys.argv[2]) and all(r["prompt"][0]["role"] == "user" and "class Model" in r["prompt"][0]["content"]
    and r["reward_model"]["ground_truth"] and r["extra_info"]["attempts"] == 2 for r in rows)
sys.exit(0 if ok else 1)' "$TMP/verl/train.parquet" "$valid"
else
  expect_exit 2 "frontier export --format verl without pyarrow" -- "$KZ" -q frontier --db "$TMP/pool.db" export --format verl --out "$TMP/verl"
  err_contains "says pyarrow is missing" "pyarrow is not installed"
fi
check "verl.jsonl: one row per pool module" test "$(wc -l <"$TMP/verl/verl.jsonl")" -eq "$valid"

expect_exit 2 "--coder-endpoint without --coder-samples" -- "$KZ" -q propose --catalog "$TMP/cat3.json" --endpoint "$URL" \
  --model fake --sets 1 --out "$TMP/x" --coder-endpoint "$URL"
err_contains "says what is missing" "needs --coder-samples"
finish
