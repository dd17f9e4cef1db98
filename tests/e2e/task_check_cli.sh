#!/usr/bin/env bash
# kz task check from outside: exit codes (0 ok, 15 invalid_task, 13 timeout, 2 usage, 3
# internal), the JSON object's shape, the human table, and bad tasks (too big, nondeterministic,
# syntax error, over the host-memory limit, hanging). Runs on a CPU-only host (KZ_FORCE_CPU=1).
KZ=$1
source "$(dirname "$0")/lib.sh"
T=examples/tasks
C=("$KZ" -q task check)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

expect_exit 2 "task without a subcommand" -- "$KZ" task
expect_exit 2 "check without a file" -- "${C[@]}"
expect_exit 2 "missing task file" -- "${C[@]}" /nonexistent/task.py
err_contains "missing file is named" "/nonexistent/task.py"
expect_exit 2 "GPU index that does not exist" -- "${C[@]}" --device 7 $T/relu.py
err_contains "the index is named" "no GPU with index 7"

for f in relu softmax linear_relu; do
  start_ns=$(date +%s%N)
  expect_exit 0 "example task $f.py is ok" -- "${C[@]}" --json $T/$f.py
  echo "     ($f.py: $(( ($(date +%s%N) - start_ns) / 1000000 )) ms)"
  json_check "$f: version, status, every check passes" \
    'v["version"] == 1 and v["status"] == "ok" and all(c["status"] == "pass" for c in v["checks"])'
  json_check "$f: footprint on meta matches the run" \
    'v["footprint"]["method"] == "meta" and v["footprint"]["inputs"]["bytes"] == v["reference"]["inputs"]["bytes"]'
  json_check "$f: reference facts" \
    'all(v["reference"][k] for k in ("deterministic", "input_sensitive", "finite", "seconds", "peak_bytes")) and v["reference"]["weak_task"] is None'
  json_check "$f: CPU device, budget, task hash, child" \
    'v["device"]["kind"] == "cpu" and v["budget"]["fits"] and len(v["task"]["xxh128"]) == 32 and v["child"]["end"] == "exited"'
done
json_check "linear_relu: parameters counted" 'v["footprint"]["params"]["bytes"] == (128 * 256 + 128) * 4'

expect_exit 0 "human table" -- "${C[@]}" $T/relu.py
for want in "relu.py: ok" "footprint (meta, before allocation):" "input 0" "[16, 1024]" "64.0 KiB" \
            "pass  deterministic" "status: ok"; do
  grep -qF -- "$want" "$OUT_FILE" && { PASSES=$((PASSES + 1)); echo "ok   table has '$want'"; } \
    || { FAILS=$((FAILS + 1)); echo "FAIL table lacks '$want'"; cat "$OUT_FILE"; }
done

expect_exit 15 "task with a syntax error" -- "${C[@]}" --json $T/task_syntax_error.py
json_check "syntax error kind and line" 'v["status"] == "invalid_task" and v["error"]["kind"] == "python_syntax" and v["error"]["line"] == 13'
expect_exit 15 "task without get_inputs" -- "${C[@]}" --json $T/task_no_get_inputs.py
json_check "missing get_inputs is named" '"get_inputs" in v["reason"] and v["checks"][0]["check"] == "load"'

task() {  # task NAME FORWARD_EXPR GET_INPUTS_BODY: writes $TMP/NAME.py
  printf 'import torch\nimport torch.nn as nn\nimport time\n\n\nclass Model(nn.Module):\n    def forward(self, x):\n        return %s\n\n\ndef get_inputs():\n%s\n\n\ndef get_init_inputs():\n    return []\n' \
    "$2" "$3" > "$TMP/$1.py"
}
task too_big "torch.relu(x)" "    return [torch.randn(10**13)]"
expect_exit 15 "task far larger than memory is refused" -- "${C[@]}" --json "$TMP/too_big.py"
json_check "refused up front with the numbers, nothing run" \
  'v["reason"].startswith("fits: needs") and "TiB" in v["reason"] and v["reference"] is None and v["flags"] == ["too_large"] and v["footprint"]["inputs"]["bytes"] == 4 * 10**13'
json_check "child stayed small (nothing allocated)" 'v["child"]["peak_rss_mib"] < 4096'

task dropout "torch.nn.functional.dropout(x, 0.5, training=True)" "    return [torch.ones(64, 64)]"
expect_exit 15 "dropout in training mode is nondeterministic" -- "${C[@]}" --json "$TMP/dropout.py"
json_check "nondeterministic flag and check" \
  '"nondeterministic" in v["flags"] and any(c["check"] == "deterministic" and c["status"] == "fail" for c in v["checks"])'

task weak "torch.zeros_like(x)" "    return [torch.randn(32, 32)]"
expect_exit 0 "a constant reference is judged, with flags" -- "${C[@]}" --json "$TMP/weak.py"
json_check "weak_task and input_insensitive flags" 'set(v["flags"]) == {"weak_task", "input_insensitive"}'

# Sleeps on real tensors only, so the footprint (meta) passes and its event comes first.
task hang "time.sleep(60 * (x.device.type != 'meta')) or x" "    return [torch.randn(4)]"
# 30 s: the footprint (measured first, in the same limit) must finish even on a loaded machine.
expect_exit 13 "a hanging reference times out" -- "${C[@]}" --json --timeout 30 "$TMP/hang.py"
json_check "timeout object keeps the footprint" \
  'v["status"] == "timeout" and v["footprint"]["method"] == "meta" and v["error"]["kind"] == "timeout"'

# A data-dependent size (footprint unknown), then 2 GiB of inputs against a 1.5 GiB limit.
task host_hog "x + 1" $'    n = int(torch.ones(1).sum()) << 29\n    return [torch.ones(n)]'
expect_exit 15 "a task over the host-memory limit is killed and invalid" -- \
  "${C[@]}" --json --max-host-mem 1536 "$TMP/host_hog.py"
json_check "refused by the up-front rule or the limit, named" \
  'v["status"] == "invalid_task" and "host-memory limit" in v["reason"] and v["child"]["end"] == "memory_exceeded"'
json_check "the checks before the kill are kept" \
  '[c["check"] for c in v["checks"]] == ["load", "footprint", "fits", "reference_runs"] and v["flags"] == ["footprint_unknown"]'

expect_exit 3 "a worker that cannot start is an internal error" -- \
  env KZ_PYTHON=/nonexistent/python "${C[@]}" $T/relu.py
err_contains "the failure is explained" "relu.py"
finish
