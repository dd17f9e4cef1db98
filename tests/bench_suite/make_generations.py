"""Writes generations.jsonl from kernels/: the e2e fixture of `kz bench` (tests/e2e/bench_cli.sh).

Expected (hand-computed): L1_1 has samples 0 (correct) and 1 (wrong): pass@1 = 1/2;
L2_1 has samples 0 and 2 (correct) and 1 (empty code, scored incorrect): pass@1 = 2/3;
overall pass@1 = (1/2 + 2/3) / 2 = 7/12. Bad inputs: empty_code (L2_1/1), unknown_task
(L9_9), duplicate_sample (L1_1/0 again), malformed_line (line 7).
"""
import json
import pathlib
import sys

here = pathlib.Path(__file__).parent
k = {p.stem: p.read_text() for p in (here / "kernels").glob("*.py")}
rows = [
    {"task": "L1_1", "sample": 0, "code": k["relu_ok"], "output_tokens": 100},
    {"task": {"level": 1, "problem": 1}, "sample": 1, "code": k["relu_wrong"], "output_tokens": 200, "backend": "triton"},
    {"task": "L2_1", "sample": 0, "code": k["row_sum_ok"], "output_tokens": 300},
    {"task": "L2_1", "sample": 1, "code": "  \n", "output_tokens": 5},
    {"task": "L9_9", "sample": 0, "code": k["relu_ok"]},
    {"task": "L1_1", "sample": 0, "code": k["relu_wrong"]},
]
lines = [json.dumps(r) for r in rows]
lines.append('{"task": "L2_1", "sample": 2, "code": ')  # malformed: line 7
lines.append(json.dumps({"task": "L2_1", "sample": 2, "code": k["row_sum_ok"], "output_tokens": 400}))
pathlib.Path(sys.argv[1]).write_text("\n".join(lines) + "\n")
