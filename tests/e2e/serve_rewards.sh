#!/usr/bin/env bash
# POST /v1/rewards on a CPU kz serve (loopback): a group of samples of one task in, verdicts,
# CA-GRPO rewards, advantages and the gate out; bad groups get a 400 with the reason; the
# same body again is answered from the stored verdicts (deduplicated). On the CPU no sample
# is timed, so a correct sample's reward is 1 (docs/api.md, "Rewards").
KZ=$1
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/serve_lib.sh"
CACHE_DIR=$TMP/cache
SERVE_FLAGS=(--wait-timeout 300)
C=examples/candidates

# group FILE CAND... [-- REWARD_JSON]: a /v1/rewards body for examples/tasks/relu.py.
group() {
  python3 - "$@" <<'PY'
import json, sys
out, rest = sys.argv[1], sys.argv[2:]
reward = None
if "--" in rest:
    reward = json.loads(rest[rest.index("--") + 1]); rest = rest[:rest.index("--")]
body = {"task": open("examples/tasks/relu.py").read(), "backend": "triton", "options": {"trials": 2},
        "samples": [{"candidate": open(p).read()} for p in rest]}
if reward is not None: body["reward"] = reward
json.dump(body, open(out, "w"))
PY
}

start_server
group "$TMP/g1.json" $C/relu_triton_ok.py $C/relu_triton_wrong.py $C/relu_triton_raises.py $C/relu_triton_ok.py
http "a group of four: 2 correct, 1 wrong, 1 raising" 200 POST /v1/rewards "$TMP/g1.json"
json_check "statuses in order" '[s["status"] for s in v["samples"]] == ["correct", "incorrect", "runtime_error", "correct"]'
json_check "accuracy 0.5 opens the gate at alpha 0.5" 'v["accuracy"] == 0.5 and v["gate"] is True and v["zero_variance"] is False'
json_check "rewards 1,0,0,1 (no timing on the CPU)" '[s["reward"] for s in v["samples"]] == [1, 0, 0, 1] and all(s["speedup"] is None for s in v["samples"])'
json_check "advantages +-1 (mean 0.5, sd 0.5)" 'all(abs(s["advantage"] - w) < 1e-5 for s, w in zip(v["samples"], [1, -1, -1, 1]))'
json_check "identical candidates share one job" 'v["samples"][0]["id"] == v["samples"][3]["id"]'
json_check "every sample carries its verdict" 'all(s["verdict"]["status"] == s["status"] for s in v["samples"])'
json_check "the reward options are echoed" 'v["reward"] == {"scheme": "ca_grpo", "alpha": 0.5, "beta": 1.0, "speedup_cap": 10.0, "eps": 1e-06, "baseline": "group"}'

group "$TMP/g2.json" $C/relu_triton_ok.py $C/relu_triton_wrong.py -- '{"alpha": 0.75, "baseline": "leave_one_out"}'
http "the same samples again, leave-one-out, alpha 0.75" 200 POST /v1/rewards "$TMP/g2.json"
json_check "gate closed below alpha; leave-one-out advantages +-1" 'v["gate"] is False and [s["advantage"] for s in v["samples"]] == [1, -1] and v["reward"]["baseline"] == "leave_one_out"'

group "$TMP/g3.json" $C/relu_triton_wrong.py $C/relu_triton_raises.py
http "an all-wrong group" 200 POST /v1/rewards "$TMP/g3.json"
json_check "zero variance: advantages 0" 'v["zero_variance"] is True and v["accuracy"] == 0 and [s["advantage"] for s in v["samples"]] == [0, 0]'

group "$TMP/bad1.json" $C/relu_triton_ok.py -- '{"alpha": -1}'
http "alpha < 0" 400 POST /v1/rewards "$TMP/bad1.json"
json_check "reason names alpha" '"alpha" in v["error"]'
group "$TMP/bad2.json" $C/relu_triton_ok.py -- '{"gamma": 1}'
http "unknown reward option" 400 POST /v1/rewards "$TMP/bad2.json"
json_check "reason names it" "\"unknown reward option 'gamma'\" in v[\"error\"]"
echo '{"task": "x", "samples": []}' > "$TMP/bad3.json"
http "empty group" 400 POST /v1/rewards "$TMP/bad3.json"
echo '{"task": "x", "samples": [{"code": "y"}]}' > "$TMP/bad4.json"
http "a sample without candidate" 400 POST /v1/rewards "$TMP/bad4.json"
json_check "reason names the sample" 'v["error"].startswith("samples[0]:")'
echo 'not json' > "$TMP/bad5.json"
http "not JSON" 400 POST /v1/rewards "$TMP/bad5.json"
stop_server "shutdown"
finish
