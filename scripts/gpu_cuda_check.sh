#!/usr/bin/env bash
# Usage (repo root, on a GPU host, build/bin/kz built): OUT=dir scripts/gpu_cuda_check.sh
# The CUDA samples of the corpus and the examples, built by the farm (slim host header) and
# run on the GPU: every verdict against its label.
set -uo pipefail
OUT=${OUT:-/tmp/out}
grep '"backend": "cuda"' tests/corpus/manifest.jsonl > $OUT/corpus_cuda.jsonl
grep '"backend": "cuda"' examples/manifest.jsonl > $OUT/examples_cuda.jsonl
wc -l $OUT/corpus_cuda.jsonl $OUT/examples_cuda.jsonl
cat $OUT/corpus_cuda.jsonl $OUT/examples_cuda.jsonl > $OUT/all_cuda.jsonl
build/bin/kz verify --json --manifest $OUT/all_cuda.jsonl --timeout 25 -j 16 > $OUT/cuda.jsonl 2> $OUT/cuda.err
tail -2 $OUT/cuda.err
python3 scripts/corpus_check.py $OUT/cuda.jsonl --manifest $OUT/corpus_cuda.jsonl > $OUT/corpus_check.txt; echo "corpus rc=$?"; tail -1 $OUT/corpus_check.txt; grep -v "^ok" $OUT/corpus_check.txt | head
python3 - $OUT/cuda.jsonl $OUT/examples_cuda.jsonl <<'PY'
import json, sys
want = {json.loads(l)["candidate"]: json.loads(l)["expect_gpu"] for l in open(sys.argv[2])}
bad = n = 0
modes = {}
for l in open(sys.argv[1]):
    v = json.loads(l)
    for lib in (v["stages"].get("compile") or {}).get("libraries", []):
        b = lib.get("build") or {}
        k = (b.get("header_mode"), b.get("host_header"))
        modes[k] = modes.get(k, 0) + 1
    p = v["candidate"]["path"]
    w = next((s for c, s in want.items() if p.endswith(c)), None)
    if w is None: continue
    n += 1
    if v["status"] != w: bad += 1; print("BAD", p, v["status"], "want", w, v["reason"][:150])
print(f"examples: {n} CUDA verdicts, {bad} mismatches; build modes {modes}")
PY
