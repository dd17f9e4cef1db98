#!/usr/bin/env python3
"""Summarises bench/throughput runs: one verdict file (kz verify --json) and one wall time per
concurrency K, all on the same manifest. Per K: wall, samples per GPU-hour, verdicts as
expected, statuses equal to K=1's, the median per-sample ratio of the timed candidate's
median (K vs K=1) for samples correct in both, gate waits. Then where a run child's time
goes: per K the mean seconds of each worker stage (profile.stages), the child's wall, the
time the gate held it, and the GPU-time floor of the timed samples (below). Markdown tables.

GPU-time floor of a correct, timed sample: the device time its calls needed at the measured
medians: TRIALS x (reference + candidate median) for correctness plus calls x median of each
side for timing (warm-up, extra checks and rechecks not counted: a lower bound).

Usage: summarize.py MANIFEST RUN_DIR K1 [K2 ...]   (RUN_DIR/k<K>.jsonl and RUN_DIR/k<K>.wall)"""
import json
import statistics
import sys

TRIALS = 5  # kz verify's default correctness trials
manifest, run, ks = sys.argv[1], sys.argv[2], [int(k) for k in sys.argv[3:]]
expect = {json.loads(l)["candidate"]: json.loads(l)["expect"] for l in open(manifest) if l.strip()}


def load(k):
    vs = {}
    for line in open(f"{run}/k{k}.jsonl"):
        if line.startswith("{"):
            v = json.loads(line)
            vs[v["candidate"]["path"]] = v
    return vs, float(open(f"{run}/k{k}.wall").read())


def cand_ms(v):
    t = (v.get("stages") or {}).get("timing") or {}
    return (t.get("candidate") or {}).get("median_us") if isinstance(t.get("candidate"), dict) else None


base, _ = load(ks[0])
rows = []
for k in ks:
    vs, wall = load(k)
    n = len(vs)
    as_expected = sum((v["status"] == "correct") == (expect.get(p) == "correct") for p, v in vs.items())
    same = sum(v["status"] == base.get(p, {}).get("status") for p, v in vs.items())
    ratios = [cand_ms(v) / cand_ms(base[p]) for p, v in vs.items()
              if v["status"] == "correct" and base.get(p, {}).get("status") == "correct" and cand_ms(v) and cand_ms(base[p])]
    waits = [((v.get("profile") or {}).get("gate") or {}).get("exclusive_wait_s", 0) for v in vs.values()]
    rows.append((k, n, wall, n / wall * 3600, as_expected, same,
                 statistics.median(ratios) if ratios else float("nan"), len(ratios),
                 max(waits) if waits else 0.0))
print("| K | samples | wall s | samples per GPU-hour | vs K=%d | as expected | status = K=%d | timed median ratio vs K=%d (n) | max exclusive wait s |" % (ks[0], ks[0], ks[0]))
print("|---|---|---|---|---|---|---|---|---|")
b = rows[0][3]
for k, n, wall, rate, ok, same, ratio, nr, wait in rows:
    print(f"| {k} | {n} | {wall:.1f} | {rate:.0f} | {rate / b:.2f}x | {ok}/{n} | {same}/{n} | {ratio:.3f} ({nr}) | {wait:.2f} |")


def floor_s(v):
    t = (v.get("stages") or {}).get("timing") or {}
    ref, cand = t.get("reference"), t.get("candidate")
    if t.get("status") != "ok" or not isinstance(ref, dict) or not isinstance(cand, dict):
        return None
    per = lambda side: side["median_us"] * 1e-6  # noqa: E731
    return TRIALS * (per(ref) + per(cand)) + ref["calls"] * per(ref) + cand["calls"] * per(cand)


stages = ["load", "parameters", "correctness", "trace", "extra_checks", "timing"]
print()
print("| K | " + " | ".join(f"{s} s" for s in stages) + " | child wall s | gate held s | floor s (timed) | wall / floor (timed) |")
print("|---|" + "---|" * (len(stages) + 4))
mean = lambda xs: sum(xs) / len(xs) if xs else float("nan")  # noqa: E731
for k in ks:
    vs, _ = load(k)
    per_stage = [mean([((v.get("profile") or {}).get("stages") or {}).get(s, {}).get("seconds", 0.0)
                       for v in vs.values() if (v.get("profile") or {}).get("stages")]) for s in stages]
    walls = [(v.get("child") or {}).get("wall_s") for v in vs.values() if (v.get("child") or {}).get("wall_s")]
    held = [(v.get("child") or {}).get("gate_held_s", 0.0) for v in vs.values() if v.get("child")]
    timed = [(v["child"]["wall_s"], floor_s(v)) for v in vs.values() if floor_s(v) and (v.get("child") or {}).get("wall_s")]
    ratio = statistics.median([w / f for w, f in timed]) if timed else float("nan")
    print(f"| {k} | " + " | ".join(f"{x:.3f}" for x in per_stage) +
          f" | {mean(walls):.2f} | {mean(held):.2f} | {mean([f for _, f in timed]):.4f} | {ratio:.1f} |")
