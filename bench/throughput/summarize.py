#!/usr/bin/env python3
"""Summarises bench/throughput runs: one verdict file (kz verify --json) and one wall time per
concurrency K, all on the same manifest. Per K: wall, samples per GPU-hour, verdicts as
expected, statuses equal to K=1's, the median per-sample ratio of the timed candidate's
median (K vs K=1) for samples correct in both, gate waits. A markdown table last.

Usage: summarize.py MANIFEST RUN_DIR K1 [K2 ...]   (RUN_DIR/k<K>.jsonl and RUN_DIR/k<K>.wall)"""
import json
import statistics
import sys

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
