"""Cost of the integrity checks: `kz verify` wall time per sample with every check on
(default, policy strict) against `--no-integrity` (correctness and timing only).

Runs on a GPU host. For each of three honest corpus samples, REPEATS runs of each mode,
alternating (on, off, on, off, ...), each a fresh `kz verify` on a warm extension cache
(one untimed run first builds it). The figure is the sample's own wall time
(`verdict.seconds`: screen, child start, load, correctness, trace, extra checks, timing)
and the whole command's wall time. Prints a table of medians and ratios and writes every
number to OUT/integrity_overhead.json.

Usage: python bench/integrity/run.py --kz build/bin/kz [--repeats 3] [--out DIR]
"""
import argparse
import json
import os
import statistics
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLES = [("softmax", "softmax_online_cuda"), ("layernorm", "layernorm_triton"),
           ("matmul", "matmul_tiled_cuda")]


def verify(kz, task, cand, cache, integrity):
    cmd = [kz, "-q", "verify", "--json", "--ref", task, "--candidate", cand, "--cache-dir", cache]
    if not integrity:
        cmd.append("--no-integrity")
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    wall = time.monotonic() - t0
    v = json.loads(p.stdout.strip().splitlines()[-1])
    if v["status"] != "correct":
        raise SystemExit(f"{cand} (integrity={integrity}): {v['status']}: {v['reason']}")
    stages = {k: s.get("seconds") for k, s in v["stages"].items() if isinstance(s, dict)}
    return {"sample_s": v["seconds"], "command_s": wall, "stages": stages,
            "timing_calls": v["stages"]["timing"]["candidate"].get("calls")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kz", required=True)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    args = ap.parse_args()
    cache = os.path.join(args.out, "integrity-cache")
    rows, raw = [], {}
    for task_name, cand_name in SAMPLES:
        task = os.path.join(ROOT, "tests/corpus/tasks", task_name + ".py")
        cand = os.path.join(ROOT, "tests/corpus/honest", cand_name + ".py")
        verify(args.kz, task, cand, cache, True)  # warm the extension cache (untimed)
        runs = {True: [], False: []}
        for _ in range(args.repeats):
            for mode in (True, False):
                runs[mode].append(verify(args.kz, task, cand, cache, mode))
        raw[cand_name] = {"on": runs[True], "off": runs[False]}
        med = lambda mode, key: statistics.median(r[key] for r in runs[mode])  # noqa: E731
        rows.append((cand_name, med(False, "sample_s"), med(True, "sample_s"),
                     med(False, "command_s"), med(True, "command_s")))
    with open(os.path.join(args.out, "integrity_overhead.json"), "w") as f:
        json.dump(raw, f, indent=1)
    print(f"{'sample':24s} {'off s':>7s} {'on s':>7s} {'ratio':>6s} | {'cmd off':>7s} {'cmd on':>7s} {'ratio':>6s}")
    for name, off, on, coff, con in rows:
        print(f"{name:24s} {off:7.2f} {on:7.2f} {on / off:6.3f} | {coff:7.2f} {con:7.2f} {con / coff:6.3f}")


if __name__ == "__main__":
    main()
