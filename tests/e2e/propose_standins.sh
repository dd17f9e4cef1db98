#!/usr/bin/env bash
# kz propose standins (docs/curriculum.md, "Stand-in modules"): 20 API sets drawn and one
# module written per set, byte-identical on a rerun; the manifest validated on the CPU with
# all three stages: 20 outcomes, each valid or refused with its stage, rule and reason, and
# most of them valid (the snippets are written to be); bad options refused.
KZ=$1
source "$(dirname "$0")/lib.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
P=("$KZ" -q propose)
unset KZ_KERNELBENCH

expect_exit 0 "standins: 20 sets" -- "${P[@]}" standins --sets 20 -k 3 --seed 7 --out "$TMP/a"
json_check "summary names 20 modules" 'v["modules"] == 20 and v["k"] == 3'
check "20 module files" test "$(ls "$TMP/a/modules" | wc -l)" -eq 20
check "20 manifest lines" test "$(wc -l <"$TMP/a/manifest.jsonl")" -eq 20
check "20 API sets, 3 APIs each" python3 -c '
import json, sys
sets = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(0 if len(sets) == 20 and all(len(s["ids"]) == 3 for s in sets) else 1)' "$TMP/a/sets.jsonl"
expect_exit 0 "standins again, same seed" -- "${P[@]}" standins --sets 20 -k 3 --seed 7 --out "$TMP/b"
check "same seed: byte-identical modules and manifest" diff -r "$TMP/a" "$TMP/b"
expect_exit 0 "standins, another seed" -- "${P[@]}" standins --sets 20 -k 3 --seed 8 --out "$TMP/c"
check "another seed: other sets" bash -c "! diff -q '$TMP/a/sets.jsonl' '$TMP/c/sets.jsonl' >/dev/null"

start_ns=$(date +%s%N)
"${P[@]}" validate --manifest "$TMP/a/manifest.jsonl" --no-decontaminate --timeout 20 >"$OUT_FILE" 2>"$ERR_FILE"
rc=$?
ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
check "validate exits 0 or 1 (got $rc)" test $rc -eq 0 -o $rc -eq 1
echo "     ($(tail -1 "$ERR_FILE"); $ms ms)"
check "20 outcomes, each valid or refused with stage, rule and reason; at least 15 valid" python3 -c '
import collections, json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
split = collections.Counter("valid" if r["valid"] else r["stage"] + "." + r["rule"] for r in rows)
print("     split:", dict(split))
ok = len(rows) == 20 and all(r["valid"] or (r["stage"] and r["rule"] and r["reason"]) for r in rows)
sys.exit(0 if ok and split["valid"] >= 15 else 1)' "$OUT_FILE"

expect_exit 2 "standins: -k 0" -- "${P[@]}" standins --sets 3 -k 0 --out "$TMP/d"
expect_exit 2 "standins: k above the catalog" -- "${P[@]}" standins --sets 3 -k 100000 --out "$TMP/d"
expect_exit 2 "standins: --sets 0" -- "${P[@]}" standins --sets 0 --out "$TMP/d"
expect_exit 2 "standins: statistics file missing" -- "${P[@]}" standins --sets 3 --stats "$TMP/none.json" --out "$TMP/d"
finish
