#!/usr/bin/env bash
# Session 9's device calls (issue 14): STEPS="env probe sc1 sc2 sc3 ab kb" (in order given).
# State: /tmp/kz-s9 on the device, restored from .kb/out/sc (carried) on a fresh machine;
# returned as $OUT/state.tgz every call.
set -uo pipefail
T0=$(date +%s); LIMIT=${LIMIT:-560}
left() { echo $(( LIMIT - ($(date +%s) - T0) )); }
cp -r build/clean/* . && mkdir -p build/bin && cp build/carry-bin/* build/bin/
export LD_LIBRARY_PATH=$PWD/build/carry-libs KZ_PYTHON=python3 KZ_CACHE_DIR=/tmp/kz-cache \
  CUDA_HOME=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
S=/tmp/kz-s9; mkdir -p $S/sc
if [ ! -f $S/restored ]; then
  [ -d .kb/out/sc ] && cp -r .kb/out/sc/. $S/sc/
  [ -d .kb/out/l1 ] && mkdir -p $S/l1 && cp -r .kb/out/l1/. $S/l1/
  touch $S/restored
fi
echo "start $(date -u +%T) warm=$(ls /tmp/kz-cache/pycache 2>/dev/null | head -3 | tr '\n' ' ')"
summary=()
for step in ${STEPS:-env}; do
  t0=$(date +%s)
  case $step in
    env) OUT=$OUT scripts/gpu_check.sh env > /dev/null 2>&1; tail -12 $OUT/env.txt | head -6
         python3 -c "import torch,os;print('pyc beside torch:', os.path.exists(os.path.join(os.path.dirname(torch.__file__),'__pycache__')))" ;;
    probe)
      # kz's bytecode warm, started by its first Verifier; then fresh-interpreter start-up with and without it.
      t=$(date +%s.%N)
      build/bin/kz -q task check --json .kb/KernelBench/level1/19_ReLU.py > $OUT/task_check_19.json 2> $OUT/task_check_19.err
      for i in $(seq 1 240); do ls /tmp/kz-cache/pycache/warm-* >/dev/null 2>&1 && break; sleep 1; done
      echo "bytecode warm ready after $(python3 -c "import time;print(round(time.time()-$t,1))") s: $(cat /tmp/kz-cache/pycache/warm-* 2>/dev/null)" | tee $OUT/warm.txt
      du -sh /tmp/kz-cache/pycache | tee -a $OUT/warm.txt
      PYTHONPATH=python python3 bench/kernelbench/startup_probe.py --pycache /tmp/kz-cache/pycache | tee $OUT/probe.txt ;;
    sc1|sc2|sc3)
      lv=${step#sc}; budget=$(( $(left) - 25 ))
      if [ $budget -gt 60 ]; then
        timeout -s KILL $budget build/bin/kz bench selfcheck --suite .kb/KernelBench --out $S/sc --level $lv \
          --timeout 300 > $OUT/sc$lv.txt 2>&1; echo "rc=$?" >> $OUT/sc$lv.txt
        pkill -9 -f kz_worker; sleep 1
        tail -2 $OUT/sc$lv.txt
      fi ;;
    ab)
      # Level 2 tasks 1-20 self-check through one manifest: bytecode off, then on.
      for mode in off on; do
        budget=$(( $(left) - 25 )); [ $budget -lt 60 ] && break
        rm -rf $S/ab-$mode
        KZ_BYTECODE=$mode timeout -s KILL $budget python3 bench/kernelbench/run.py --kernelbench .kb --kz build/bin/kz \
          --out $S/ab-$mode --level1 0 --level2 20 --timeout 120 --skip-kernelbench > $OUT/ab-$mode.txt 2>&1
        pkill -9 -f kz_worker; tail -3 $OUT/ab-$mode.txt
      done ;;
    kb)
      budget=$(( $(left) - 25 ))
      [ $budget -gt 120 ] && timeout -s KILL $budget python3 bench/kernelbench/run.py --kernelbench .kb --kz build/bin/kz \
        --out $S/l1 --level1 20 --level2 0 --timeout 200 --skip-kz > $OUT/kb.txt 2>&1
      pkill -9 -f kb_eval; pkill -9 -f kz_worker; tail -4 $OUT/kb.txt ;;
  esac
  summary+=("$step $(( $(date +%s) - t0 ))s")
done
tar czf $OUT/state.tgz -C $S sc $(cd $S && ls -d l1 ab-* 2>/dev/null)
echo "== ${summary[*]}; left $(left) s"
