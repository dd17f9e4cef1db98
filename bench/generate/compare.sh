#!/usr/bin/env bash
# requests/s of kz generate against the Python openai client (asyncio, the same
# concurrency, the same request bodies), on the project's test server (scripts/llm_server.py:
# llama.cpp + SmolLM2-135M), alternating the order each round. One task (L1_1), so every
# request has the same prompt: after a warm-up run every slot holds it in its prompt cache,
# and short replies (--max-tokens, default 4) keep the server's share of a request small,
# so that a client's own costs would show.
# Usage: bench/generate/compare.sh [ROUNDS=3] [REQUESTS=48] [MAX_TOKENS=4] [CONCURRENCY=4]
# Needs: build/bin/kz, .venv with xllamacpp and openai (bench/generate/requirements.txt).
# Prints one JSON line per run: client, round, requests, wall_s, requests_per_s.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-3} N=${2:-48} MAXT=${3:-4} K=${4:-4}
W=$(mktemp -d)
STATE="$W/llm.json"
trap '.venv/bin/python scripts/llm_server.py stop --state "$STATE" || true; rm -rf "$W"' EXIT
fresh_server() {
  .venv/bin/python scripts/llm_server.py stop --state "$STATE" || true
  URL=$(.venv/bin/python scripts/llm_server.py start --state "$STATE")
}
run_kz() {  # run_kz ROUND
  local out="$W/kz_$1" t0 t1
  t0=$(date +%s.%N)
  build/bin/kz generate --suite tests/bench_suite --task L1_1 --endpoint "$URL" --model smollm2 --backend triton -n "$N" \
    --concurrency "$K" --max-tokens "$MAXT" --temperature 0.8 --seed 1 --out "$out" --record "$W/transcript.jsonl" 2>/dev/null
  t1=$(date +%s.%N)
  python3 - "$out/summary.json" "$1" "$t0" "$t1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["this_invocation"]
proc = float(sys.argv[4]) - float(sys.argv[3])
print(json.dumps({"client": "kz generate", "round": int(sys.argv[2]), "requests": s["done"], "wall_s": round(s["wall_s"], 3),
                  "requests_per_s": round(s["done"] / s["wall_s"], 3), "process_wall_s": round(proc, 3)}))
PY
}
run_openai() {  # run_openai ROUND: the first kz run's transcript, the same bodies
  .venv/bin/python bench/generate/openai_client_compare.py "$W/transcript.jsonl" "$URL" "$K" |
    python3 -c 'import json, sys; r = json.loads(sys.stdin.read()); print(json.dumps({"client": "openai", "round": int(sys.argv[1]), "requests": r["requests"], "wall_s": r["wall_s"], "requests_per_s": r["requests_per_s"]}))' "$1"
}
fresh_server
run_kz 0  # warm-up (every slot caches the prompt) and the transcript of the request bodies
for r in $(seq "$ROUNDS"); do
  if (( r % 2 )); then run_kz "$r"; run_openai "$r"; else run_openai "$r"; run_kz "$r"; fi
done
