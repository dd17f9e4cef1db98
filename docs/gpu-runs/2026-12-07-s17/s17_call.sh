#!/usr/bin/env bash
# Session 17's device calls: STEPS="..." (in the order given), the tree committed (HEAD travels).
# Carried: build/carry/kz.tar.xz (scripts/device_carry.sh: binaries, libraries, runtime) and the
# model's first part (call 1); the second part + build/model/sha256 + build/pydeps (call 2).
# mt runs detached (setsid) so that it goes on between calls; `mtwait` waits for it.
# State: /tmp/kz-s17 on the device. Logs: $OUT/logs.tgz (text only). Run on the device:
#   STEPS="..." [LIMIT=s] bash docs/gpu-runs/2026-12-07-s17/s17_call.sh
set -uo pipefail
T0=$(date +%s); LIMIT=${LIMIT:-580}
left() { echo $(( LIMIT - ($(date +%s) - T0) )); }
[ -x build/bin/kz ] || { tar xJf build/carry/kz.tar.xz -C build && mkdir -p build/bin && cp -r build/carry-bin/. build/bin/; }
export LD_LIBRARY_PATH=$PWD/build/carry-libs KZ_PYTHON=python3 KZ_CACHE_DIR=/tmp/kz-cache \
  CUDA_HOME=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
S=/tmp/kz-s17; mkdir -p $S /tmp/model; L=$OUT/logs; mkdir -p $L
for p in 0 1; do [ -f build/model/smollm2.gguf.part$p ] && cp build/model/smollm2.gguf.part$p /tmp/model/; done
[ -f build/model/sha256 ] && cp build/model/sha256 /tmp/model/
[ -d build/pydeps ] && rm -rf /tmp/pydeps && cp -r build/pydeps /tmp/pydeps
echo "start $(date -u +%T) left $(left) s"
summary=()
kill_all() { pkill -9 -f kz_worker; pkill -9 -f "build/bin/kz"; sleep 1; }
mt_logs() { mkdir -p $L/mt; (cd $S/mt 2>/dev/null && find . \( -name '*.log' -o -name '*.md' -o -name '*.json' -o -name '*.jsonl' \
  -o -name '*.toml' -o -name '*.svg' -o -name '*.done' \) -not -path '*/ckpt/*' -size -3M | tar cf - -T - | tar xf - -C $L/mt); }
for step in ${STEPS:-env}; do
  t0=$(date +%s); budget=$(( $(left) - 20 ))
  [ $budget -lt 40 ] && { summary+=("$step skipped"); continue; }
  case $step in
    env) OUT=$L scripts/gpu_check.sh env native > $L/check_env.txt 2>&1; tail -14 $L/check_env.txt ;;
    examples) OUT=$L timeout -s KILL $budget scripts/gpu_check.sh examples > $L/examples.txt 2>&1; tail -30 $L/examples.txt ;;
    corpus8) mkdir -p $L/c8; OUT=$L/c8 KZ_VERIFY_EXTRA="--gpu-concurrency 8" timeout -s KILL $budget scripts/gpu_check.sh corpus > $L/corpus8.txt 2>&1
      tail -12 $L/corpus8.txt ;;
    ncu) timeout -s KILL $budget build/bin/kz_ncu_gpu_tests > $L/ncu_test.txt 2>&1; echo "rc=$?" >> $L/ncu_test.txt
      grep -E "OK|FAIL|SKIP|rc=|Skipped|reason" $L/ncu_test.txt | tail -6
      grep RmProfilingAdminOnly /proc/driver/nvidia/params >> $L/ncu_test.txt 2>&1 ;;
    taskcheck) for t in examples/tasks/*.py; do echo "== $t"; timeout 120 build/bin/kz task check --json $t | cut -c1-600; done > $L/taskcheck.txt 2>&1
      grep -c '"status":"ok"' $L/taskcheck.txt; grep -o '"status":"[a-z_]*"' $L/taskcheck.txt | sort | uniq -c ;;
    opt)  # issue 21: the roofline (twice: the second run's ceilings cached), then --ncu
      for i in 1 2; do OUT=$S/opt$i TASKS=softmax GPU_S=30 BUDGET_S=$(( $(left) - 60 )) bench/optimize/run_gpu.sh > $L/opt$i.txt 2>&1; kill_all; done
      OUT=$S/optncu TASKS=softmax GPU_S=40 KZ_ARGS=--ncu BUDGET_S=$(( $(left) - 30 )) bench/optimize/run_gpu.sh > $L/optncu.txt 2>&1; kill_all
      grep -h -i "roofline\|ncu\|best\|cached" $L/opt1.txt $L/opt2.txt $L/optncu.txt | cut -c1-220 | tail -20
      for d in opt1 opt2 optncu; do mkdir -p $L/$d; cp -r $S/$d/summary.md $L/$d/ 2>/dev/null
        find $S/$d \( -name 'candidates.jsonl' -o -name 'transcript.jsonl' -o -name '*.log' -o -name 'state.json' \) -size -3M -exec cp --parents {} $L/$d/ \; ; done ;;
    mtbg)  # issue 22: join the model, start the comparison detached, follow it until the call ends
      if [ ! -f /tmp/model/smollm2.gguf ]; then cat /tmp/model/smollm2.gguf.part0 /tmp/model/smollm2.gguf.part1 > /tmp/model/smollm2.gguf; fi
      (cd /tmp/model && sha256sum smollm2.gguf | cut -c1-16; cut -c1-16 sha256)
      PYTHONPATH=/tmp/pydeps MODEL=/tmp/model/smollm2.gguf RUN=$S/mt DEVICE=cuda JOBS=8 HELD=32 ROUNDS=1 STEPS=8 \
        BUDGET_S=${MT_BUDGET:-100} VARIANTS="${VARIANTS:-multi retry mirror}" \
        setsid nohup bench/train/multi_turn.sh > $S/mt.txt 2>&1 < /dev/null &
      echo $! > $S/mt.pid; sleep 5 ;&
    mtwait)
      while kill -0 "$(cat $S/mt.pid)" 2>/dev/null && [ "$(left)" -gt "${MT_RESERVE:-25}" ]; do sleep 10; done
      cp $S/mt.txt $L/mt.txt; mt_logs; tail -12 $S/mt.txt; ls $S/mt | tr '\n' ' ' ;;
    serve) mkdir -p $L/serve8; OUT=$L/serve8 KZ_BATCH_GPUS=0 KZ_BATCH_COUNT=${COUNT:-96} KZ_BATCH_CONCURRENCY=8 \
        KZ_BATCH_MAX_WAIT=$(( budget - 40 )) timeout -s KILL $budget scripts/gpu_check.sh serve > $L/serve8.txt 2>&1
      kill_all; tail -20 $L/serve8.txt ;;
  esac
  summary+=("$step $(( $(date +%s) - t0 ))s")
done
find $L -type f -size +2M -exec sh -c 'echo "trimmed $1 ($(du -h "$1" | cut -f1))"; truncate -s 512K "$1"' _ {} \;
(cd $OUT && find logs -type f \( -name '*.txt' -o -name '*.json' -o -name '*.jsonl' -o -name '*.md' -o -name '*.log' \
  -o -name '*.err' -o -name '*.toml' -o -name '*.svg' -o -name '*.done' \) | tar czf $OUT/logs.tgz -T -) && rm -rf $L
echo "== ${summary[*]}; left $(left) s"
