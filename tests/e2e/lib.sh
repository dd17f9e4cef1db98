# Helpers for the end-to-end suites: run kz, assert on exit codes and JSON fields.
# Usage: source lib.sh; KZ=path/to/kz
set -u
FAILS=0
PASSES=0
CACHE_DIR="${KZ_TEST_CACHE:-$PWD/build/test-cache}"
JSON_PY=python3

# expect_exit CODE NAME -- CMD...: runs CMD, checks its exit code, keeps stdout in $OUT_FILE.
OUT_FILE=$(mktemp)
ERR_FILE=$(mktemp)
expect_exit() {
  local want=$1 name=$2; shift 3
  "$@" >"$OUT_FILE" 2>"$ERR_FILE"
  local got=$?
  if [[ $got -eq $want ]]; then
    PASSES=$((PASSES + 1)); echo "ok   $name (exit $got)"
  else
    FAILS=$((FAILS + 1)); echo "FAIL $name: exit $got, want $want"
    echo "---- stdout"; head -c 3000 "$OUT_FILE"; echo "---- stderr"; tail -c 3000 "$ERR_FILE"
  fi
}

# json_check NAME PYTHON_EXPR: evaluates EXPR with v = the last JSON line of stdout.
json_check() {
  local name=$1 expr=$2
  if $JSON_PY - "$OUT_FILE" "$expr" <<'PY'
import json, sys
lines = [l for l in open(sys.argv[1]) if l.strip().startswith("{")]
v = json.loads(lines[-1])
ok = eval(sys.argv[2], {"v": v, "json": json})
sys.exit(0 if ok else 1)
PY
  then PASSES=$((PASSES + 1)); echo "ok   $name"
  else FAILS=$((FAILS + 1)); echo "FAIL $name: $expr"; tail -c 2000 "$OUT_FILE"; fi
}

# err_contains NAME TEXT: stderr of the last command contains TEXT.
err_contains() {
  if grep -qF -- "$2" "$ERR_FILE"; then PASSES=$((PASSES + 1)); echo "ok   $1"
  else FAILS=$((FAILS + 1)); echo "FAIL $1: stderr lacks '$2'"; tail -c 1000 "$ERR_FILE"; fi
}

# check NAME CMD...: CMD succeeds (a suite may define its own `check` after sourcing this).
check() {
  local name=$1; shift
  if "$@"; then PASSES=$((PASSES + 1)); echo "ok   $name"; else FAILS=$((FAILS + 1)); echo "FAIL $name"; fi
}

# require_llm_url: $URL from $KZ_TEST_LLM_URL (the local llama.cpp server scripts/test.sh
# starts); without it the suite skips (exit 77), or fails under KZ_REQUIRE_LLM=1.
require_llm_url() {
  URL=${KZ_TEST_LLM_URL:-}
  [[ -n "$URL" ]] && return 0
  [[ "${KZ_REQUIRE_LLM:-0}" == 1 ]] && { echo "FAIL: KZ_REQUIRE_LLM=1 but KZ_TEST_LLM_URL is not set"; exit 1; }
  echo "SKIP: no LLM server: KZ_TEST_LLM_URL is not set (scripts/test.sh starts one)"
  exit 77
}

finish() {
  echo "$PASSES passed, $FAILS failed"
  [[ $FAILS -eq 0 ]]
}
