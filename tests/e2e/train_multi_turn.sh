#!/usr/bin/env bash
# kz train with multi-turn refinement and MusaCoder's stabilisers on the CPU (issue 22,
# docs/training.md "Multi-turn refinement"): the real trainer backend on a tiny random Llama,
# the real verifier (Triton under the interpreter). A 2-turn Coder step end to end: round 1's
# turn 1 is planted (a kernel with a wrong result, a reply without code), its turn 2 too (the
# repaired kernel, nonsense), so the repair is credited through the returns and train_step
# runs on both turns. Round 2's group (the model's own) fails: Buffered Dynamic Retry buffers
# the task; round 3 brings it back with more samples (planted: one correct) and counts it
# recovered. Evaluations refine with the verifier's feedback: the second turn's prompt is the
# whole conversation, built by the real backend's chat template. A second run with MirrorPop
# filters the planted samples (their log-probabilities are not the policy's) and trains nothing.
KZ=$1
source "$(dirname "$0")/lib.sh"
TMP=$(mktemp -d)
trap "pkill -9 -f \"$TMP\" 2>/dev/null; [[ -n \"${KZ_KEEP_TMP:-}\" ]] || rm -rf \"$TMP\"" EXIT
PY=${KZ_PYTHON:-$PWD/.venv/bin/python}
export KZ_PYTHON=$PY
"$PY" -c "import transformers, tokenizers" 2>/dev/null || { echo "SKIP: transformers is not installed (scripts/setup.sh)"; exit 77; }
"$PY" "$(dirname "$0")/train/make_tiny_model.py" "$TMP/tiny" >/dev/null 2>&1 || { echo "FAIL: cannot make the tiny model"; exit 1; }
expect_exit 0 "teacher tasks and a verified kernel" -- "$KZ" -q train teacher --out "$TMP/teach" --pairs 2 \
  --families elementwise --max-elements 4096 --verify --cpu -j 2
mkdir -p "$TMP/pool" "$TMP/evalpool"
cp "$TMP/teach/tasks/teach_0000_elementwise.py" "$TMP/pool/"
cp "$TMP/teach/tasks/teach_0001_elementwise.py" "$TMP/evalpool/"
KERNEL="$TMP/teach/kernels/teach_0000_elementwise.py"
cat >"$TMP/run.toml" <<'TOML'
[run]
seed = 3
rounds = 3
[model]
path = "tiny"
lr = 1e-3
[coder]
tasks = "pool"
tasks_per_step = 1
samples_per_task = 2
max_new_tokens = 16
[multi_turn]
turns = 2
[retry]
capacity = 2
per_step = 1
samples = 2
[rft]
per_task = 2
[verify]
cpu = true
timeout = 120
[eval]
tasks = "evalpool"
max_new_tokens = 16
turns = 2
TOML
# plant DIR TEXT... : a kz.generation/1 file, one sample per text, each of its own prompt
# (one conversation each) unless ONE_PROMPT is set (n samples of one prompt).
plant() {
  local out=$1; shift
  mkdir -p "$(dirname "$out")"
  ONE_PROMPT=${ONE_PROMPT:-} python3 - "$out" "$@" <<'PY'
import json, os, sys
texts = sys.argv[2:]
one = bool(os.environ.get("ONE_PROMPT"))
s = [{"prompt_index": 0 if one else i, "text": t, "finish_reason": "stop" if "```" in t else "length",
      "token_ids": [3, 5, 4, 2], "logprobs": [-1.0, -1.2, -0.9, -0.5]} for i, t in enumerate(texts)]
prompts = [[1, 5, 6, 7]] if one else [[1, 5, 6, 7 + i] for i in range(len(texts))]
json.dump({"format": "kz.generation/1", "prompt_ids": prompts, "samples": s}, open(sys.argv[1], "w"))
PY
}
GOOD="$(printf '```python\n%s\n```' "$(cat "$KERNEL")")"
BROKEN="$(python3 - "$KERNEL" <<'PY'
import re, sys
k = open(sys.argv[1]).read()
b, n = re.subn(r"tl\.store\((\w+) \+ offsets, (\w+),", r"tl.store(\1 + offsets, \2 + 1.0,", k)
assert n == 1, "the teacher's kernel changed shape: update the planted bug"
print("```python\n" + b + "```")
PY
)"
plant_round1() {  # RUN_DIR: turn 1 (wrong result, no code), turn 2 (repaired, nonsense)
  ONE_PROMPT=1 plant "$1/rollouts/r1.coder.1/generation.json" "$BROKEN" "x y relu"
  plant "$1/rollouts/r1.coder.1/turn2/generation.json" "$GOOD" "relu relu"
}
plant_round1 "$TMP/run"
ONE_PROMPT=1 plant "$TMP/run/rollouts/r3.coder.1/retry/generation.json" "$GOOD" "add the kernel"

expect_exit 0 "three rounds, 2 turns, retry, refining evaluations" -- "$KZ" -q train --config "$TMP/run.toml" --out "$TMP/run"
python3 - "$TMP/run" <<'PY' && { PASSES=$((PASSES + 1)); echo "ok   2-turn step: repair credited, both turns trained"; } || { FAILS=$((FAILS + 1)); echo "FAIL 2-turn step"; }
import json, sys
run = sys.argv[1]
m = {}
for l in open(run + "/metrics.jsonl"):
    r = json.loads(l); m[r["unit"]] = r
c = m["r1.coder.1"]
mt = c["multi_turn"]
assert c["samples"] == 4 and c["correct"] == 1 and c["no_code"] == 2, c
assert mt["turn_samples"] == [2, 2] and mt["turn_correct"] == [0, 1] and mt["repaired"] == 1, mt
assert mt["pass_first_turn"] == 0 and mt["pass_any_turn"] == 0.5, mt
# Turn 1's rewards are both 0 but its returns are not (0.8 * 1.5 vs 0): turn 1 trains too.
assert c["trained_samples"] == 4 and c["groups_zero_variance"] == 0 and c["grad_norm"] > 0, c
v1 = [json.loads(l) for l in open(run + "/rollouts/r1.coder.1/verdicts.jsonl")]
v2 = [json.loads(l) for l in open(run + "/rollouts/r1.coder.1/turn2/verdicts.jsonl")]
assert [x["verdict"]["status"] for x in v1] == ["incorrect"], v1
assert [x["verdict"]["status"] for x in v2] == ["correct"], v2
PY
python3 - "$TMP/run" <<'PY' && { PASSES=$((PASSES + 1)); echo "ok   retry: buffered in round 2, recovered in round 3"; } || { FAILS=$((FAILS + 1)); echo "FAIL retry"; }
import json, sys
run = sys.argv[1]
m = {}
for l in open(run + "/metrics.jsonl"):
    r = json.loads(l); m[r["unit"]] = r
assert m["r1.coder.1"]["retry"]["offered"] == 0, m["r1.coder.1"]["retry"]
r2 = m["r2.coder.1"]["retry"]
assert r2["offered"] == 1 and r2["enqueued"] == 1 and r2["buffered"] == 1, r2
r3 = m["r3.coder.1"]
assert r3["tasks"] == 2 and r3["retry"]["retried_now"] == 1 and r3["retry"]["recovered_now"] == 1, r3
assert r3["retry"]["recovered"] == 1 and r3["retry"]["yield"] == 1.0, r3["retry"]
b = json.load(open(run + "/retry_buffer.json"))
assert b["format"] == "kz.retry_buffer/1" and b["retries"] == {"teach_0000_elementwise": 1}, b
PY
python3 - "$TMP/run" <<'PY' && { PASSES=$((PASSES + 1)); echo "ok   rft between rounds: the repaired kernel fine-tuned on, once"; } || { FAILS=$((FAILS + 1)); echo "FAIL rft unit"; }
import json, sys
run = sys.argv[1]
m = {}
for l in open(run + "/metrics.jsonl"):
    r = json.loads(l); m[r["unit"]] = r
r1 = m["r1.rft"]
assert r1["kind"] == "rft" and r1["records"] == 1 and r1["steps"] == 1 and r1["loss_first"] == r1["loss_first"], r1
r3 = m["r3.rft"]
assert r3["records"] == 1 and r3["duplicates"] == 1, r3  # the retry's correct kernel is the same one
recs = [json.loads(l) for l in open(run + "/rollouts/r1.rft/sft.jsonl")]
assert len(recs) == 1 and recs[0]["task"] == "teach_0000_elementwise", recs
assert json.load(open(run + "/state.json"))["checkpoint"].endswith("/ckpt/r3.rft"), "the last rft trained last"
PY
python3 - "$TMP/run" <<'PY' && { PASSES=$((PASSES + 1)); echo "ok   evaluations refine: first and best turn, the conversation grows"; } || { FAILS=$((FAILS + 1)); echo "FAIL eval turns"; }
import json, os, sys
run = sys.argv[1]
m = {}
for l in open(run + "/metrics.jsonl"):
    r = json.loads(l); m[r["unit"]] = r
for u in ("r0.eval", "r1.eval", "r2.eval", "r3.eval"):
    e = m[u]
    assert e["turns"] == 2 and len(e["pass_by_turn"]) == 2 and e["pass_at_1_best_turn"] >= e["pass_at_1"], e
    assert len(e["outcomes_best_turn"]) == 1, e
g1 = json.load(open(run + "/rollouts/r0.eval/generation.json"))
g2 = json.load(open(run + "/rollouts/r0.eval/turn2/generation.json"))  # the tiny model's turn 1 failed
p1, p2 = g1["prompt_ids"][0], g2["prompt_ids"][0]
assert len(p2) > len(p1) and p2[:len(p1) - 1] == p1[:-1], (len(p1), len(p2))
PY
expect_exit 0 "run again: nothing to do" -- "$KZ" -q train --config "$TMP/run.toml" --out "$TMP/run"
err_contains "says all done" "10 units, 10 done before"
expect_exit 0 "kz train report on a multi-turn run" -- "$KZ" -q train report "$TMP/run"
python3 - "$TMP/run/report" <<'PY' && { PASSES=$((PASSES + 1)); echo "ok   report: the stabilisers' table and plot"; } || { FAILS=$((FAILS + 1)); echo "FAIL report"; }
import sys
d = sys.argv[1]
md = open(d + "/report.md").read()
assert "## Multi-turn refinement and stabilisers" in md and "| r1.coder.1 | 2 | 0.000 | 0.500 | 1 |" in md, md
assert "| r3.coder.1 |" in md and "pass@1 best turn" in md, md
assert "<svg" in open(d + "/stabilisers.svg").read()[:300]
PY

# Diversity-preserving RFT data from the run: the two correct samples are the same kernel (one
# kept, one duplicate); a candidate changed since its verdict is not trusted.
expect_exit 0 "kz train rft" -- "$KZ" -q train rft "$TMP/run" --out "$TMP/rft.jsonl" --per-task 4
err_contains "counts" "1 duplicates"
python3 - "$TMP/rft.jsonl" "$KERNEL" <<'PY' && { PASSES=$((PASSES + 1)); echo "ok   rft: one pair in the Coder's prompt"; } || { FAILS=$((FAILS + 1)); echo "FAIL rft"; }
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert len(recs) == 1 and recs[0]["task"] == "teach_0000_elementwise", recs
k = open(sys.argv[2]).read()
assert k.strip() in recs[0]["completion"] and recs[0]["completion"].startswith("```python"), recs[0]["completion"]
assert "ModelNew" in recs[0]["prompt"] and "class Model" in recs[0]["prompt"], recs[0]["prompt"][:300]
PY
echo "# changed" >>"$TMP/run/rollouts/r1.coder.1/turn2/candidates/teach_0000_elementwise_0.py"
expect_exit 0 "kz train rft after a candidate changed" -- "$KZ" -q train rft "$TMP/run" --out "$TMP/rft2.jsonl"
err_contains "the changed one is not trusted" "2 correct (1 whose candidate or task changed since), 0 duplicates"
expect_exit 2 "kz train rft of a directory that is no run" -- "$KZ" -q train rft "$TMP/nothing" --out "$TMP/x.jsonl"
err_contains "says why" "no verdicts"

# A single-turn run with a Coder budget spent after its first step, compared with the
# multi-turn run task by task (kz train compare).
sed -e 's/rounds = 3/rounds = 2/' -e '/^\[multi_turn\]/,/^turns = 2/d' -e '/^\[retry\]/,/^samples = 2/d' \
    -e '0,/^max_new_tokens = 16$/s//max_new_tokens = 16\nbudget_s = 0.001/' "$TMP/run.toml" >"$TMP/single.toml"
expect_exit 0 "a single-turn run with a Coder budget" -- "$KZ" -q train --config "$TMP/single.toml" --out "$TMP/single"
expect_exit 0 "kz train compare" -- "$KZ" -q train compare "$TMP/single" "$TMP/run"
python3 - "$TMP" <<'PY' && { PASSES=$((PASSES + 1)); echo "ok   budget spent after one step; compare: paired readings and Coder phases"; } || { FAILS=$((FAILS + 1)); echo "FAIL budget/compare"; }
import json, sys
tmp = sys.argv[1]
m = {}
for l in open(tmp + "/single/metrics.jsonl"):
    r = json.loads(l); m[r["unit"]] = r
assert "multi_turn" not in m["r1.coder.1"] and m["r1.coder.1"]["wall_s"] > 0, m["r1.coder.1"]
assert "budget" in m["r2.coder.1"]["skipped"] and "samples" not in m["r2.coder.1"], m["r2.coder.1"]
assert json.load(open(tmp + "/single/state.json"))["coder_seconds"] > 0
c = json.load(open(tmp + "/run/compare/compare.json"))
assert c["format"] == "kz.train_compare/1" and c["unit"] == "r2.eval", c
assert c["first_turn"]["paired_tasks"] == 1 and c["best_turn"]["paired_tasks"] == 1, c
assert c["coder"]["a"]["steps"] == 1 and c["coder"]["a"]["skipped"] == 1, c["coder"]
assert c["coder"]["b"]["steps"] == 3 and c["coder"]["b"]["retry_recovered"] == 1, c["coder"]
md = open(tmp + "/run/compare/compare.md").read()
assert "| first_turn | 1 |" in md and "| best_turn | 1 |" in md, md
PY
expect_exit 2 "compare with a directory that is no run" -- "$KZ" -q train compare "$TMP/run" "$TMP/nothing"
err_contains "says which" "has no metrics.jsonl"

# MirrorPop: the planted samples' log-probabilities are not the policy's: all filtered.
sed -e 's/rounds = 3/rounds = 1/' -e '/^\[eval\]/,$d' -e '/^\[retry\]/,/^samples = 2/d' -e '/^\[rft\]/,/^per_task = 2/d' \
  "$TMP/run.toml" >"$TMP/pop.toml"
printf '[mirror_pop]\nenabled = true\n' >>"$TMP/pop.toml"
plant_round1 "$TMP/pop"
expect_exit 0 "a MirrorPop run" -- "$KZ" -q train --config "$TMP/pop.toml" --out "$TMP/pop"
python3 - "$TMP/pop" <<'PY' && { PASSES=$((PASSES + 1)); echo "ok   MirrorPop filters off-policy samples and says so"; } || { FAILS=$((FAILS + 1)); echo "FAIL MirrorPop"; }
import json, sys
run = sys.argv[1]
c = [json.loads(l) for l in open(run + "/metrics.jsonl")][-1]
p = c["mirror_pop"]
assert p["sequences"] == 4 and p["kept"] == 0 and p["filtered_share"] == 1.0, p
assert p["sequence_ratio"] + p["token_veto"] == 4 and p["nan"] == 0, p
assert c["trained_samples"] == 0 and "MirrorPop" in c["skipped"], c
assert json.load(open(run + "/state.json"))["checkpoint"] == "", "nothing trained: no checkpoint"
PY
expect_exit 2 "compare runs that share no evaluation" -- "$KZ" -q train compare "$TMP/run" "$TMP/pop"
err_contains "says why" "share no finished evaluation unit"
finish
