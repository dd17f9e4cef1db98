"""Timing agreement: kz verify's medians beside triton.testing.do_bench's, on three tasks.

Runs on a GPU host. For each task: `kz verify --json` REPEATS times (fresh child each) and
do_bench REPEATS times in one process, interleaved. Prints a table (ratios kz/do_bench and
kz's run-to-run spread) and writes every number to OUT/timing_agreement.json.

Usage: python bench/timing/run.py --kz build/bin/kz [--repeats 3] [--out DIR] [--kz-arg=ARG ...]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TASKS = ["relu_32m", "softmax_128m", "axpb_256m"]


def run_kz(kz, task, cand, cache, extra=()):
    cmd = [kz, "-q", "verify", "--json", "--ref", task, "--candidate", cand, "--cache-dir", cache, *extra]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    v = json.loads(p.stdout.strip().splitlines()[-1])
    if v["status"] != "correct":
        raise SystemExit(f"{task}: kz verify said {v['status']}: {v['reason']}")
    t = v["stages"]["timing"]
    return t["candidate"]["median_us"], t["reference"]["median_us"], t


def run_do_bench(python, task, cand, repeats):
    p = subprocess.run([python, os.path.join(HERE, "do_bench_one.py"), task, cand, str(repeats)],
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise SystemExit(f"do_bench failed: {p.stderr[-2000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def spread(xs):
    return (max(xs) - min(xs)) / statistics.median(xs) * 100.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kz", required=True)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--kz-arg", action="append", default=[],
                    help="an extra kz verify argument (repeatable), e.g. --kz-arg=--timing-ci --kz-arg=0.02")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--python", default=os.environ.get("KZ_PYTHON", sys.executable))
    args = ap.parse_args()
    cache = os.path.join(args.out, "cache")
    results = []
    for name in TASKS:
        task = os.path.join(HERE, "tasks", name + ".py")
        cand = os.path.join(HERE, "candidates", name + ".py")
        kz_c, kz_r, raw = [], [], []
        t0 = time.time()
        for _ in range(args.repeats):
            c, r, t = run_kz(args.kz, task, cand, cache, args.kz_arg)
            kz_c.append(c), kz_r.append(r), raw.append(t)
        db = run_do_bench(args.python, task, cand, args.repeats)
        row = {
            "task": name,
            "kz_candidate_us": kz_c, "kz_reference_us": kz_r,
            "do_bench_candidate_us": db["candidate_us"], "do_bench_reference_us": db["reference_us"],
            "ratio_candidate": statistics.median(kz_c) / statistics.median(db["candidate_us"]),
            "ratio_reference": statistics.median(kz_r) / statistics.median(db["reference_us"]),
            "kz_spread_candidate_pct": spread(kz_c), "kz_spread_reference_pct": spread(kz_r),
            "seconds": time.time() - t0, "kz_timing": raw,
        }
        results.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "kz_timing"}), flush=True)
    with open(os.path.join(args.out, "timing_agreement.json"), "w") as f:
        json.dump(results, f, indent=2)
    print(f"\nkz verify {' '.join(args.kz_arg) or '(default timing)'}")
    print("| task | kz cand µs | do_bench cand µs | ratio | kz ref µs | do_bench ref µs | ratio | kz spread cand/ref % | kz calls |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['task']} | {statistics.median(r['kz_candidate_us']):.1f} | "
              f"{statistics.median(r['do_bench_candidate_us']):.1f} | {r['ratio_candidate']:.3f} | "
              f"{statistics.median(r['kz_reference_us']):.1f} | {statistics.median(r['do_bench_reference_us']):.1f} | "
              f"{r['ratio_reference']:.3f} | {r['kz_spread_candidate_pct']:.2f} / {r['kz_spread_reference_pct']:.2f} | "
              f"{statistics.median(t['candidate']['calls'] for t in r['kz_timing']):.0f} |")


if __name__ == "__main__":
    main()
