#!/usr/bin/env bash
# kz bench --server end to end against a real kz serve --cpu started here (loopback): the
# same report as in process, verdicts with their job ids, a run killed midway and resumed
# (no sample verified twice: the server accepted each sample exactly once), 429 back-off,
# per-sample server errors recorded and retried, and unreachable or bad server URLs.
KZ=$1
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/serve_lib.sh"
S=tests/bench_suite
python3 $S/make_generations.py "$TMP/gens.jsonl"
# 8 distinct samples of L1_1 (a comment makes each one's content differ), alternately right and wrong.
python3 - "$TMP/gens8.jsonl" <<'PY'
import json, pathlib, sys
k = pathlib.Path("tests/bench_suite/kernels")
ok, wrong = (k / "relu_ok.py").read_text(), (k / "relu_wrong.py").read_text()
with open(sys.argv[1], "w") as f:
    for s in range(8):
        f.write(json.dumps({"task": "L1_1", "sample": s, "code": f"# sample {s}\n" + (ok if s % 2 == 0 else wrong)}) + "\n")
PY
B=("$KZ" bench --suite $S --timeout 120)

# rcheck NAME DIR PYTHON_EXPR: EXPR with r = DIR/report.json, o = its overall metrics,
# v = the list of DIR/verdicts.jsonl records.
rcheck() {
  if python3 - "$2" "$3" <<'PY'
import json, sys
d = sys.argv[1]
r = json.load(open(d + "/report.json"))
v = [json.loads(l) for l in open(d + "/verdicts.jsonl")]
sys.exit(0 if eval(sys.argv[2], {"r": r, "o": r["metrics"].get("overall", {}), "v": v}) else 1)
PY
  then ok "$1"; else FAILS=$((FAILS + 1)); echo "FAIL $1: $3"
    python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(json.dumps({k: r.get(k) for k in ("samples", "warnings")}), json.dumps(r["metrics"].get("overall"))[:600])' "$2/report.json"; fi
}
# accepted: the server's count of accepted (new) jobs.
accepted() { curl -s "$BASE/metrics" | awk -F' ' '/^kz_requests_total\{outcome="accepted"\}/ {print $2}'; }

expect_exit 4 "unreachable server" -- "${B[@]}" --generations "$TMP/gens.jsonl" --out "$TMP/o0" --server http://127.0.0.1:1
err_contains "unreachable is a clear error" "cannot reach kz serve at http://127.0.0.1:1"
expect_exit 2 "a URL that is not http(s) refused" -- "${B[@]}" --generations "$TMP/gens.jsonl" --out "$TMP/o0" --server ftp://127.0.0.1:1

start_server
O=$TMP/out
# TLS failure: https:// to the plain-HTTP kz serve: a clear message, exit 4, nothing written lost.
expect_exit 4 "https to a plain-HTTP server" -- "${B[@]}" --generations "$TMP/gens.jsonl" --out "$TMP/o0" --server "${BASE/http:/https:}"
err_contains "TLS failure named" "TLS failure with 127.0.0.1:"
expect_exit 0 "bench through the server" -- "${B[@]}" --generations "$TMP/gens.jsonl" --out "$O" --server "$BASE" --cpu
err_contains "progress line" "4/4 verified, 3 correct"
err_contains "local-only flag noted" "--cpu has no effect with --server"
rcheck "pass@1 is 7/12 as in process" "$O" 'abs(o["pass@1"] - 7/12) < 1e-12 and r["samples"]["verified"] == 4'
rcheck "records carry the job ids" "$O" 'len(v) == 4 and all(x["server"]["job"] and x["server"]["url"] for x in v) and r["server"]["url"]'
[[ $(accepted) == 3 ]] && ok "3 jobs accepted (L2_1's samples 0 and 2 are the same code: deduplicated)" || bad "accepted: $(accepted), want 3"

# Killed midway, then resumed: nothing in verdicts.jsonl is sent again, and what was sent
# but not finished is deduplicated by the server.
K=$TMP/killed
"${B[@]}" --generations "$TMP/gens8.jsonl" --out "$K" --server "$BASE" --batch 2 >"$TMP/k1.out" 2>"$TMP/k1.err" &
BENCH=$!
for _ in $(seq 600); do
  [[ -f $K/verdicts.jsonl ]] && (( $(wc -l < "$K/verdicts.jsonl") >= 2 )) && break
  kill -0 $BENCH 2>/dev/null || break
  sleep 0.2
done
kill -KILL $BENCH 2>/dev/null; wait $BENCH 2>/dev/null
DONE_AT_KILL=$(wc -l < "$K/verdicts.jsonl")
(( DONE_AT_KILL >= 2 && DONE_AT_KILL < 8 )) && ok "killed midway ($DONE_AT_KILL of 8 verdicts)" || bad "killed with $DONE_AT_KILL of 8 verdicts"
expect_exit 0 "resumed run" -- "${B[@]}" --generations "$TMP/gens8.jsonl" --out "$K" --server "$BASE" --batch 2
err_contains "resume reported" "$DONE_AT_KILL resumed from verdicts.jsonl"
rcheck "8 verdicts, each sample once" "$K" 'len(v) == 8 and len({(x["task"], x["sample"], x["code_xxh"]) for x in v}) == 8'
rcheck "pass@1 4/8, resumed + verified = 8" "$K" 'abs(o["pass@1"] - 0.5) < 1e-12 and r["samples"]["resumed"] + r["samples"]["verified"] == 8'
A=$(accepted); [[ $A == 11 ]] && ok "the server accepted each of the 8 samples once (11 jobs in all)" || { bad "accepted: $A, want 11"; curl -s "$BASE/metrics" | grep kz_requests_total; }
expect_exit 0 "third run verifies nothing" -- "${B[@]}" --generations "$TMP/gens8.jsonl" --out "$K" --server "$BASE"
err_contains "all resumed" "8 resumed from verdicts.jsonl"

# Server errors are per sample, recorded, and retried by the next run: with a server that
# runs nothing (--no-run) the jobs stay queued; cancelling them (DELETE) ends each one.
stop_server "kz serve stops"
start_server --no-run
SE=$TMP/se
"${B[@]}" --generations "$TMP/gens.jsonl" --out "$SE" --server "$BASE" --trials 2 >"$TMP/se.out" 2>"$TMP/se.err" &
BENCH=$!
CANCELLED=0
for _ in $(seq 300); do  # cancel the 4 queued jobs as they appear
  for id in $(python3 -c 'import sqlite3, sys; print(" ".join(r[0] for r in sqlite3.connect(sys.argv[1]).execute("select id from jobs where state = ?", ("queued",))))' "$TMP/jobs.db" 2>/dev/null); do
    curl -s -o /dev/null -X DELETE "$BASE/v1/jobs/$id" && CANCELLED=$((CANCELLED + 1))
  done
  kill -0 $BENCH 2>/dev/null || break
  sleep 0.2
done
wait $BENCH; RC=$?
[[ $RC -eq 0 ]] && ok "cancelled jobs do not abort the run (exit 0)" || bad "bench exited $RC with cancelled jobs"
grep -q "server error: job .* was cancelled on the server" "$TMP/se.err" && ok "server errors on stderr" || bad "no server error line: $(tail -c 500 "$TMP/se.err")"
rcheck "server_error recorded per sample, counted incorrect, warned" "$SE" 'len(v) == 4 and all(x["status"] == "server_error" for x in v) and o["pass@1"] == 0 and any("server_error" in w for w in r["warnings"])'
stop_server "kz serve stops"
start_server
expect_exit 0 "next run retries the server errors" -- "${B[@]}" --generations "$TMP/gens.jsonl" --out "$SE" --server "$BASE" --trials 2
err_contains "none of them resumed" "0 resumed from verdicts.jsonl"
rcheck "now verified: pass@1 7/12" "$SE" 'abs(o["pass@1"] - 7/12) < 1e-12 and r["samples"]["verified"] == 4 and "warnings" not in r'

# 429: a queue of one job and batches of 4: the batch is halved and retried after Retry-After.
stop_server "kz serve stops"
start_server --max-queue 1
expect_exit 0 "full queue: backs off and finishes" -- "${B[@]}" --generations "$TMP/gens.jsonl" --out "$TMP/busy" --server "$BASE" --trials 3 --batch 4
err_contains "429 noted" "server busy (HTTP 429"
rcheck "all verified despite 429s" "$TMP/busy" 'abs(o["pass@1"] - 7/12) < 1e-12 and r["samples"]["verified"] == 4'
stop_server "kz serve stops"
finish
