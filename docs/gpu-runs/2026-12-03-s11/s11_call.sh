#!/usr/bin/env bash
# Session 11's device calls: STEPS="env sbx fix corpus esc examples cur l2" (in the order given).
# Carried: build/carry-bin build/carry-libs build/clean build/lib/libkz_runtime.so .kb
# State: /tmp/kz-s11 on the device (kept while the machine stays warm); returned as
# $OUT/state.tgz every call.  Run: cp docs/gpu-runs/2026-12-03-s11/s11_call.sh /tmp/c.sh &&
# STEPS="..." LIMIT=570 bash /tmp/c.sh
set -uo pipefail
T0=$(date +%s); LIMIT=${LIMIT:-570}
left() { echo $(( LIMIT - ($(date +%s) - T0) )); }
cp -r build/clean/* . && mkdir -p build/bin && cp -r build/carry-bin/. build/bin/
export LD_LIBRARY_PATH=$PWD/build/carry-libs KZ_PYTHON=python3 KZ_CACHE_DIR=/tmp/kz-cache \
  CUDA_HOME=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
S=/tmp/kz-s11; mkdir -p $S
echo "start $(date -u +%T) left $(left) s"
summary=()
kill_all() { pkill -9 -f kb_eval; pkill -9 -f kz_worker; pkill -9 -f "kz -q verify"; pkill -9 -f "build/bin/kz verify"; sleep 1; }
for step in ${STEPS:-env}; do
  t0=$(date +%s); budget=$(( $(left) - 20 ))
  [ $budget -lt 45 ] && { summary+=("$step skipped"); continue; }
  case $step in
    env) OUT=$OUT scripts/gpu_check.sh env > /dev/null 2>&1; tail -12 $OUT/env.txt | head -6
         { uname -r; id; cat /proc/sys/kernel/unprivileged_userns_clone 2>&1; cat /proc/sys/user/max_user_namespaces; } > $OUT/env_ns.txt 2>&1; cat $OUT/env_ns.txt ;;
    sbx)
      # Issue 17 on the GPU: the jail's availability, a sandboxed GPU sample, its set-up cost.
      for m in require off; do
        timeout -s KILL 240 build/bin/kz verify --sandbox=$m --ref examples/tasks/relu.py \
          --candidate examples/candidates/relu_triton_ok.py --json > $OUT/sbx_$m.json 2> $OUT/sbx_$m.err
        echo "sandbox=$m rc=$?"; python3 -c "import json,sys; v=json.load(open(sys.argv[1])); print(v.get('verdict'), json.dumps(v.get('stages',{}).get('sandbox')))" $OUT/sbx_$m.json 2>&1 | tail -1
      done
      timeout -s KILL 200 build/bin/kz_sandbox_bench --runs 30 --gpu 0 > $OUT/sbx_bench.txt 2>&1; echo "bench rc=$?"; tail -8 $OUT/sbx_bench.txt ;;
    fix)
      # Issue 14: the two tasks session 9 found kz wrong on, L2/66 now with the seeded recheck.
      timeout -s KILL $budget build/bin/kz bench selfcheck --suite .kb/KernelBench --out $S/fix \
        --task L2_66 --task L3_33 --timeout 300 > $OUT/fix.txt 2>&1; echo "rc=$?" >> $OUT/fix.txt
      kill_all; tail -4 $OUT/fix.txt ;;
    corpus)
      mkdir -p $OUT/corpus; OUT=$OUT/corpus timeout -s KILL $budget scripts/gpu_check.sh corpus > $OUT/corpus.txt 2>&1
      kill_all; tail -5 $OUT/corpus.txt; grep -c "^ok" $OUT/corpus/corpus_check.txt ;;
    examples)
      mkdir -p $OUT/ex; OUT=$OUT/ex timeout -s KILL $budget scripts/gpu_check.sh examples > $OUT/examples.txt 2>&1
      kill_all; tail -5 $OUT/examples.txt ;;
    esc)
      timeout -s KILL $budget python3 tests/escape/run_escape.py build/bin/kz --gpu --control \
        --json $OUT/escape_gpu.json > $OUT/esc.txt 2>&1; echo "rc=$?" >> $OUT/esc.txt
      kill_all; tail -8 $OUT/esc.txt ;;
    cur)
      OUT=$OUT/cur timeout -s KILL $budget bench/curriculum/run_gpu.sh > $OUT/cur.txt 2>&1; echo "rc=$?" >> $OUT/cur.txt
      kill_all; tail -14 $OUT/cur.txt ;;
    l2)
      timeout -s KILL $budget python3 bench/kernelbench/run.py --kernelbench .kb --kz build/bin/kz \
        --out $S/l2 --level1 0 --level2 20 --timeout 120 > $OUT/l2.txt 2>&1
      kill_all; tail -4 $OUT/l2.txt ;;
  esac
  summary+=("$step $(( $(date +%s) - t0 ))s")
done
tar czf $OUT/state.tgz -C $S $(cd $S && ls -d l2 fix 2>/dev/null) 2>/dev/null
echo "== ${summary[*]}; left $(left) s"
