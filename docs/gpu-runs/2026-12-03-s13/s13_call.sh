#!/usr/bin/env bash
# Session 13's device calls: STEPS="env ex timing timingci native sbxt tp8 tp4 tp1 tp1s corpus8 serve8" (in the order given).
# Carried: build/carry-bin build/carry-libs build/clean build/lib/libkz_runtime.so .kb
# State: /tmp/kz-s13 on the device (kept while the machine stays warm; the throughput batch
# and its K runs live there so the K runs can be split over calls); logs tarred into
# $OUT/logs.tgz (text logs only).  Run on the device: STEPS="..." [LIMIT=s] bash docs/gpu-runs/2026-12-03-s13/s13_call.sh
set -uo pipefail
T0=$(date +%s); LIMIT=${LIMIT:-570}
left() { echo $(( LIMIT - ($(date +%s) - T0) )); }
cp -r build/clean/* . && mkdir -p build/bin && cp -r build/carry-bin/. build/bin/
export LD_LIBRARY_PATH=$PWD/build/carry-libs KZ_PYTHON=python3 KZ_CACHE_DIR=/tmp/kz-cache \
  CUDA_HOME=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
S=/tmp/kz-s13; mkdir -p $S; L=$OUT/logs; mkdir -p $L
echo "start $(date -u +%T) left $(left) s"
summary=()
kill_all() { pkill -9 -f kz_worker; pkill -9 -f "build/bin/kz "; sleep 1; }
tp() {  # throughput at K=$1 on the batch in $S/tp (made by the first call)
  OUT=$S/tp T=${T:-16} S=${SPT:-16} KS="$1" timeout -s KILL $budget bench/throughput/run_gpu.sh > $L/tp$1.txt 2>&1
  echo "rc=$?" >> $L/tp$1.txt; kill_all; tail -7 $L/tp$1.txt; cp $S/tp/summary.md $L/tp_summary.md 2>/dev/null; }
for step in ${STEPS:-env}; do
  t0=$(date +%s); budget=$(( $(left) - 25 ))
  [ $budget -lt 45 ] && { summary+=("$step skipped"); continue; }
  case $step in
    env) OUT=$L scripts/gpu_check.sh env > /dev/null 2>&1; tail -12 $L/env.txt | head -6 ;;
    ex)  # Issues 14 and 17: every shipped example, sandbox on where the host allows it.
      mkdir -p $L/ex; OUT=$L/ex timeout -s KILL $budget scripts/gpu_check.sh examples > $L/examples.txt 2>&1
      kill_all; tail -30 $L/examples.txt
      python3 -c "
import json,collections,sys
c=collections.Counter(json.dumps((json.loads(l).get('stages') or {}).get('sandbox',{}).get('status')) for l in open(sys.argv[1]) if l.startswith('{'))
print('sandbox stage statuses:', dict(c))" $L/ex/examples.jsonl ;;
    timing) mkdir -p $L/timing; OUT=$L/timing timeout -s KILL $budget scripts/gpu_check.sh timing > $L/timing.txt 2>&1
      kill_all; tail -8 $L/timing.txt ;;
    native) OUT=$L timeout -s KILL $budget scripts/gpu_check.sh native > $L/native_s.txt 2>&1; tail -4 $L/native_s.txt ;;
    sbxt) timeout -s KILL $budget build/bin/kz_sandbox_bench --runs 5 --gpu 0 > $L/sbx_bench_torch.txt 2>&1
      echo "rc=$?"; tail -8 $L/sbx_bench_torch.txt ;;
    timingci) mkdir -p $L/timingci; OUT=$L/timingci KZ_TIMING_ARGS="--kz-arg=--timing-ci --kz-arg=0.02" \
      timeout -s KILL $budget scripts/gpu_check.sh timing > $L/timingci.txt 2>&1; kill_all; tail -8 $L/timingci.txt ;;
    tp1s)  # K = 1 on a smaller batch (16 tasks x 4 samples) so it fits one call
      OUT=$S/tp1 T=16 S=4 KS=1 timeout -s KILL $budget bench/throughput/run_gpu.sh > $L/tp1s.txt 2>&1
      echo "rc=$?" >> $L/tp1s.txt; kill_all; tail -7 $L/tp1s.txt; cp $S/tp1/summary.md $L/tp1s_summary.md 2>/dev/null ;;
    serve8)  # the mixed labelled batch through kz serve, 8 slots sharing GPU 0's gate
      mkdir -p $L/serve8; OUT=$L/serve8 KZ_BATCH_GPUS=0 KZ_BATCH_COUNT=${COUNT:-96} KZ_BATCH_CONCURRENCY=${CONC:-8} \
        KZ_BATCH_MAX_WAIT=$(( budget - 40 )) timeout -s KILL $budget scripts/gpu_check.sh serve > $L/serve8.txt 2>&1
      kill_all; tail -20 $L/serve8.txt ;;
    tp8) tp 8 ;; tp4) tp 4 ;; tp1) tp 1 ;; tp2) tp 2 ;;
    corpus8)  # the adversarial corpus with 8 samples sharing the GPU through the gate
      mkdir -p $L/corpus8; OUT=$L/corpus8 KZ_VERIFY_EXTRA="--gpu-concurrency 8" timeout -s KILL $budget \
        scripts/gpu_check.sh corpus > $L/corpus8.txt 2>&1; kill_all; tail -6 $L/corpus8.txt
      echo "ok lines: $(grep -c '^ok' $L/corpus8/corpus_check.txt)" ;;
  esac
  summary+=("$step $(( $(date +%s) - t0 ))s")
done
find $L -type f -size +2M -exec sh -c 'echo "trimmed $1 ($(du -h "$1" | cut -f1))"; truncate -s 512K "$1"' _ {} \;
# only the text logs travel back (the timing and example steps leave caches and binaries)
(cd $OUT && find logs -type f \( -name '*.txt' -o -name '*.json' -o -name '*.jsonl' -o -name '*.md' -o -name '*.log' -o -name '*.err' \) \
  | tar czf $OUT/logs.tgz -T -) && rm -rf $L
echo "== ${summary[*]}; left $(left) s"
