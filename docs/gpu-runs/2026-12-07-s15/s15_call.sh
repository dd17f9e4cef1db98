#!/usr/bin/env bash
# Session 15's device calls: STEPS="env opt join mt serve" (in the order given).
# Carried: build/carry-bin build/carry-libs build/clean build/lib/libkz_runtime.so (call 1), then
# build/model/smollm2.gguf.part0 and .part1 + build/pydeps (later calls, the machine kept warm).
# State: /tmp/kz-s15 on the device (the optimize runs, the joined model, the multi-turn run).
# Logs: $OUT/logs.tgz (text only).  Run on the device:
#   STEPS="..." [LIMIT=s] bash docs/gpu-runs/2026-12-07-s15/s15_call.sh
set -uo pipefail
T0=$(date +%s); LIMIT=${LIMIT:-570}
left() { echo $(( LIMIT - ($(date +%s) - T0) )); }
cp -r build/clean/* . && mkdir -p build/bin && cp -r build/carry-bin/. build/bin/
export LD_LIBRARY_PATH=$PWD/build/carry-libs KZ_PYTHON=python3 KZ_CACHE_DIR=/tmp/kz-cache \
  CUDA_HOME=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
S=/tmp/kz-s15; mkdir -p $S; L=$OUT/logs; mkdir -p $L
echo "start $(date -u +%T) left $(left) s"
summary=()
kill_all() { pkill -9 -f kz_worker; pkill -9 -f "build/bin/kz"; pkill -9 -f kz_train; sleep 1; }
for step in ${STEPS:-env}; do
  t0=$(date +%s); budget=$(( $(left) - 25 ))
  [ $budget -lt 45 ] && { summary+=("$step skipped"); continue; }
  case $step in
    env) OUT=$L scripts/gpu_check.sh env > /dev/null 2>&1; tail -12 $L/env.txt | head -6 ;;
    opt)  # issue 21: the kz optimize demonstration (scripted stand-in proposer), resumable
      OUT=$S/opt TASKS="${TASKS:-relu scale_shift softmax row_sum gelu_tanh}" GPU_S=${GPU_S:-150} BUDGET_S=$budget \
        bench/optimize/run_gpu.sh > $L/opt.txt 2>&1; echo "rc=$?" >> $L/opt.txt; kill_all
      tail -25 $L/opt.txt; mkdir -p $L/opt; cp -r $S/opt/summary.md $S/opt/logs $L/opt/ 2>/dev/null
      for d in $S/opt/*/; do [ -f $d/state.json ] && cp $d/state.json $L/opt/$(basename $d).state.json; done ;;
    join)  # the SmolLM2 GGUF from its two carried halves
      mkdir -p /tmp/model; [ -f build/model/smollm2.gguf.part0 ] && cp build/model/smollm2.gguf.part0 /tmp/model/
      [ -f build/model/smollm2.gguf.part1 ] && cp build/model/smollm2.gguf.part1 /tmp/model/
      if [ -f /tmp/model/smollm2.gguf.part0 ] && [ -f /tmp/model/smollm2.gguf.part1 ]; then
        cat /tmp/model/smollm2.gguf.part0 /tmp/model/smollm2.gguf.part1 > /tmp/model/smollm2.gguf
        (cd /tmp/model && sha256sum smollm2.gguf | cut -c1-16; cut -c1-16 $OLDPWD/build/model/sha256)
      else ls -la /tmp/model; fi ;;
    mt)  # issue 22: multi-turn vs single-turn (and the stabilisers) from one SFT checkpoint
      PYTHONPATH=$PWD/build/pydeps MODEL=/tmp/model/smollm2.gguf RUN=$S/mt DEVICE=cuda JOBS=8 HELD=${HELD:-32} \
        ROUNDS=1 STEPS=8 BUDGET_S=${MT_BUDGET:-150} VARIANTS="${VARIANTS:-single multi}" \
        timeout -s KILL $budget bench/train/multi_turn.sh > $L/mt.txt 2>&1; echo "rc=$?" >> $L/mt.txt; kill_all
      tail -30 $L/mt.txt; mkdir -p $L/mt
      (cd $S/mt && find . \( -name '*.log' -o -name '*.md' -o -name '*.json' -o -name '*.jsonl' -o -name '*.toml' -o -name '*.svg' \) \
        -not -path '*/ckpt/*' -not -path '*/rollouts/*' -size -3M | tar cf - -T - | tar xf - -C $L/mt) ;;
    serve)  # issue 18/20: the mixed labelled batch through kz serve (job staging moved to verify::PrepareJob)
      mkdir -p $L/serve8; OUT=$L/serve8 KZ_BATCH_GPUS=0 KZ_BATCH_COUNT=${COUNT:-96} KZ_BATCH_CONCURRENCY=${CONC:-8} \
        KZ_BATCH_MAX_WAIT=$(( budget - 40 )) timeout -s KILL $budget scripts/gpu_check.sh serve > $L/serve8.txt 2>&1
      kill_all; tail -20 $L/serve8.txt ;;
  esac
  summary+=("$step $(( $(date +%s) - t0 ))s")
done
find $L -type f -size +2M -exec sh -c 'echo "trimmed $1 ($(du -h "$1" | cut -f1))"; truncate -s 512K "$1"' _ {} \;
(cd $OUT && find logs -type f \( -name '*.txt' -o -name '*.json' -o -name '*.jsonl' -o -name '*.md' -o -name '*.log' \
  -o -name '*.err' -o -name '*.toml' -o -name '*.svg' -o -name '*.requests' \) | tar czf $OUT/logs.tgz -T -) && rm -rf $L
echo "== ${summary[*]}; left $(left) s"
