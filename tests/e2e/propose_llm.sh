#!/usr/bin/env bash
# kz propose against a real model server (docs/curriculum.md, "The Proposer loop"):
# llama.cpp's server with SmolLM2-135M-Instruct, started by scripts/test.sh and named by
# $KZ_TEST_LLM_URL. 20 API sets drawn, one module asked per set, every proposal validated:
# 20 results, each valid or refused with its stage, rule and reason; a rerun asks nothing.
# Without $KZ_TEST_LLM_URL it skips (exit 77), unless KZ_REQUIRE_LLM=1 (then it fails).
KZ=$1
source "$(dirname "$0")/lib.sh"
require_llm_url
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
L=("$KZ" -q propose --endpoint "$URL" --model smollm2 --sets 20 -k 2 --seed 1 --temperature 0.7
   --max-tokens 128 --concurrency 2 --out "$W/run" --pool "$W/pool.db" --no-decontaminate --timeout 20)
start_s=$(date +%s)
expect_exit 0 "kz propose on 20 API sets" -- "${L[@]}"
echo "     ($(( $(date +%s) - start_s )) s; $(tail -1 "$ERR_FILE"))"
json_check "20 proposals, all classified now" 'v["proposals"] == 20 and sum(v["now"].values()) == 20'
python3 - "$W/run/validation.jsonl" <<'PY' && { PASSES=$((PASSES + 1)); echo "ok   20 results, each valid or refused with a reason"; } || { FAILS=$((FAILS + 1)); echo "FAIL results"; head -c 3000 "$W/run/validation.jsonl"; }
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
assert len(rs) == 20 and len({(r["set"], r["sample"]) for r in rs}) == 20
for r in rs:
    assert r["valid"] or (r["stage"] and r["rule"] and r["reason"].startswith(r["stage"] + "." + r["rule"])), r
PY
expect_exit 0 "rerun: nothing asked, nothing validated" -- "${L[@]}"
json_check "all there before" 'v["validated_before"] == 20 and v["now"] == {}'
expect_exit 0 "rewards of the run" -- "$KZ" -q propose rewards --proposals "$W/run" --pool "$W/pool.db"
finish
