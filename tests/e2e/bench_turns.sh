#!/usr/bin/env bash
# kz bench --generate RUN --turns T: sequential refinement at test time (docs/bench.md). The
# scripted server (fake_llm_server.py) answers turn 1 by seed (ReLU: correct, wrong, no code;
# Row_sum: correct, correct, no code) and any later turn (a conversation) with the correct
# kernel. Turn 2 must ask exactly the three samples not correct, each with the verifier's
# feedback (the wrong ReLU's says which output mismatched); turn 3 is not needed (every chain
# closed). turns.md: first turn pass@1 0.5, best and last turn 1.0. A rerun asks and verifies
# nothing again. Bad inputs: --turns without --generate; --refine without --verdicts; --refine
# of a directory that is no run.
KZ=$1
source "$(dirname "$0")/lib.sh"
S=tests/bench_suite
W=$(mktemp -d)
SERVER_PID=""
trap '[[ -n "$SERVER_PID" ]] && kill "$SERVER_PID" 2>/dev/null; rm -rf "$W"' EXIT
python3 tests/e2e/fake_llm_server.py "$W/port" "$W/requests.log" & SERVER_PID=$!
for _ in $(seq 100); do [[ -f "$W/port" ]] && break; sleep 0.1; done
GEN=(--endpoint "http://127.0.0.1:$(cat "$W/port")/v1" --model tiny-test --backend triton -n 3 --seed 0 --concurrency 2)
B=("$KZ" bench --suite $S --cpu --cache-dir "$CACHE_DIR" --timeout 120 --out "$W/bench" --generate "$W/run" --turns 3 -- "${GEN[@]}")
expect_exit 0 "three turns requested, two needed" -- "${B[@]}"
check "turn 2 asked the three open samples, each with its feedback" python3 - "$W/requests.log" <<'PY'
import sys
lines = sorted(l.strip() for l in open(sys.argv[1]))
t2 = [l for l in lines if " turn2 " in l]
assert t2 == ["1_ReLU 1 turn2 incorrect mismatch", "1_ReLU 2 turn2 no_code", "1_Row_sum 2 turn2 no_code"], t2
assert len(lines) == 9 and not [l for l in lines if "turn3" in l], lines
PY
check "turns report: first 0.5, best and last 1.0" python3 - "$W/bench/turns.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["format"] == "kz.bench_turns/1" and r["tasks"] == 2, r
assert abs(r["first_turn"]["pass_at_1"] - 0.5) < 1e-9 and r["best_turn"]["pass_at_1"] == 1.0, r
assert r["last_turn"]["pass_at_1"] == 1.0 and r["first_turn"]["pass_at_n"] == 1.0, r
assert r["per_turn"][0] == {"turn": 1, "asked": 6, "correct": 3}, r["per_turn"]
assert r["per_turn"][1] == {"turn": 2, "asked": 3, "correct": 3}, r["per_turn"]
assert r["per_turn"][2]["asked"] == 0, r["per_turn"]
PY
check "turn 2's records carry their conversation" python3 - "$W/run/turn2/generations.jsonl" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert len(recs) == 3 and all(r["turn"] == 2 and len(r["messages"]) == 3 for r in recs), recs
assert all(r["messages"][1]["role"] == "assistant" for r in recs)
PY
check "turns.md printed" grep -q "| best turn | 1.000 |" "$W/bench/turns.md"
v1=$(wc -l <"$W/bench/verdicts.jsonl"); v2=$(wc -l <"$W/bench/turn2/verdicts.jsonl")
expect_exit 0 "rerun" -- "${B[@]}"
check "rerun: no new request" test "$(wc -l <"$W/requests.log")" -eq 9
check "rerun: nothing verified again" test "$(wc -l <"$W/bench/verdicts.jsonl")" -eq "$v1" -a "$(wc -l <"$W/bench/turn2/verdicts.jsonl")" -eq "$v2"
expect_exit 2 "--turns without --generate" -- "$KZ" bench --suite $S --out "$W/x" --generations "$W/run/generations.jsonl" --turns 2
err_contains "says why" "--turns needs --generate RUN"
expect_exit 2 "--refine without --verdicts" -- "$KZ" generate --suite $S --out "$W/y" --refine "$W/run" "${GEN[@]}"
err_contains "says why" "--refine needs --verdicts"
expect_exit 2 "--refine of no run" -- "$KZ" generate --suite $S --out "$W/y" --refine "$W/nothing" --verdicts "$W/v.jsonl" "${GEN[@]}"
err_contains "says why" "no generations.jsonl there"
finish
