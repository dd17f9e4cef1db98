#!/usr/bin/env bash
# The curriculum's validation measured on a GPU host (docs/curriculum.md, "Stand-in modules"
# and "Measured on the H200"): (1) the labelled set (tests/curriculum/labelled) through
# `kz propose validate --cuda`, every label checked; (2) N stand-in modules
# (`kz propose standins`) validated with stages 2-3 on the GPU: modules/min, the split by
# stage and rule, per-module time (stages 2-3) median and p90, a table last.
# Without a GPU (or with --cpu) the same runs on the CPU, to test the script.
#
# Usage: bench/curriculum/run_gpu.sh [--cpu]     (from the repository root, after the build)
# Env: KZ (default build/bin/kz), OUT (default $OUT or a temp dir), N (200), K (3), SEED (1),
#      TIMEOUT (per module, s; 60), MAX_MEM_MIB (per module host memory; 4096).
# Exit: 0 when every label matched, 1 otherwise, 2 when a command could not run.
set -u
cd "$(dirname "$0")/../.." || exit 2
KZ=${KZ:-build/bin/kz}
OUT=${OUT:-$(mktemp -d)}
N=${N:-200} K=${K:-3} SEED=${SEED:-1} TIMEOUT=${TIMEOUT:-60} MAX_MEM_MIB=${MAX_MEM_MIB:-4096}
PY=${PYTHON:-python3}
DEV=(--cuda) MODE=cuda
if [[ ${1:-} == --cpu ]] || ! nvidia-smi -L >/dev/null 2>&1; then DEV=() MODE=cpu; fi
mkdir -p "$OUT" || exit 2
echo "run_gpu.sh: mode $MODE, kz $KZ, out $OUT, N=$N k=$K seed=$SEED"
[[ $MODE == cuda ]] && nvidia-smi -L

now() { date +%s.%N; }

# (1) The labelled set, as tests/e2e/propose_cli.sh runs it on the CPU.
t0=$(now)
"$KZ" -q propose validate --manifest tests/curriculum/labelled/manifest.jsonl "${DEV[@]}" \
  --decontaminate tests/curriculum/eval_suite --timeout 5 --max-mem-mib 1024 \
  >"$OUT/labelled.jsonl" 2>"$OUT/labelled.err"
rc=$?
t1=$(now)
[[ $rc -le 1 ]] || { echo "labelled: kz exited $rc"; tail -20 "$OUT/labelled.err"; exit 2; }
"$PY" - "$OUT/labelled.jsonl" "$t0" "$t1" >"$OUT/labelled.summary" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
wall = float(sys.argv[3]) - float(sys.argv[2])
matched = sum(r.get("matches", False) for r in rows)
print(f"labelled: {matched}/{len(rows)} matched ({wall:.1f} s, {60 * len(rows) / wall:.0f} modules/min)")
for r in rows:
    if not r.get("matches", False):
        got = "valid" if r["valid"] else r["stage"] + "." + r["rule"]
        print(f"  MISMATCH {r['path'].rsplit('/', 1)[-1]}: expected {r.get('expect')}, got {got}: {r.get('reason', '')}")
PY
cat "$OUT/labelled.summary"
all_matched=$(head -1 "$OUT/labelled.summary" | "$PY" -c 'import sys; a, b = sys.stdin.read().split()[1].split("/"); print(int(a == b))')

# (2) N stand-ins.
"$KZ" -q propose standins --sets "$N" -k "$K" --seed "$SEED" --out "$OUT/standins" >/dev/null || exit 2
DECON=(--no-decontaminate)
[[ -n ${KZ_KERNELBENCH:-} ]] && DECON=()  # against KernelBench levels 1-3 when the user has it
t0=$(now)
"$KZ" -q propose validate --manifest "$OUT/standins/manifest.jsonl" "${DEV[@]}" "${DECON[@]}" \
  --timeout "$TIMEOUT" --max-mem-mib "$MAX_MEM_MIB" >"$OUT/standins.jsonl" 2>"$OUT/standins.err"
rc=$?
t1=$(now)
[[ $rc -le 1 ]] || { echo "standins: kz exited $rc"; tail -20 "$OUT/standins.err"; exit 2; }
"$PY" - "$OUT/standins.jsonl" "$t0" "$t1" "$MODE" "$OUT/labelled.summary" <<'PY' | tee "$OUT/summary.txt"
import collections, json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
wall, mode = float(sys.argv[3]) - float(sys.argv[2]), sys.argv[4]
split = collections.Counter("valid" if r["valid"] else r["stage"] + "." + r["rule"] for r in rows)
stages = collections.Counter("valid" if r["valid"] else r["stage"] for r in rows)
secs = sorted(r["seconds"] for r in rows if isinstance(r.get("seconds"), (int, float)))
def q(p):
    return secs[min(len(secs) - 1, int(p * len(secs)))] if secs else float("nan")
valid = split["valid"]
print(f"standins: {len(rows)} modules in {wall:.1f} s = {60 * len(rows) / wall:.0f} modules/min; "
      f"{valid} valid, {len(rows) - valid} refused")
for k, n in sorted(split.items(), key=lambda kv: -kv[1]):
    print(f"  {k:32s} {n}")
print(f"  per module (stages 2-3, {len(secs)} modules): median {q(0.5):.3f} s, p90 {q(0.9):.3f} s, max {secs[-1] if secs else float('nan'):.3f} s")
print()
print(f"| mode | labelled | modules | modules/min | valid | refused ast / runnable / numeric | median s | p90 s |")
print(f"|---|---|---|---|---|---|---|---|")
lab = open(sys.argv[5]).readline().split()[1]
print(f"| {mode} | {lab} | {len(rows)} | {60 * len(rows) / wall:.0f} | {valid} | "
      f"{stages['ast']} / {stages['runnable']} / {stages['numeric']} | {q(0.5):.3f} | {q(0.9):.3f} |")
PY
[[ $all_matched == 1 ]]
