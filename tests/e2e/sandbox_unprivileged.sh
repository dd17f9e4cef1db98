#!/usr/bin/env bash
# The jail tests as an unprivileged user (issue 17: "works as root and as an unprivileged
# user, both tested"). Creates the user kz-sandbox-test when absent; needs root to do so.
set -u
BIN=$1
[ "$(id -u)" = 0 ] || { echo "skip: not root (cannot switch user)"; exit 77; }
USER_NAME=kz-sandbox-test
id "$USER_NAME" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$USER_NAME" || exit 1
# The binary must be readable and its directories searchable by that user.
COPY=$(mktemp -d /tmp/kz-sandbox-unpriv.XXXXXX)
cp "$BIN" "$COPY/" && chmod 755 "$COPY" "$COPY/$(basename "$BIN")"
cd /tmp && runuser -u "$USER_NAME" -- env HOME=/nonexistent TMPDIR=/tmp "$COPY/$(basename "$BIN")"
rc=$?
rm -rf "$COPY"
exit $rc
