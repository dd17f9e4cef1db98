#!/usr/bin/env python3
"""A mixed batch through `kz serve` on the GPUs (issue 5: 200 samples, every verdict
right, slot busy >= 80 % after the first compile; issue 7: throughput on 1, 2, 4, 8 GPUs
and timing agreement between GPUs).

The batch cycles (alternating the two manifests) through every labelled sample of examples/manifest.jsonl (correct, wrong,
crashing, hanging, compile errors; CUDA and Triton) and tests/corpus/manifest.jsonl
(cheats and honest kernels), each copy made distinct by a trailing comment (no
deduplication; the CUDA sources are unchanged, so a copy's extension is a cache hit).
For each --gpus setting it starts a fresh `kz serve --gpus ...` (new --db, shared
--cache-dir), submits the batch with POST /v1/batch, waits for every verdict, and reads
/metrics. Checks each verdict against its label (status; rule ids for the corpus).

  python3 bench/serve/gpu_batch.py --kz build/bin/kz --count 200 --gpus 0 --gpus 0,1 --out OUT

Writes OUT/gpu_batch.json (every run, every verdict's status/seconds/timing) and prints a
table: samples, wall, samples per hour and per GPU-hour, slot utilisation after the
first slot start, verdict mismatches; then, when two runs share samples, the per-sample
timing agreement (candidate median, GPU k of the larger run vs the first run).
Standard library only. Exit 1 on any verdict mismatch.
"""
import argparse
import http.client
import json
import os
import re
import socket
import sqlite3
import statistics
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from corpus_check import rules_seen  # noqa: E402


def labelled_samples(cpu=False):
    """(task path, candidate path, backend, expected status, expected rules) of both manifests
    (with cpu: the examples only, with their CPU labels — a smoke test of this script)."""
    out = []
    for line in open(os.path.join(ROOT, "examples/manifest.jsonl")):
        if line.strip():
            d = json.loads(line)
            out.append((d["task"], d["candidate"], d["backend"], d["expect_cpu" if cpu else "expect_gpu"], []))
    if cpu:
        return out
    for line in open(os.path.join(ROOT, "tests/corpus/manifest.jsonl")):
        if line.strip():
            d = json.loads(line)
            out.append((d["task"], d["candidate"], d["backend"], d["expect_status"], d.get("expect_rules", [])))
    return out


def interleave(samples):
    """Examples and corpus entries alternated, so that a short batch has both."""
    ex = [s for s in samples if s[1].startswith("examples/")]
    co = [s for s in samples if not s[1].startswith("examples/")]
    out = []
    for i in range(max(len(ex), len(co))):
        out += ([ex[i]] if i < len(ex) else []) + ([co[i]] if i < len(co) else [])
    return out


def make_batch(count, cpu=False):
    base = interleave(labelled_samples(cpu))
    batch = []
    for i in range(count):
        task, cand, backend, want, rules = base[i % len(base)]
        text = open(os.path.join(ROOT, cand)).read() + f"\n# batch copy {i // len(base)}\n"
        batch.append({"sample": {"task": open(os.path.join(ROOT, task)).read(), "candidate": text,
                                 "backend": backend},
                      "name": os.path.basename(cand), "copy": i // len(base), "want": want, "rules": rules})
    return batch


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def call(port, method, path, body=None, timeout=60):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    conn.request(method, path, body=json.dumps(body) if body is not None else None,
                 headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    data = r.read()
    conn.close()
    return r.status, data


def metric(text, name):
    m = re.search("^" + re.escape(name) + r" (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


def run_once(args, gpus, batch, run_dir, extra=()):
    os.makedirs(run_dir, exist_ok=True)
    port = free_port()
    db = os.path.join(run_dir, "jobs.db")
    cmd = [args.kz, "serve", "--port", str(port), "--db", db, "--cache-dir", args.cache_dir,
           "--timeout", str(args.timeout), "--max-batch", "4096"]
    cmd += ["--cpu", "--cpu-slots", str(len(gpus.split(",")))] if args.cpu else ["--gpus", gpus]
    if args.build_threads:
        cmd += ["--build-threads", str(args.build_threads)]
    if args.gpu_concurrency > 1 and not args.cpu:
        cmd += ["--gpu-concurrency", str(args.gpu_concurrency)]
    cmd += list(extra)
    log = open(os.path.join(run_dir, "serve.log"), "w")
    server = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(120):
            try:
                if call(port, "GET", "/healthz", timeout=2)[0] == 200:
                    break
            except OSError:
                time.sleep(0.5)
        t0 = time.time()
        status, data = call(port, "POST", "/v1/batch", {"samples": [b["sample"] for b in batch], "client": "bench"})
        if status != 202:
            raise SystemExit(f"batch refused: HTTP {status} {data[:300]}")
        ids = [j["id"] for j in json.loads(data)["jobs"]]
        con = sqlite3.connect(db)
        while True:
            left = con.execute("select count(*) from jobs where state in ('queued','running')").fetchone()[0]
            if left == 0 or time.time() - t0 > args.max_wait:
                break
            time.sleep(1)
        wall = time.time() - t0
        metrics = call(port, "GET", "/metrics")[1].decode()
        rows = {r[0]: r[1:] for r in con.execute("select id, state, verdict, started_at, finished_at from jobs")}
    finally:
        server.terminate()
        server.wait(timeout=120)
    results, first_start, last_end = [], None, None
    for b, jid in zip(batch, ids):
        state, verdict, started, finished = rows[jid]
        v = json.loads(verdict) if verdict else {}
        t = v.get("stages", {}).get("timing", {})
        ran = bool(v.get("child"))
        if ran and started:
            first_start = started if first_start is None else min(first_start, started)
        if finished:
            last_end = finished if last_end is None else max(last_end, finished)
        missing = [r for r in b["rules"] if r not in rules_seen(v)] if v else b["rules"]
        results.append({"name": b["name"], "copy": b["copy"], "state": state, "status": v.get("status"),
                        "want": b["want"], "ok": v.get("status") == b["want"] and not missing,
                        "missing_rules": missing, "seconds": v.get("seconds"),
                        "device": v.get("device", {}).get("index"),
                        "candidate_us": t.get("candidate", {}).get("median_us") if t.get("status") == "ok" else None,
                        "reason": v.get("reason", "")[:160]})
    n_slots = len(gpus.split(","))
    busy = metric(metrics, "kz_gpu_slot_busy_seconds_total") or 0
    window = (last_end - first_start) / 1000 if first_start and last_end else None
    return {"gpus": gpus, "slots": n_slots, "samples": len(batch), "wall_s": wall,
            "samples_per_hour": len(batch) / wall * 3600, "samples_per_gpu_hour": len(batch) / wall * 3600 / n_slots,
            "busy_s": busy, "window_after_first_start_s": window,
            "utilisation_after_first_start": busy / (n_slots * window) if window else None,
            "per_slot_busy_s": {m.group(1): float(m.group(2)) for m in
                                re.finditer(r'^kz_slot_busy_seconds_total\{slot="([^"]+)"\} (\S+)$', metrics, re.M)},
            "mismatches": [r for r in results if not r["ok"]], "results": results}


def agreement(a, b):
    """Per (name, copy) candidate medians of run b on each GPU vs run a: {device: [(name, ratio b/a)]}."""
    base = {(r["name"], r["copy"]): r["candidate_us"] for r in a["results"] if r["candidate_us"]}
    out = {}
    for r in b["results"]:
        k = (r["name"], r["copy"])
        if r["candidate_us"] and base.get(k):
            out.setdefault(r["device"], []).append((r["name"], r["candidate_us"] / base[k]))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kz", default=os.path.join(ROOT, "build/bin/kz"))
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--gpus", action="append",
                    help="a GPU list per run, e.g. --gpus 0 --gpus 0,1; prefix warm: (fills the caches, not "
                         "compared) or noprestart: (kz serve --no-prestart, compared with the plain run)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--cache-dir", default="/tmp/kz-gpu-batch-cache")
    ap.add_argument("--timeout", type=float, default=60, help="kz serve --timeout (the hanging samples)")
    ap.add_argument("--build-threads", type=int, default=0)
    ap.add_argument("--max-wait", type=float, default=540)
    ap.add_argument("--gpu-concurrency", type=int, default=1,
                    help="kz serve --gpu-concurrency K: K slots per listed GPU sharing its timing gate")
    ap.add_argument("--warm", action="store_true", help="first run the batch once on GPU 0 to fill the caches")
    ap.add_argument("--cpu", action="store_true", help="smoke test: kz serve --cpu, one CPU slot per listed GPU")
    args = ap.parse_args()
    batch = make_batch(args.count, args.cpu)
    runs = []
    plan = (["warm:" + args.gpus[0].split(",")[0]] if args.warm else []) + (args.gpus or ["0"])
    for n, g in enumerate(plan):
        name = f"{n}_" + g.replace(",", "_").replace(":", "_")
        extra = ["--no-prestart"] if g.startswith("noprestart:") else []
        r = run_once(args, g.split(":")[-1], batch, os.path.join(args.out, "run_" + name), extra)
        r["label"] = g
        runs.append(r)
        json.dump(runs, open(os.path.join(args.out, "gpu_batch.json"), "w"), indent=1)
        print(f"{g}: {r['samples']} samples in {r['wall_s']:.1f} s, {len(r['mismatches'])} mismatches", flush=True)
    print("\n| run | GPUs | samples | wall s | samples/h | per GPU-hour | slot busy after first start | mismatches |")
    print("|---|---|---|---|---|---|---|---|")
    for r in runs:
        u = r["utilisation_after_first_start"]
        print(f"| {r['label']} | {r['slots']} | {r['samples']} | {r['wall_s']:.1f} | {r['samples_per_hour']:.0f} | "
              f"{r['samples_per_gpu_hour']:.0f} | {u * 100:.1f} % | {len(r['mismatches'])} |" if u else
              f"| {r['label']} | {r['slots']} | {r['samples']} | {r['wall_s']:.1f} | - | - | - | {len(r['mismatches'])} |")
    timed = [r for r in runs if not r["label"].startswith(("warm", "noprestart"))]
    single = next((r for r in timed if r["slots"] == 1), None)
    for r in runs:
        if r["label"].startswith("noprestart") and single and single["slots"] == r["slots"]:
            print(f"prestarted children: {r['wall_s'] / single['wall_s']:.2f}x the throughput of fresh ones "
                  f"({r['label']} {r['wall_s']:.1f} s vs {single['label']} {single['wall_s']:.1f} s)")
    if single:
        for r in timed:
            if r is single:
                continue
            for dev, pairs in sorted(agreement(single, r).items(), key=lambda kv: str(kv[0])):
                ratios = [x for _, x in pairs]
                within = sum(1 for x in ratios if abs(x - 1) <= 0.03) / len(ratios)
                outside = ", ".join(f"{n} {x:.3f}" for n, x in pairs if abs(x - 1) > 0.03)
                print(f"timing, run {r['label']} GPU {dev} vs run {single['label']} (alone): {len(ratios)} samples, "
                      f"median ratio {statistics.median(ratios):.3f}, within 3 %: {within * 100:.0f} %"
                      + (f"; outside: {outside}" if outside else ""))
            print(f"throughput {r['label']} vs {single['label']}: {single['wall_s'] / r['wall_s']:.2f}x "
                  f"(linear: {r['slots']}x; {single['wall_s'] / r['wall_s'] / r['slots']:.2f} of linear)")
    for r in runs:
        for m in r["mismatches"][:10]:
            print(f"MISMATCH {r['label']}: {m['name']} copy {m['copy']}: {m['status']} want {m['want']} "
                  f"{m['missing_rules']} {m['reason']}")
    return 1 if any(r["mismatches"] for r in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
