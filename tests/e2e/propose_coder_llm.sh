#!/usr/bin/env bash
# The Frontier Reward with a real Coder (docs/curriculum.md, "Frontier Reward end to end"):
# a scripted Proposer (fake_proposer_server.py, whose modules are valid) and llama.cpp's
# server with SmolLM2-135M-Instruct as the Coder ($KZ_TEST_LLM_URL, started by
# scripts/test.sh), 2 Coder samples a valid module (3 sets of a 3-API catalog, k = 2: the
# third repeats a set, so its module is a duplicate), verified on the CPU. SmolLM2 writes no
# working kernel: the run must still give every proposal a reward and a reason, every valid
# module its 2 verdicts, and a rerun must ask nothing. Skips (77) without the server unless
# KZ_REQUIRE_LLM=1.
KZ=$1
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/propose_lib.sh"
require_llm_url
TMP=$(mktemp -d)
unset KZ_KERNELBENCH
write_three_api_catalog "$TMP/cat3.json"
start_fake_proposer "$TMP"
L=("$KZ" -q propose --catalog "$TMP/cat3.json" --endpoint "$FAKE_URL" --model fake
   --sets 3 -k 2 --seed 0 --no-decontaminate --pool "$TMP/pool.db" --round 1 --out "$TMP/run"
   --coder-endpoint "$URL" --coder-model smollm2 --coder-samples 2 --coder-backend triton --coder-max-tokens 256
   --coder-temperature 0.7 --coder-timeout 60)
start_s=$(date +%s)
expect_exit 0 "kz propose with SmolLM2 as the Coder" -- "${L[@]}"
echo "     ($(( $(date +%s) - start_s )) s)"
json_check "every valid module has its 2 verdicts" \
  'v["coder"]["valid_modules"] >= 1 and v["coder"]["with_all_samples"] == v["coder"]["valid_modules"] and v["rewards"] == v["proposals"] == 3'
python3 - "$TMP/run/rewards.jsonl" <<'PY' && { PASSES=$((PASSES + 1)); echo "ok   a reward and a reason per proposal"; } || { FAILS=$((FAILS + 1)); echo "FAIL rewards"; cat "$TMP/run/rewards.jsonl"; }
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for r in rows:
    print("    ", r["set"], r["reward"], r["p_hat"], r["reason"][:120])
assert len(rows) == 3 and any(r["valid"] for r in rows)
for r in rows:
    if r["valid"]:
        assert r["attempts"] == 2 and r["reason"].startswith("coder: ")
        assert r["reward"] == 1 - 2 * abs(r["p_hat"] - 0.5)
    else:
        assert r["reward"] == -1 and r["reason"]
PY
before=$(wc -l <"$TMP/run/coder/generations.jsonl")
expect_exit 0 "rerun: nothing asked again" -- "${L[@]}"
[[ $(wc -l <"$TMP/run/coder/generations.jsonl") -eq $before ]] && { PASSES=$((PASSES + 1)); echo "ok   no new Coder sample"; } || { FAILS=$((FAILS + 1)); echo "FAIL new Coder samples"; }
expect_exit 0 "pool stats" -- "$KZ" -q frontier --db "$TMP/pool.db" stats
json_check "pool: 2 attempts per module" 'v["modules"] >= 1 and v["attempts"] == 2 * v["modules"]'
finish
