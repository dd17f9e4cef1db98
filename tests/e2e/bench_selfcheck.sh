#!/usr/bin/env bash
# kz verify --self-check and kz bench selfcheck end to end on the CPU (KZ_FORCE_CPU=1): the
# reference judged against itself, the screen and trace lifted and said so, a bad task
# reported without aborting, the table written, a rerun resuming every task.
KZ=$1
source "$(dirname "$0")/lib.sh"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

expect_exit 0 "self-check of a task" -- "$KZ" -q verify --cpu --json --self-check --ref examples/tasks/relu.py
json_check "self-check verdict is correct and marked" 'v["status"] == "correct" and v["self_check"] is True'
json_check "screen and trace are named as lifted" 'any(n.startswith("screen: self-check") for n in v["not_checked"]) and any(n.startswith("trace: self-check") for n in v["not_checked"])'
json_check "profile: memory plan and per-stage seconds" 'v["profile"]["memory_plan"]["plan"] == "full" and v["profile"]["stages"]["correctness"]["seconds"] > 0'
json_check "correctness reports one call's bytes" 'v["stages"]["correctness"]["bytes"]["inputs"] > 0'
expect_exit 2 "--self-check with --candidate" -- "$KZ" verify --cpu --self-check --ref examples/tasks/relu.py --candidate examples/tasks/relu.py
expect_exit 15 "self-check of a task without get_inputs" -- "$KZ" -q verify --cpu --self-check --ref examples/tasks/task_no_get_inputs.py

# The footprint before the run: a task far beyond the host-memory limit is refused up front.
cat > "$W/huge.py" <<'PY'
import torch
class Model(torch.nn.Module):
    def forward(self, x):
        return x * 2
def get_inputs():
    return [torch.rand(100000, 100000, 100)]
def get_init_inputs():
    return []
PY
expect_exit 15 "a 40 TB task is refused before its run" -- "$KZ" -q verify --cpu --json --footprint --self-check --ref "$W/huge.py"
json_check "refused by its footprint, with the numbers" 'v["error"]["kind"] == "too_large" and "needs" in v["reason"] and v["footprint"]["method"] == "meta" and "correctness" not in v["stages"]'
expect_exit 0 "a task that fits gets its footprint" -- "$KZ" -q verify --cpu --json --footprint --self-check --ref examples/tasks/relu.py
json_check "footprint recorded" 'v["status"] == "correct" and v["footprint"]["complete"] and v["footprint"]["need_bytes"] == 3 * (v["footprint"]["inputs_bytes"] + v["footprint"]["outputs_bytes"])'

# A manifest of self-checks: the second sample's run child was started while the first ran.
printf '{"task": "examples/tasks/relu.py", "self_check": true}\n{"task": "examples/tasks/softmax.py", "self_check": true}\n' > "$W/self.jsonl"
expect_exit 0 "a manifest of two self-checks" -- "$KZ" -q verify --cpu --json --manifest "$W/self.jsonl"
json_check "the second run child was prestarted" 'v["status"] == "correct" and v["self_check"] is True and v["child"]["prestarted"] is True'
printf '{"task": "examples/tasks/relu.py", "candidate": "examples/tasks/softmax.py", "self_check": true}\n' > "$W/bad.jsonl"
expect_exit 2 "a self_check line naming another candidate" -- "$KZ" -q verify --cpu --manifest "$W/bad.jsonl"
err_contains "its line is named" "bad.jsonl:1: a self_check sample takes its task as candidate"

S=$W/suite
mkdir -p "$S/level1"
cp tests/bench_suite/level1/1_ReLU.py "$S/level1/1_ReLU.py"
cp examples/tasks/softmax.py "$S/level1/2_Softmax.py"
cp examples/tasks/task_no_get_inputs.py "$S/level1/3_Broken.py"
cp "$W/huge.py" "$S/level1/4_Huge.py"
expect_exit 0 "selfcheck of a 3-task suite" -- "$KZ" bench selfcheck --cpu --suite "$S" --out "$W/sc"
err_contains "progress per task" "4/4 tasks, L1_4: invalid_task"
err_contains "summary" "4 tasks (0 resumed): 2 correct"
check_file() { if grep -qF -- "$2" "$W/sc/selfcheck.md"; then PASSES=$((PASSES + 1)); echo "ok   $1"; else FAILS=$((FAILS + 1)); echo "FAIL $1"; cat "$W/sc/selfcheck.md"; fi; }
check_file "table row of a correct task" "| L1_1 | correct |"
check_file "table row of the broken task" "| L1_3 | invalid_task |"
check_file "table row of the task too large" "| L1_4 | invalid_task | 3814697.3 | 3814697.3 |"
expect_exit 0 "rerun resumes" -- "$KZ" bench selfcheck --cpu --suite "$S" --out "$W/sc"
err_contains "nothing verified again" "4 tasks (4 resumed): 2 correct"
echo "    return [torch.randn(8, 8)]" >> "$S/level1/1_ReLU.py"
expect_exit 0 "a changed task is verified again" -- "$KZ" bench selfcheck --cpu --suite "$S" --out "$W/sc" --task L1_1
err_contains "one task again" "1 tasks (0 resumed)"
expect_exit 2 "no task selected" -- "$KZ" bench selfcheck --cpu --suite "$S" --out "$W/sc" --level 9
finish
