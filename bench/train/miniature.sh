#!/usr/bin/env bash
# The miniature of issue 19 on one GPU (docs/training.md, "The miniature"): SmolLM2-135M-Instruct
# as the Coder; the template teacher's verified pairs as the SFT data; CA-GRPO rounds on a pool
# of teacher tasks of other seeds; held-out teacher tasks of a third seed (any task whose source
# equals an SFT or pool task's is dropped) evaluated before RL (r0.eval) and after every round;
# `kz train report` last (paired bootstrap intervals, plots). Resumable: run it again with the
# same RUN and it continues where it stopped.
#
# Usage: bench/train/miniature.sh [--cpu]       (from the repository root, after the build)
# Env: KZ (build/bin/kz), RUN (/tmp/kz-mini), MODEL (.models/SmolLM2-135M-Instruct.Q4_1.gguf),
#      PAIRS (32 SFT pairs), POOL (32 RL tasks), HELD (64 held-out tasks), ROUNDS (2),
#      STEPS (steps per round, 4), TPS (tasks per step, 8), SPT (samples per task, 8),
#      TOKENS (max new tokens, 384), SFT_LR (2e-4), EPOCHS (SFT epochs, 8), CODER_LR (1e-5),
#      DEVICE (auto), JOBS (4), CONCURRENCY (samples verified at once on the GPU, 1).
#      Defaults from session 11's first runs: 2 SFT epochs at 5e-5 gave
#      a model with no correct kernel (no RL signal); 8 at 2e-4 gave held-out pass@1 0.29, and
#      RL at that same 2e-4 lost step accuracy (0.44 -> 0.22), hence a smaller CODER_LR.
# Exit: kz train's (0 when every unit finished; 1 when it stopped with its state saved).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
KZ=${KZ:-build/bin/kz} RUN=${RUN:-/tmp/kz-mini} MODEL=${MODEL:-$PWD/.models/SmolLM2-135M-Instruct.Q4_1.gguf}
PAIRS=${PAIRS:-32} POOL=${POOL:-32} HELD=${HELD:-64} ROUNDS=${ROUNDS:-2} STEPS=${STEPS:-4} TPS=${TPS:-8} SPT=${SPT:-8}
TOKENS=${TOKENS:-384} SFT_LR=${SFT_LR:-${LR:-2e-4}} CODER_LR=${CODER_LR:-1e-5} EPOCHS=${EPOCHS:-8} DEVICE=${DEVICE:-auto}
JOBS=${JOBS:-4} CONCURRENCY=${CONCURRENCY:-1}
# The Proposer phase (docs/training.md): PSTEPS Proposer steps per round of PSETS API sets x
# PSAMPLES modules, PCODER Coder attempts per valid module; FREEZE > 0 freezes the Proposer
# after that round (the paper's ablation). PSTEPS=0 (default): no Proposer phase.
PSTEPS=${PSTEPS:-0} PSETS=${PSETS:-8} PSAMPLES=${PSAMPLES:-4} PCODER=${PCODER:-4} FREEZE=${FREEZE:-0}
# Issue 22's options (docs/training.md, "Multi-turn refinement"): TURNS ([multi_turn] turns, 1),
# EVAL_TURNS ([eval] turns, 1), RETRY ([retry] capacity, 0: off), MIRROR ([mirror_pop] enabled,
# false), BUDGET_S ([coder] budget_s, 0: none), NO_EVAL=1 (no [eval]: an SFT-only base run),
# EVAL_BASELINE ([eval] baseline, true: r0.eval; false for runs that share another's).
TURNS=${TURNS:-1} EVAL_TURNS=${EVAL_TURNS:-1} RETRY=${RETRY:-0} MIRROR=${MIRROR:-false} BUDGET_S=${BUDGET_S:-0}
NO_EVAL=${NO_EVAL:-0} EVAL_BASELINE=${EVAL_BASELINE:-true}
CPU=() VCPU=false
[[ ${1:-} == --cpu ]] && CPU=(--cpu) VCPU=true
[[ -f $MODEL ]] || { echo "miniature: no model at $MODEL (scripts/setup.sh extracts it)"; exit 2; }
mkdir -p "$RUN" || exit 2
MODEL=$(realpath "$MODEL")
t0=$(date +%s)
stamp() { echo "miniature: $(( $(date +%s) - t0 )) s: $*"; }

# 1. The SFT data (verified; resumable) and the task sets.
if [[ -n ${FROM_CKPT:-} ]]; then  # no SFT here: its tasks only (the held-out set leaves them out)
  "$KZ" -q train teacher --out "$RUN/sft" --pairs "$PAIRS" --seed 11 >/dev/null || exit 2
else
  stamp "teacher: $PAIRS pairs, verified"
  "$KZ" -q train teacher --out "$RUN/sft" --pairs "$PAIRS" --seed 11 --verify "${CPU[@]}" -j "$JOBS" | tail -1
  [[ -s $RUN/sft/sft.jsonl ]] || { echo "miniature: no verified pair: nothing to fine-tune on"; exit 2; }
fi
"$KZ" -q train teacher --out "$RUN/pool" --pairs "$POOL" --seed 22 >/dev/null || exit 2
"$KZ" -q train teacher --out "$RUN/held" --pairs "$HELD" --seed 33 >/dev/null || exit 2
# Held-out means unseen: drop held-out tasks whose source equals a training task's.
python3 - "$RUN" <<'PY' || exit 2
import glob, hashlib, os, sys
run = sys.argv[1]
h = lambda p: hashlib.sha256(open(p, "rb").read()).hexdigest()
seen = {h(p) for d in ("sft", "pool") for p in glob.glob(f"{run}/{d}/tasks/*.py")}
dropped = [p for p in sorted(glob.glob(f"{run}/held/tasks/*.py")) if h(p) in seen]
for p in dropped:
    os.remove(p)
print(f"miniature: held-out tasks: {len(glob.glob(run + '/held/tasks/*.py'))} ({len(dropped)} dropped as seen in training)")
PY

# 2. The run.
cat >"$RUN/run.toml" <<TOML
# Written by bench/train/miniature.sh
[run]
seed = 7
rounds = $ROUNDS
[model]
path = "$MODEL"
device = "$DEVICE"
lr = $SFT_LR
[sft]
data = "sft/sft.jsonl"
epochs = $EPOCHS
batch = 8
lr = $SFT_LR
[coder]
tasks = "pool/tasks"
tasks_per_step = $TPS
samples_per_task = $SPT
steps_per_round = $STEPS
max_new_tokens = $TOKENS
temperature = 1.0
lr = $CODER_LR
budget_s = $BUDGET_S
[multi_turn]
turns = $TURNS
[retry]
capacity = $RETRY
[mirror_pop]
enabled = $MIRROR
[proposer]
steps_per_round = $PSTEPS
sets_per_step = $PSETS
samples_per_set = $PSAMPLES
coder_samples = $PCODER
max_new_tokens = 768
freeze_after_round = $FREEZE
[verify]
cpu = $VCPU
timeout = 120
jobs = $JOBS
concurrency = $CONCURRENCY
TOML
[[ $NO_EVAL == 1 ]] || printf '[eval]\ntasks = "held/tasks"\nmax_new_tokens = %s\nturns = %s\nbaseline = %s\n' "$TOKENS" \
  "$EVAL_TURNS" "$EVAL_BASELINE" >>"$RUN/run.toml"
# FROM_CKPT: start from that checkpoint (e.g. bench/train/multi_turn.sh's SFT-only base run):
# it becomes [model] path and the [sft] table goes.
if [[ -n ${FROM_CKPT:-} ]]; then
  python3 - "$RUN/run.toml" "$FROM_CKPT" <<'PY' || exit 2
import re, sys
p, ckpt = sys.argv[1], sys.argv[2]
t = open(p).read()
t = re.sub(r'(?m)^path = ".*"$', f'path = "{ckpt}"', t, count=1)
t = re.sub(r'(?ms)^\[sft\]\n.*?(?=^\[)', "", t)
open(p, "w").write(t)
PY
fi
stamp "kz train (rounds $ROUNDS x $STEPS steps of $TPS tasks x $SPT samples)"
"$KZ" train --config "$RUN/run.toml" --out "$RUN/run"
rc=$?
stamp "kz train exited $rc"
"$KZ" -q train report "$RUN/run" --out "$RUN/report" | sed -n '/^## Held-out/,$p'
exit $rc
