#!/usr/bin/env bash
# --sandbox from outside (docs/sandbox.md): every verdict says what isolated it; `off` says
# off; a host without user namespaces (made real for this test: a user namespace whose
# user.max_user_namespaces is 0) refuses to start under `require` (verify, serve, worker)
# and gives flagged verdicts under `best-effort`. CPU host (KZ_FORCE_CPU=1).
KZ=$1
source "$(dirname "$0")/lib.sh"
T=examples/tasks C=examples/candidates
V=("$KZ" -q verify --cache-dir "$CACHE_DIR" --timeout 120 --json --ref $T/relu.py --candidate $C/relu_triton_ok.py)

expect_exit 0 "default (best-effort) on this host: the full sandbox" -- "${V[@]}"
json_check "stages.sandbox applied with every namespace and seccomp" \
  'v["stages"]["sandbox"]["status"] == "applied" and v["stages"]["sandbox"]["mode"] == "best-effort" and set(v["stages"]["sandbox"]["namespaces"]) >= {"user","mount","pid","net"} and v["stages"]["sandbox"]["seccomp"] and v["stages"]["sandbox"]["missing"] == []'
expect_exit 0 "--sandbox=require" -- "${V[@]}" --sandbox require
json_check "require: applied" 'v["stages"]["sandbox"]["status"] == "applied" and v["stages"]["sandbox"]["mode"] == "require"'
expect_exit 0 "--sandbox=off" -- "${V[@]}" --sandbox off
json_check "off: says off" 'v["stages"]["sandbox"]["status"] == "off" and v["stages"]["sandbox"]["namespaces"] == []'
expect_exit 2 "an unknown mode is a usage error" -- "${V[@]}" --sandbox maybe

# The issue's first finding: a candidate writing into the verifier's home at import.
HOME_DIR=$(mktemp -d)
PROBE=$(mktemp --suffix=.py)
sed "s|^import torch$|import torch, numpy; numpy.savetxt('$HOME_DIR/probe.txt', numpy.zeros(2))|" $C/relu_triton_ok.py >"$PROBE"
VP=("$KZ" -q verify --cache-dir "$CACHE_DIR" --timeout 120 --json --ref $T/relu.py --candidate "$PROBE")
expect_exit 11 "a candidate writing into home at import fails to load" -- env HOME="$HOME_DIR" "${VP[@]}"
json_check "its verdict names the cause" '"Read-only file system" in v["reason"] or "No such file" in v["reason"]'
if [[ -e $HOME_DIR/probe.txt ]]; then FAILS=$((FAILS + 1)); echo "FAIL the file was written into home"; else PASSES=$((PASSES + 1)); echo "ok   nothing was written into home"; fi
expect_exit 0 "the same candidate with --sandbox=off writes it (the old behaviour)" -- env HOME="$HOME_DIR" "${VP[@]}" --sandbox off
if [[ -e $HOME_DIR/probe.txt ]]; then PASSES=$((PASSES + 1)); echo "ok   control: written without the sandbox"; else FAILS=$((FAILS + 1)); echo "FAIL control: not written without the sandbox"; fi
rm -rf "$HOME_DIR" "$PROBE"

# A host without user namespaces, for real: kz inside a user namespace allowing none below it.
NO_USERNS=(unshare --user --map-root-user --mount sh -c 'echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"' sh)
if ! "${NO_USERNS[@]}" true 2>/dev/null; then
  echo "skip: cannot make a namespace without user namespaces here"
else
  expect_exit 2 "require on a host without user namespaces: refuses to start" -- "${NO_USERNS[@]}" "${V[@]}" --sandbox require
  err_contains "the start-up error names the missing mechanism" "this host lacks user+mount namespaces"
  expect_exit 0 "best-effort there: runs" -- "${NO_USERNS[@]}" "${V[@]}" --sandbox best-effort
  json_check "best-effort there: the verdict is flagged" \
    'v["stages"]["sandbox"]["status"] == "partial" and "user+mount namespaces" in v["stages"]["sandbox"]["missing"] and v["stages"]["sandbox"]["seccomp"]'
  err_contains "best-effort there: warned at start-up" "sandbox (best-effort): this host lacks"
  expect_exit 2 "kz serve refuses there (require is its default)" -- "${NO_USERNS[@]}" "$KZ" serve --cpu --port 18471 --cache-dir "$CACHE_DIR"
  err_contains "kz serve names it" "this host lacks user+mount namespaces"
  expect_exit 2 "kz worker refuses there (require is its default)" -- "${NO_USERNS[@]}" "$KZ" worker --cpu --queue redis://127.0.0.1:1 --cache-dir "$CACHE_DIR"
  err_contains "kz worker names it" "this host lacks user+mount namespaces"
fi
finish
