#!/usr/bin/env bash
# kz train --config end to end on the CPU (docs/training.md): the real trainer backend
# (python -m kz_train) on a tiny random Llama, the real verifier (Triton under the
# interpreter), the teacher's verified pairs as the SFT data. Two rounds of one CA-GRPO
# step and an evaluation each. Round 1's samples are planted (a verified-correct kernel and
# nonsense) so its group has a signal and train_step runs; the rest is the model's own.
# Bad inputs: a config with an unknown key, out-of-range values and a missing model
# (refused before any work), a full disk during a checkpoint (stops, resumes), a trainer
# crash mid-step (restarted from the checkpoint, the unit retried), a kill -9
# mid-run (resumes, nothing verified twice), another config on the same run directory.
# `kz train report` on the finished run (tables, paired intervals against r0.eval, plots).
KZ=$1
source "$(dirname "$0")/lib.sh"
TMP=$(mktemp -d)
trap 'pkill -9 -f "$TMP" 2>/dev/null; rm -rf "$TMP"' EXIT
PY=${KZ_PYTHON:-$PWD/.venv/bin/python}
export KZ_PYTHON=$PY
"$PY" -c "import transformers, tokenizers" 2>/dev/null || { echo "SKIP: transformers is not installed (scripts/setup.sh)"; exit 77; }
"$PY" "$(dirname "$0")/train/make_tiny_model.py" "$TMP/tiny" >/dev/null 2>&1 || { echo "FAIL: cannot make the tiny model"; exit 1; }
expect_exit 0 "teacher pairs for SFT" -- "$KZ" -q train teacher --out "$TMP/teach" --pairs 3 --families elementwise \
  --max-elements 4096 --verify --cpu -j 2
mkdir -p "$TMP/pool" && cp "$TMP/teach/tasks/teach_0000_elementwise.py" "$TMP/pool/"
cat >"$TMP/run.toml" <<'TOML'
[run]
seed = 3
rounds = 2
[model]
path = "tiny"
lr = 1e-3
[sft]
data = "teach/sft.jsonl"
batch = 2
[coder]
tasks = "pool"
tasks_per_step = 1
samples_per_task = 2
max_new_tokens = 16
[verify]
cpu = true
timeout = 120
[eval]
tasks = "teach/tasks"
max_new_tokens = 16
TOML
plant() {  # round 1's generation: the teacher's correct kernel and a reply without code
  mkdir -p "$1/rollouts/r1.coder.1"
  python3 - "$TMP/teach/kernels/teach_0000_elementwise.py" "$1/rollouts/r1.coder.1/generation.json" <<'PY'
import json, sys
k = open(sys.argv[1]).read()
s = [{"prompt_index": 0, "text": "```python\n" + k + "```", "finish_reason": "stop", "token_ids": [3, 5, 4, 2],
      "logprobs": [-1.0, -1.2, -0.9, -0.5]},
     {"prompt_index": 0, "text": "x y relu", "finish_reason": "length", "token_ids": [12, 13, 14], "logprobs": [-2.0] * 3}]
json.dump({"format": "kz.generation/1", "prompt_ids": [[1, 5, 6, 7]], "samples": s}, open(sys.argv[2], "w"))
PY
}
check_run() {  # NAME RUN_DIR: every unit done once, round 1 trained with the gate open
  python3 - "$2" <<'PY' && { PASSES=$((PASSES + 1)); echo "ok   $1"; } || { FAILS=$((FAILS + 1)); echo "FAIL $1"; }
import json, sys
run = sys.argv[1]
state = json.load(open(run + "/state.json"))
assert state["done"] == ["sft", "r0.eval", "r1.coder.1", "r1.eval", "r2.coder.1", "r2.eval"], state
m = {}
for l in open(run + "/metrics.jsonl"):
    r = json.loads(l); m[r["unit"]] = r  # a unit re-run after a kill: the last line wins
assert set(m) == set(state["done"]), m.keys()
c = m["r1.coder.1"]
assert c["correct"] == 1 and c["no_code"] == 1 and c["groups_gate_open"] == 1 and c["trained_samples"] == 2, c
assert c["loss"] == c["loss"] and c["grad_norm"] > 0, c
assert m["sft"]["steps"] == 2 and m["sft"]["records"] == 3, m["sft"]
assert 0 <= m["r2.eval"]["pass_at_1"] <= 1 and m["r2.eval"]["tasks"] == 3, m["r2.eval"]
v = [json.loads(l) for l in open(run + "/rollouts/r1.coder.1/verdicts.jsonl")]
assert len(v) == 1 and v[0]["verdict"]["status"] == "correct", v  # verified once
assert state["checkpoint"].endswith("/ckpt/r1.coder.1"), state  # r2's step had no signal: no new weights
PY
}

# Refused before any work.
printf '[run]\nrounds = 1\n[model]\npath = "tiny"\n[coder]\ntasks = "pool"\nsamples_per_tsk = 4\n' >"$TMP/typo.toml"
expect_exit 2 "unknown key" -- "$KZ" -q train --config "$TMP/typo.toml" --out "$TMP/x"
err_contains "names it" "[coder]: unknown key 'samples_per_tsk'"
printf '[model]\npath = "tiny"\n[rewards]\nalpha = -1\n[coder]\ntasks = "pool"\n' >"$TMP/range.toml"
expect_exit 2 "out-of-range value" -- "$KZ" -q train --config "$TMP/range.toml" --out "$TMP/x"
err_contains "names the range" "[rewards] alpha = -1 is out of range"
printf '[model]\npath = "nowhere"\n[coder]\ntasks = "pool"\n' >"$TMP/nomodel.toml"
expect_exit 2 "a model path that does not exist" -- "$KZ" -q train --config "$TMP/nomodel.toml" --out "$TMP/x"
err_contains "names the path" "does not exist"
printf '[model\npath = 1\n' >"$TMP/bad.toml"
expect_exit 2 "not TOML" -- "$KZ" -q train --config "$TMP/bad.toml" --out "$TMP/x"
err_contains "says where" "not valid TOML"
[[ ! -e "$TMP/x" ]] && { PASSES=$((PASSES + 1)); echo "ok   no run directory made for a refused config"; } || { FAILS=$((FAILS + 1)); echo "FAIL run dir made"; }

# A whole run.
plant "$TMP/run"
expect_exit 0 "two rounds end to end" -- "$KZ" -q train --config "$TMP/run.toml" --out "$TMP/run"
check_run "every unit once, round 1 trained" "$TMP/run"
expect_exit 0 "run again: nothing to do" -- "$KZ" -q train --config "$TMP/run.toml" --out "$TMP/run"
err_contains "says all done" "6 units, 6 done before"
expect_exit 0 "kz train report" -- "$KZ" -q train report "$TMP/run"
python3 - "$TMP/run/report" <<'PY' && { PASSES=$((PASSES + 1)); echo "ok   report: tables, intervals against r0.eval, plots"; } || { FAILS=$((FAILS + 1)); echo "FAIL report"; }
import json, os, sys
d = sys.argv[1]
r = json.load(open(d + "/report.json"))
assert [e["unit"] for e in r["eval"]] == ["r0.eval", "r1.eval", "r2.eval"], r["eval"]
assert r["eval"][2]["compare"]["against"] == "r0.eval" and r["eval"][2]["compare"]["paired_tasks"] == 3, r["eval"][2]
md = open(d + "/report.md").read()
assert "| r1.coder.1 |" in md and "Δ pass@1" in md, md
for f in ("coder.svg", "eval.svg"):
    assert open(os.path.join(d, f)).read().startswith("<svg") or "<svg" in open(os.path.join(d, f)).read()[:200], f
PY
python3 - "$TMP/run/metrics.jsonl" <<'PY' && { PASSES=$((PASSES + 1)); echo "ok   eval lines: each task's reply digest and verdict status"; } || { FAILS=$((FAILS + 1)); echo "FAIL eval generations"; }
import json, re, sys
evals = [e for e in map(json.loads, open(sys.argv[1])) if e.get("kind") == "eval"]
assert len(evals) == 3, evals
for e in evals:
    g = e["generations"]
    assert [t for t, _, _ in g] == [t for t, _, _ in e["outcomes"]], g
    assert all(re.fullmatch("[0-9a-f]{12}", d) and s for _, d, s in g), g
PY
expect_exit 2 "report of a directory that is no run" -- "$KZ" -q train report "$TMP/nothing-here"
err_contains "says why" "no metrics.jsonl"
sed 's/rounds = 2/rounds = 3/' "$TMP/run.toml" >"$TMP/other.toml"
expect_exit 2 "another config on the run directory" -- "$KZ" -q train --config "$TMP/other.toml" --out "$TMP/run"
err_contains "says so" "was started with another config"

# A full disk during the first checkpoint: stops with the state saved, then resumes.
plant "$TMP/disk"
KZ_TRAIN_FAULT=save expect_exit 1 "checkpoint on a full disk stops the run" -- "$KZ" -q train --config "$TMP/run.toml" --out "$TMP/disk"
err_contains "names the save" "save"
expect_exit 0 "resumed after the disk fault" -- "$KZ" -q train --config "$TMP/run.toml" --out "$TMP/disk"
check_run "resumed run complete" "$TMP/disk"

# The backend crashes in round 1's train_step: restarted from the last checkpoint, the
# unit retried (its samples and verdict reused), the run goes on to the end.
plant "$TMP/crash"
KZ_TRAIN_FAULT="crash_step_once:$TMP/crashed" expect_exit 0 "a backend crash mid-step is survived" -- \
  "$KZ" train --config "$TMP/run.toml" --out "$TMP/crash"
[[ -e "$TMP/crashed" ]] && err_contains "says it restarted" "restarting the backend from the last checkpoint"
check_run "crashed run complete, nothing verified twice" "$TMP/crash"

# kill -9 once round 1's verdict is logged, then resume.
plant "$TMP/kill"
setsid "$KZ" -q train --config "$TMP/run.toml" --out "$TMP/kill" >"$TMP/kill.log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do [[ -s "$TMP/kill/rollouts/r1.coder.1/verdicts.jsonl" ]] && break; sleep 0.2; done
kill -9 -- -"$pid" 2>/dev/null; wait "$pid" 2>/dev/null
expect_exit 0 "resumed after kill -9" -- "$KZ" -q train --config "$TMP/run.toml" --out "$TMP/kill"
check_run "killed run complete, nothing verified twice" "$TMP/kill"

finish
