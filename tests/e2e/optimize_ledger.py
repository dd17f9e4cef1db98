"""Checks a `kz optimize` run directory's budget ledger against its records (e2e helper).

usage: optimize_ledger.py RUN_DIR [--requests N] [--gpu-positive] [--stopped-by KEY]
Exit 0 when state.json's `budget.spent` equals, key by key, the sum of the records'
`spent` in candidates.jsonl, and every extra condition holds:
  --requests N     exactly N paid requests were spent
  --gpu-positive   some GPU (child) seconds were charged
  --stopped-by KEY the run stopped at the budget KEY, every started iteration was recorded,
                   and no paid request was left unverified
Prints what it compared, so a failing check shows why.
"""

import argparse
import json
import sys


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("run_dir")
    ap.add_argument("--requests", type=int)
    ap.add_argument("--gpu-positive", action="store_true")
    ap.add_argument("--stopped-by")
    args = ap.parse_args()
    records = [json.loads(line) for line in open(f"{args.run_dir}/candidates.jsonl")]
    state = json.load(open(f"{args.run_dir}/state.json"))
    spent = state["budget"]["spent"]
    totals = {k: sum(r.get("spent", {}).get(k, 0) for r in records) for k in spent}
    print("ledger", spent, "records", totals, "stop", state.get("stop_reason"))
    ok = all(abs(spent[k] - totals[k]) < 1e-6 for k in spent)
    if args.requests is not None:
        ok &= spent["requests"] == args.requests
    if args.gpu_positive:
        ok &= spent["gpu_s"] > 0
    if args.stopped_by:
        iterations = sum(r["iteration"] >= 0 for r in records)
        ok &= state["stop_reason"].startswith(f"budget: {args.stopped_by}")
        ok &= iterations == state["next_iteration"]
        ok &= all(r["outcome"] != "not_verified" for r in records)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
