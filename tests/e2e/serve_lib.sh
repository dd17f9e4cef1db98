# Shared by the kz serve e2e suites (sourced after lib.sh, with KZ set): a temp dir, a free
# loopback port, and helpers to start/stop the server and make HTTP calls. The sourcing
# script sets SERVE_FLAGS (extra `kz serve` flags) and CACHE_DIR before start_server.
command -v curl >/dev/null || { echo "FAIL curl is not installed (scripts/setup.sh installs it)"; exit 1; }
TMP=$(mktemp -d)
SERVER=""
cleanup() { [[ -n $SERVER ]] && kill -KILL "$SERVER" 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
BASE="http://127.0.0.1:$PORT"
SERVE_FLAGS=()

ok() { PASSES=$((PASSES + 1)); echo "ok   $1"; }
bad() { FAILS=$((FAILS + 1)); echo "FAIL $1"; tail -c 1500 "$OUT_FILE"; echo; tail -20 "$TMP/server.log"; }

# start_server [extra flags]: starts kz serve on $PORT, waits (<= 60 s) for /healthz.
start_server() {
  "$KZ" serve --cpu --host 127.0.0.1 --port "$PORT" --db "$TMP/jobs.db" --cache-dir "$CACHE_DIR" \
    "${SERVE_FLAGS[@]}" "$@" >>"$TMP/server.log" 2>&1 &
  SERVER=$!
  for _ in $(seq 120); do
    curl -s --max-time 2 "$BASE/healthz" >/dev/null && return 0
    kill -0 "$SERVER" 2>/dev/null || break
    sleep 0.5
  done
  echo "FAIL server did not come up"; tail -20 "$TMP/server.log"; exit 1
}

# stop_server NAME: SIGTERM, then expects exit 0 within 120 s.
stop_server() {
  kill -TERM "$SERVER"
  for _ in $(seq 240); do kill -0 "$SERVER" 2>/dev/null || break; sleep 0.5; done
  if kill -0 "$SERVER" 2>/dev/null; then bad "$1: still running 120 s after SIGTERM"; kill -KILL "$SERVER"; fi
  wait "$SERVER"; local rc=$?
  SERVER=""
  [[ $rc -eq 0 ]] && ok "$1 (exit 0)" || bad "$1: exit $rc"
}

# http NAME WANT_CODE METHOD PATH [BODY_FILE] [CLIENT]: body to $OUT_FILE, headers to
# $TMP/headers; CLIENT sets X-KZ-Client.
http() {
  local name=$1 want=$2 method=$3 path=$4 body=${5:-} client=${6:-}
  local args=(-s --max-time 320 -X "$method" -o "$OUT_FILE" -D "$TMP/headers" -w '%{http_code}')
  [[ -n $body ]] && args+=(-H 'Content-Type: application/json' --data-binary "@$body")
  [[ -n $client ]] && args+=(-H "X-KZ-Client: $client")
  local code
  code=$(curl "${args[@]}" "$BASE$path")
  [[ $code == "$want" ]] && ok "$name (HTTP $code)" || bad "$name: HTTP $code, want $want"
}

# Job helpers (suites that run jobs): a field of a stored job; a wait for a state.
job_field() { curl -s --max-time 5 "$BASE/v1/jobs/$1" | python3 -c "import json,sys; print(json.load(sys.stdin)['$2'])"; }
wait_state() {  # ID STATES SECONDS: STATES is one state or several, "running|done"
  for _ in $(seq $(($3 * 4))); do
    [[ $(job_field "$1" state 2>/dev/null) =~ ^($2)$ ]] && return 0
    sleep 0.25
  done
  return 1
}
# batch OUT SPEC...: a /v1/batch body; SPEC slow:S (correct relu, sleeps S s in its first
# forward; S also makes the content unique) or cheat (torch.relu in forward: the screen
# rejects it before any run).
batch() {
  python3 - "$@" <<'PY'
import json, sys
sys.path.insert(0, "tests/e2e")
from slow_candidate import slow
out, specs = sys.argv[1], sys.argv[2:]
task = open("examples/tasks/relu.py").read()
cheat = ("import torch\n\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
         "        return torch.relu(x)\n")
def sample(spec):
    name, _, arg = spec.partition(":")
    cand = slow(arg) if name == "slow" else cheat
    return {"task": task, "candidate": cand, "backend": "triton", "options": {"trials": 1}}
json.dump({"samples": [sample(s) for s in specs]}, open(out, "w"))
PY
}
ids() { python3 -c "import json; [print(j['id']) for j in json.load(open('$OUT_FILE'))['jobs']]"; }
