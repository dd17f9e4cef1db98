# Shared by the Redis e2e suites (sourced after lib.sh, with TMP set): a real redis-server
# on a free loopback port with its data in $TMP/redis (AOF, appendfsync always: what
# docs/queue.md requires), and redis-cli on it. Skips the suite (exit 77) where Redis is
# not installed; scripts/setup.sh installs it.
command -v redis-server >/dev/null && command -v redis-cli >/dev/null ||
  { echo "SKIP redis-server/redis-cli are not installed (scripts/setup.sh installs them)"; exit 77; }
RPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URL=redis://127.0.0.1:$RPORT
REDIS=""
rcli() { redis-cli -p "$RPORT" "$@"; }

# start_redis: (re)starts it on $RPORT with the same data dir; waits (<= 20 s) for PONG.
start_redis() {
  mkdir -p "$TMP/redis"
  redis-server --port "$RPORT" --bind 127.0.0.1 --dir "$TMP/redis" --appendonly yes --appendfsync always \
    --save '' --daemonize no --logfile "$TMP/redis.log" &
  REDIS=$!
  for _ in $(seq 200); do
    [[ $(rcli ping 2>/dev/null) == PONG ]] && return 0
    sleep 0.1
  done
  echo "FAIL redis-server did not come up"; tail -20 "$TMP/redis.log"; exit 1
}
