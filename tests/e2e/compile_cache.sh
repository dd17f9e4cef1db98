#!/usr/bin/env bash
# The compile farm's cache under bad conditions (issue 3), through the built `kz verify`
# and the real worker, torch load_inline and ninja, with a stand-in compiler
# (fake_compiler.sh): two farms building one key at once, a farm and a linker killed
# mid-write, a read-only and a full cache directory. Each gets a clear verdict and the
# cache never holds a torn entry. No GPU needed.
KZ=$1
source "$(dirname "$0")/lib.sh"
KZ=$(realpath "$KZ")
WORK=$(mktemp -d)
trap 'chmod -R u+w "$WORK" 2>/dev/null; rm -rf "$WORK"' EXIT
source "$(dirname "$0")/fake_compiler.sh"

# --- Two farms building the same key at once: both get the one whole entry.
cand "$WORK/same.py" kz_fake_same KZ_FAKE_SLOW
"${FAKE[@]}" "${V[@]}" --candidate "$WORK/same.py" --cache-dir "$C" >"$WORK/same1.json" 2>/dev/null &
P1=$!
"${FAKE[@]}" "${V[@]}" --candidate "$WORK/same.py" --cache-dir "$C" >"$WORK/same2.json" 2>/dev/null &
P2=$!
wait $P1; R1=$?
wait $P2; R2=$?
if [[ $R1 -eq 16 && $R2 -eq 16 ]] && python3 - "$WORK/same1.json" "$WORK/same2.json" <<'PY'
import json, sys
libs = [json.loads(open(p).read().splitlines()[-1])["stages"]["compile"]["libraries"][0] for p in sys.argv[1:]]
assert all(l["ok"] for l in libs) and libs[0]["key"] == libs[1]["key"], libs
PY
then PASSES=$((PASSES + 1)); echo "ok   same key at once: both compiled"; else FAILS=$((FAILS + 1)); echo "FAIL same key at once: exits $R1 $R2"; fi
cache_whole "same key at once: one whole entry"
if [[ -z $(ls -A "$C/tmp") ]]; then PASSES=$((PASSES + 1)); echo "ok   same key at once: no staging left"
else FAILS=$((FAILS + 1)); echo "FAIL same key at once: staging left: $(ls "$C/tmp")"; fi
: >"$PIDS"

# --- The farm killed mid-write: no entry, nothing torn; the next run builds it whole.
cand "$WORK/killed.py" kz_fake_killed KZ_FAKE_SLOW
"${FAKE[@]}" "${V[@]}" --candidate "$WORK/killed.py" --cache-dir "$C" >/dev/null 2>&1 &
KZPID=$!
wait_for_library kz_fake_killed
kill -9 $KZPID
wait $KZPID 2>/dev/null
cache_whole "farm killed mid-write: no entry published" kz_fake_killed
while read -r pid; do kill -9 "$pid" 2>/dev/null; done <"$PIDS"  # its orphaned compilers
: >"$PIDS"
expect_exit 16 "farm killed mid-write: the next run builds it" -- "${FAKE[@]}" "${V[@]}" --candidate "$WORK/killed.py" --cache-dir "$C"
json_check "farm killed mid-write: rebuilt (a miss)" 'v["stages"]["compile"]["libraries"][0]["cache"] == "miss"'
cache_whole "farm killed mid-write: the entry is whole"
: >"$PIDS"

# --- The compiler (here: the linker) killed mid-write: a failure, not cached.
cand "$WORK/linkkill.py" kz_fake_linkkill KZ_FAKE_SLOW
"${FAKE[@]}" "${V[@]}" --candidate "$WORK/linkkill.py" --cache-dir "$C" >"$OUT_FILE" 2>"$ERR_FILE" &
KZPID=$!
wait_for_library kz_fake_linkkill
kill -9 "$(tail -n 1 "$PIDS")"
wait $KZPID
RC=$?
if [[ $RC -eq 11 ]]; then PASSES=$((PASSES + 1)); echo "ok   linker killed mid-write: compile_error (exit 11)"
else FAILS=$((FAILS + 1)); echo "FAIL linker killed mid-write: exit $RC"; tail -c 2000 "$OUT_FILE"; fi
json_check "linker killed mid-write: a crash, not cached" 'v["error"]["kind"] == "crash" and "not cached" in v["error"]["message"]'
cache_whole "linker killed mid-write: no entry published" kz_fake_linkkill
: >"$PIDS"

# --- A read-only cache directory: hits are still served; a miss says the cache is not
# writable. Read-only by a bind mount in a user namespace (works for root as well), else
# by permissions.
cand "$WORK/new.py" kz_fake_new KZ_FAKE_NONE
if unshare -Urm true 2>/dev/null; then
  RO=(unshare -Urm sh -c 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"' "$C")
elif [[ $(id -u) -ne 0 ]]; then
  chmod -R a-w "$C"
  RO=()
else
  RO=(skip)
fi
if [[ ${RO[0]:-} == skip ]]; then
  echo "skip read-only cache: needs user namespaces (unshare -Urm) or a non-root user"
else
  expect_exit 16 "read-only cache: a hit is served" -- "${RO[@]}" "${FAKE[@]}" "${V[@]}" --candidate "$WORK/same.py" --cache-dir "$C"
  json_check "read-only cache: hit" 'v["stages"]["compile"]["libraries"][0]["cache"] == "hit"'
  expect_exit 11 "read-only cache: a miss is a compile_error" -- "${RO[@]}" "${FAKE[@]}" "${V[@]}" --candidate "$WORK/new.py" --cache-dir "$C"
  json_check "read-only cache: the reason names the cache directory" \
    'v["error"]["kind"] == "cache" and "is not writable" in v["error"]["message"]'
  chmod -R u+w "$C"
fi
: >"$PIDS"

# --- A full cache directory (a 1 MiB tmpfs): the build cannot write its library; the
# verdict says so and the failure is not cached (the second run builds again).
if unshare -Urm true 2>/dev/null; then
  FULL=$WORK/full
  mkdir -p "$FULL"
  cand "$WORK/full.py" kz_fake_full KZ_FAKE_SLOW
  unshare -Urm sh -c 'mount -t tmpfs -o size=1m tmpfs "$1" && shift &&
    "$@" >"$0.1" 2>/dev/null; echo $? >"$0.rc1"; "$@" >"$0.2" 2>/dev/null; echo $? >"$0.rc2"' \
    "$WORK/full" "$FULL" "${FAKE[@]}" "${V[@]}" --candidate "$WORK/full.py" --cache-dir "$FULL"
  cp "$WORK/full.1" "$OUT_FILE"
  if [[ $(cat "$WORK/full.rc1") == 11 ]]; then PASSES=$((PASSES + 1)); echo "ok   full cache: compile_error (exit 11)"
  else FAILS=$((FAILS + 1)); echo "FAIL full cache: exit $(cat "$WORK/full.rc1")"; tail -c 2000 "$OUT_FILE"; fi
  json_check "full cache: the reason says the disk is full" \
    'v["error"]["kind"] == "cache" and "no space left on device" in v["error"]["message"] and "not cached" in v["error"]["message"]'
  cp "$WORK/full.2" "$OUT_FILE"
  json_check "full cache: the failure was not cached" 'v["stages"]["compile"]["libraries"][0]["cache"] == "miss"'
else
  echo "skip full cache: needs user namespaces (unshare -Urm)"
fi
no_survivors "no compiler outlived the suite"
finish
