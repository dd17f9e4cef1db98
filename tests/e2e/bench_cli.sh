#!/usr/bin/env bash
# kz bench end to end on the tiny fixture suite (tests/bench_suite): report numbers against
# the hand computation in make_generations.py, bad inputs listed, resume after a finished
# run and after a kill (torn last line). CPU-only host: Triton under the interpreter.
KZ=$1
source "$(dirname "$0")/lib.sh"
S=tests/bench_suite
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
python3 $S/make_generations.py "$W/gens.jsonl"
B=("$KZ" bench --suite $S --cpu --cache-dir "$CACHE_DIR" --timeout 120)

# report_check NAME DIR PYTHON_EXPR: evaluates EXPR with r = DIR/report.json.
report_check() {
  if python3 - "$2/report.json" "$3" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2], {"r": r, "o": r["metrics"].get("overall", {})}) else 1)
PY
  then PASSES=$((PASSES + 1)); echo "ok   $1"
  else FAILS=$((FAILS + 1)); echo "FAIL $1: $3"; head -c 1500 "$2/report.json"; fi
}

expect_exit 2 "bench without --suite" -- "$KZ" bench --generations "$W/gens.jsonl" --out "$W/o"
err_contains "missing options are named" "--suite, --generations (or --generate) and --out are required"
expect_exit 2 "suite that does not exist" -- "${B[@]/$S//nonexistent}" --generations "$W/gens.jsonl" --out "$W/o"
expect_exit 2 "generations that do not exist" -- "${B[@]}" --generations "$W/none.jsonl" --out "$W/o"

O=$W/out
expect_exit 0 "first run completes" -- "${B[@]}" --generations "$W/gens.jsonl" --out "$O"
err_contains "progress line" "4/4 verified, 3 correct"
report_check "pass@1 is 7/12 (hand-computed)" "$O" 'abs(o["pass@1"] - 7/12) < 1e-12'
report_check "per-level pass@1" "$O" 'r["metrics"]["level_1"]["pass@1"] == 0.5 and abs(r["metrics"]["level_2"]["pass@1"] - 2/3) < 1e-12'
report_check "sample counts" "$O" 'r["samples"]["verified"] == 4 and r["samples"]["resumed"] == 0 and r["samples"]["bad_input"] == 4 and r["samples"]["total"] == 8'
report_check "bad inputs listed" "$O" 'sorted(b["kind"] for b in r["bad_inputs"]) == ["duplicate_sample", "empty_code", "malformed_line", "unknown_task"]'
report_check "malformed line numbered" "$O" 'any(b["origin"].endswith(":7") for b in r["bad_inputs"] if b["kind"] == "malformed_line")'
report_check "mean tokens (empty code counts its 5)" "$O" 'abs(o["mean_output_tokens"] - 1005/5) < 1e-9'
report_check "plots: SVG written, PNG made or skipped with a reason" "$O" '"fast_p_overall.svg" in r["plots"]["svg"] and (r["plots"]["png"] or r["plots"]["png_skipped"])'
check "report.md has the table" grep -q '^| overall | 2 | 5 | 0.583 |' "$O/report.md"
check "SVG is well-formed XML" python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "$O/fast_p_overall.svg"
check "samples written" test -f "$O/samples/L2_1/2.py"
check "4 verdict lines" test "$(wc -l < "$O/verdicts.jsonl")" -eq 4

expect_exit 0 "second run resumes everything" -- "${B[@]}" --generations "$W/gens.jsonl" --out "$O"
err_contains "resume is reported" "4 resumed from verdicts.jsonl"
report_check "0 newly verified" "$O" 'r["samples"]["verified"] == 0 and r["samples"]["resumed"] == 4 and abs(o["pass@1"] - 7/12) < 1e-12'

# A kill mid-write: the last line is torn; exactly that sample is verified again.
python3 - "$O/verdicts.jsonl" <<'PY'
import sys
p = sys.argv[1]; data = open(p, "rb").read()
last = data.rstrip(b"\n").rfind(b"\n") + 1
open(p, "wb").write(data[: last + (len(data) - last) // 2])
PY
expect_exit 0 "run after a kill" -- "${B[@]}" --generations "$W/gens.jsonl" --out "$O"
err_contains "torn line ignored" "3 resumed from verdicts.jsonl (1 torn or unreadable lines ignored)"
report_check "exactly one sample re-verified" "$O" 'r["samples"]["verified"] == 1 and r["samples"]["resumed"] == 3 and abs(o["pass@1"] - 7/12) < 1e-12'
check "log is whole again" python3 -c 'import json, sys; ls = open(sys.argv[1]).read().splitlines(); [json.loads(l) for l in ls]; sys.exit(len(ls) != 4)' "$O/verdicts.jsonl"

rm "$O/report.json" "$O/report.md"
expect_exit 0 "kz bench report recomputes" -- "$KZ" bench report --out "$O"
report_check "recomputed pass@1" "$O" 'abs(o["pass@1"] - 7/12) < 1e-12'
expect_exit 2 "kz bench report on a directory that is not a run" -- "$KZ" bench report --out "$W"

expect_exit 0 "--task filter (all resumed)" -- "${B[@]}" --generations "$W/gens.jsonl" --out "$O" --task L2_1
report_check "only L2_1 scored" "$O" 'list(r["metrics"]) == ["level_2", "overall"] and abs(o["pass@1"] - 2/3) < 1e-12 and r["samples"]["verified"] == 0'

# KernelBench's directory layout, with a file that is not UTF-8 and one with another name.
G=$W/gens_dir; mkdir -p "$G"
python3 - "$G" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1] + "/../gens.jsonl") if l.strip().endswith("}")]
open(sys.argv[1] + "/level_1_problem_1_sample_0_kernel.py", "w").write(rows[0]["code"])
open(sys.argv[1] + "/level_1_problem_1_sample_1_kernel.py", "wb").write(b"# caf\xe9\n" + rows[0]["code"].encode())
open(sys.argv[1] + "/notes.py", "w").write("x = 1\n")
PY
expect_exit 0 "directory layout with --level 1" -- "${B[@]}" --generations "$G" --out "$W/out2" --level 1
report_check "not-UTF-8 file counted incorrect" "$W/out2" 'o["pass@1"] == 0.5 and {b["kind"] for b in r["bad_inputs"]} == {"not_utf8", "unrecognized_file"}'
finish
