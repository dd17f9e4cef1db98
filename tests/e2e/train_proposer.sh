#!/usr/bin/env bash
# kz train's Proposer phase end to end on the CPU (docs/training.md, "The Proposer phase"): the
# real trainer backend (two processes: Proposer and Coder, each a tiny random Llama), the real
# curriculum (sampler, three-stage validation in worker children, frontier pool) and the real
# verifier (Triton under the interpreter). Two rounds of one Proposer step and one Coder step;
# the Proposer is frozen after round 1. Round 1's proposals are planted (a valid module, a
# reply without code, a copy of a held-out task) and so are the Coder's two attempts at the
# valid module (a verified-correct kernel, nonsense): p = 1/2, the Frontier Reward's peak,
# so the group has a signal and the Proposer trains. The rest is the tiny models' own output.
# Then a kill -9 mid-step and a resume: nothing verified twice, the pool's attempts counted once.
KZ=$1
source "$(dirname "$0")/lib.sh"
TMP=$(mktemp -d)
trap 'pkill -9 -f "$TMP" 2>/dev/null; rm -rf "$TMP"' EXIT
PY=${KZ_PYTHON:-$PWD/.venv/bin/python}
export KZ_PYTHON=$PY
"$PY" -c "import transformers, tokenizers" 2>/dev/null || { echo "SKIP: transformers is not installed (scripts/setup.sh)"; exit 77; }
"$PY" "$(dirname "$0")/train/make_tiny_model.py" "$TMP/tiny" >/dev/null 2>&1 || { echo "FAIL: cannot make the tiny model"; exit 1; }
expect_exit 0 "teacher pairs" -- "$KZ" -q train teacher --out "$TMP/teach" --pairs 1 --families elementwise --max-elements 4096
mkdir -p "$TMP/heldout"
cat >"$TMP/heldout/tanh_shift.py" <<'PYMOD'
import torch
import torch.nn as nn

M = 16
N = 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.tanh(x) + 0.5


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []
PYMOD
cat >"$TMP/run.toml" <<'TOML'
[run]
seed = 5
rounds = 2
[model]
path = "tiny"
lr = 1e-3
[proposer]
steps_per_round = 1
sets_per_step = 1
samples_per_set = 3
coder_samples = 2
k = 1
max_new_tokens = 16
freeze_after_round = 1
[coder]
tasks_per_step = 1
samples_per_task = 2
max_new_tokens = 16
[verify]
cpu = true
timeout = 120
[eval]
tasks = "heldout"
max_new_tokens = 16
TOML
plant() {  # round 1: the API set {tanh}, three proposals, the Coder's two attempts at the valid one
  local u="$1/rollouts/r1.proposer.1"
  mkdir -p "$u/coder"
  python3 - "$TMP/teach/tasks/teach_0000_elementwise.py" "$TMP/teach/kernels/teach_0000_elementwise.py" \
    "$TMP/heldout/tanh_shift.py" "$u" <<'PYPLANT'
import json, sys
u = sys.argv[4]
task, kernel, heldout = [open(p).read() for p in sys.argv[1:4]]
json.dump([{"id": "s000000", "apis": ["torch.nn.Tanh"], "ids": ["tanh"], "source": "fresh", "epoch": 0}],
          open(u + "/sets.json", "w"))
block = lambda code: "```python\n" + code + "```"
s = [{"prompt_index": 0, "text": block(task), "finish_reason": "stop", "token_ids": [3, 5, 4, 2], "logprobs": [-1.0, -1.2, -0.9, -0.5]},
     {"prompt_index": 0, "text": "x y relu", "finish_reason": "length", "token_ids": [12, 13, 14], "logprobs": [-2.0] * 3},
     {"prompt_index": 0, "text": block(heldout), "finish_reason": "stop", "token_ids": [3, 6, 2], "logprobs": [-1.5] * 3}]
json.dump({"format": "kz.generation/1", "prompt_ids": [[1, 5, 6, 7]], "samples": s}, open(u + "/generation.json", "w"))
c = [{"prompt_index": 0, "text": block(kernel), "finish_reason": "stop", "token_ids": [3, 5, 4, 2], "logprobs": [-1.0] * 4},
     {"prompt_index": 0, "text": "x y relu", "finish_reason": "length", "token_ids": [12, 13, 14], "logprobs": [-2.0] * 3}]
json.dump({"format": "kz.generation/1", "prompt_ids": [[1, 5, 6, 7]], "samples": c}, open(u + "/coder/generation.json", "w"))
PYPLANT
}
check_run() {  # NAME RUN_DIR
  python3 - "$2" <<'PYCHECK' && { PASSES=$((PASSES + 1)); echo "ok   $1"; } || { FAILS=$((FAILS + 1)); echo "FAIL $1"; }
import json, os, sqlite3, sys
run = sys.argv[1]
state = json.load(open(run + "/state.json"))
assert state["done"] == ["r0.eval", "r1.proposer.1", "r1.coder.1", "r1.eval", "r2.proposer.1", "r2.coder.1", "r2.eval"], state
m = {}
for l in open(run + "/metrics.jsonl"):
    r = json.loads(l); m[r["unit"]] = r
p = m["r1.proposer.1"]
assert p["proposals"] == 3 and p["valid"] == 1 and abs(p["validity_rate"] - 1 / 3) < 1e-9, p
ref = p["refusals"]  # the held-out copy is caught by decontamination, the reply without code at extraction
assert ref.get("ast.contaminated") == 1 and sum(ref.values()) == 2 and any(k.startswith("extract.") for k in ref), ref
assert p["coder_attempts"] == 2 and p["coder_accuracy"] == 0.5, p
assert abs(p["frontier_reward_mean"] - (1 - 1 - 1) / 3) < 1e-9 and p["frontier_reward_valid_mean"] == 1.0, p
assert p["trained_samples"] == 3 and p["loss"] == p["loss"] and p["grad_norm"] > 0 and not p["frozen"], p
assert state["proposer_checkpoint"].endswith("/ckpt/r1.proposer.1"), state
assert os.path.exists(run + "/tasks/r1p1_s000000_0.py"), os.listdir(run + "/tasks")
assert m["r1.coder.1"]["tasks"] == 1, m["r1.coder.1"]  # the Proposer's module is the Coder's task
assert m["r2.proposer.1"]["frozen"] and m["r2.proposer.1"]["trained_samples"] == 0, m["r2.proposer.1"]
db = sqlite3.connect(run + "/frontier.db")
rows = db.execute("select id from modules").fetchall()
att = db.execute("select sum(attempts), sum(successes) from attempts").fetchone()
assert len(rows) >= 1 and att[0] >= 2, (rows, att)
r1 = db.execute("select attempts, successes from attempts where round = 1").fetchall()
assert r1 == [(2, 1)], r1  # recorded once, also across a kill and resume
v = [json.loads(l) for l in open(run + "/rollouts/r1.proposer.1/coder/verdicts.jsonl")]
assert len(v) == 1 and v[0]["verdict"]["status"] == "correct", v  # verified once
PYCHECK
}

# Refused before any work: a [proposer] key typo, a catalog that does not exist.
printf '[model]\npath = "tiny"\n[proposer]\nsteps_per_round = 1\nsets = 2\n' >"$TMP/typo.toml"
expect_exit 2 "unknown [proposer] key" -- "$KZ" -q train --config "$TMP/typo.toml" --out "$TMP/x"
err_contains "names it" "[proposer]: unknown key 'sets'"
printf '[model]\npath = "tiny"\n[proposer]\nsteps_per_round = 1\ncatalog = "nowhere.json"\n' >"$TMP/nocat.toml"
expect_exit 2 "a catalog that does not exist" -- "$KZ" -q train --config "$TMP/nocat.toml" --out "$TMP/x"
err_contains "names the path" "[proposer] catalog"

# Neither Coder tasks nor a Proposer: an evaluation-only run still runs (its Coder steps skip).
printf '[model]\npath = "tiny"\n[coder]\nsteps_per_round = 0\n[eval]\ntasks = "heldout"\nmax_new_tokens = 8\n[verify]\ncpu = true\n' >"$TMP/evalonly.toml"
expect_exit 0 "an evaluation-only run (no Coder tasks, no Proposer)" -- "$KZ" -q train --config "$TMP/evalonly.toml" --out "$TMP/evalonly"

plant "$TMP/run"
expect_exit 0 "two rounds with a Proposer phase" -- "$KZ" -q train --config "$TMP/run.toml" --out "$TMP/run"
check_run "Proposer step: validity, Coder attempts, Frontier Reward, update; the pool and tasks" "$TMP/run"
expect_exit 0 "kz train report" -- "$KZ" -q train report "$TMP/run"
python3 - "$TMP/run/report" <<'PYREP' && { PASSES=$((PASSES + 1)); echo "ok   report: Proposer table and plot"; } || { FAILS=$((FAILS + 1)); echo "FAIL report"; }
import os, sys
d = sys.argv[1]
md = open(d + "/report.md").read()
assert "| r1.proposer.1 |" in md, md
assert "<svg" in open(os.path.join(d, "proposer.svg")).read()[:300]
PYREP

# kill -9 once the Coder's attempt at the valid module is verified, then resume.
plant "$TMP/kill"
setsid "$KZ" -q train --config "$TMP/run.toml" --out "$TMP/kill" >"$TMP/kill.log" 2>&1 &
pid=$!
for _ in $(seq 1 900); do [[ -s "$TMP/kill/rollouts/r1.proposer.1/coder/verdicts.jsonl" ]] && break; sleep 0.2; done
kill -9 -- -"$pid" 2>/dev/null; wait "$pid" 2>/dev/null
expect_exit 0 "resumed after kill -9" -- "$KZ" -q train --config "$TMP/run.toml" --out "$TMP/kill"
check_run "killed run complete: nothing verified twice, attempts counted once" "$TMP/kill"
finish
