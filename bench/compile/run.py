"""Compile farm against load_inline, side by side on the same cores, in one run.

1. load_inline's path (KernelBench's pre-compile): every sample in its own Python process,
   `jobs` at a time, each with a private TORCH_EXTENSIONS_DIR.
2. kz's farm: `kz verify --cpu --manifest` (extract + build through the cache, -j jobs).
3. Cold single-sample latency of each on held-out samples, the farm both with its
   precompiled header already on the host and on a host that has none yet.
4. Cache hit: the compile-stage seconds of a resubmitted sample, in a fresh `kz verify`
   and in a running `kz serve --cpu` (request to loadable library: extraction-cache and
   library-cache lookups, the environment probe already done by the server).

Every phase also records its CPU-seconds (user + sys of all its child processes, from
getrusage(RUSAGE_CHILDREN)): the cost that decides throughput once all cores are busy.

Usage: python bench/compile/run.py --kz build/bin/kz [--jobs N] [--count 32] [--out DIR]
       [--skip-baseline] (farm only: no load_inline builds) [--work DIR]
Prints a table last; writes OUT/compile_bench.json.
"""
import argparse
import concurrent.futures as cf
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def sh(cmd, env=None, timeout=3600):
    start = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    return p, time.monotonic() - start


def baseline_one(python, cand, ext_dir):
    env = dict(os.environ, TORCH_EXTENSIONS_DIR=ext_dir, CUDA_VISIBLE_DEVICES="",
               TORCH_CUDA_ARCH_LIST=os.environ.get("TORCH_CUDA_ARCH_LIST", "9.0"))
    p, wall = sh([python, os.path.join(HERE, "baseline_build.py"), cand], env=env)
    return {"candidate": os.path.basename(cand), "ok": p.returncode == 0, "seconds": wall,
            "error": p.stderr[-400:] if p.returncode else ""}


def baseline(python, cands, jobs, scratch):
    start = time.monotonic()
    with cf.ThreadPoolExecutor(jobs) as pool:
        rows = list(pool.map(lambda c: baseline_one(python, c, os.path.join(scratch, os.path.basename(c))), cands))
    return rows, time.monotonic() - start


def farm(kz, manifest_lines, jobs, cache, tag, out, extra=()):
    """(verdicts, wall s, CPU s) of one `kz verify --cpu` over `manifest_lines`."""
    manifest = os.path.join(out, f"manifest_{tag}.jsonl")
    with open(manifest, "w") as f:
        f.writelines(json.dumps(line) + "\n" for line in manifest_lines)
    cpu0 = children_cpu()
    p, wall = sh([kz, "-q", "verify", "--cpu", "--json", "--manifest", manifest, "--cache-dir", cache,
                  "-j", str(jobs), *extra])
    verdicts = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    return verdicts, wall, children_cpu() - cpu0


def served_hits(kz, sample, cache, count=5):
    """Request-to-library seconds of `count` cache-hit requests to one `kz serve --cpu`:
    the same candidate against copies of its task made distinct by a comment (so the job
    is new, not deduplicated), each its verdict's extract + library lookup seconds."""
    import socket
    import tempfile
    import urllib.request
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    tmp = tempfile.mkdtemp(prefix="kz-hit-")
    server = subprocess.Popen([kz, "serve", "--cpu", "--port", str(port), "--cache-dir", cache,
                               "--db", os.path.join(tmp, "jobs.db")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(300):
            try:
                urllib.request.urlopen(url + "/healthz", timeout=1).read()
                break
            except OSError:
                time.sleep(0.1)
        task, cand = open(sample["task"]).read(), open(sample["candidate"]).read()
        out = []
        for i in range(count):
            body = json.dumps({"task": task + f"\n# copy {i}\n", "candidate": cand, "backend": "cuda"}).encode()
            req = urllib.request.Request(url + "/v1/verify?wait=true", body, {"Content-Type": "application/json"})
            v = json.loads(urllib.request.urlopen(req, timeout=600).read())
            v = v.get("verdict", v)
            ext = v["stages"].get("extract", {})
            lib = libs([v])
            if ext.get("cache") == "hit" and lib and lib[0].get("cache") == "hit":
                out.append(ext.get("seconds", 0) + lib[0]["seconds"])
        return out
    finally:
        server.terminate()
        server.wait(timeout=60)
        shutil.rmtree(tmp, ignore_errors=True)


def libs(verdicts):
    return [lib for v in verdicts for lib in v["stages"].get("compile", {}).get("libraries", [])]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kz", required=True)
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    ap.add_argument("--count", type=int, default=32)
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/kz-compile-bench"))
    ap.add_argument("--python", default=os.environ.get("KZ_PYTHON", sys.executable))
    ap.add_argument("--skip-baseline-throughput", action="store_true")
    ap.add_argument("--skip-baseline", action="store_true", help="farm only: no load_inline builds at all")
    ap.add_argument("--work", default="/tmp/kz-compile-bench-work",
                    help="samples and the farm's cache (compile-verify reads the default)")
    args = ap.parse_args()
    work = args.work
    shutil.rmtree(work, ignore_errors=True)
    subprocess.run([args.python, os.path.join(HERE, "make_samples.py"), work, "--count", str(args.count + 3)], check=True)
    lines = [json.loads(l) for l in open(os.path.join(work, "manifest.jsonl"))]
    bench, held = lines[:args.count], lines[args.count:]
    os.makedirs(args.out, exist_ok=True)
    res = {"jobs": args.jobs, "count": len(bench), "cores": os.cpu_count()}

    def save():  # after every phase: a run cut short still leaves its figures
        with open(os.path.join(args.out, "compile_bench.json"), "w") as f:
            json.dump(res, f, indent=2)

    # Cold single-sample latency: a host with no PCH yet (this also builds the host's PCH,
    # a one-time cost, which the throughput run below then finds), then load_inline alone.
    cache = os.path.join(work, "cache")
    v, wall, cpu = farm(args.kz, [held[0]], 1, cache, "single_nopch", work)
    res["farm_single_no_pch_s"], res["farm_single_no_pch_build"] = wall, libs(v)
    res["farm_single_no_pch_cpu_s"] = cpu
    if not args.skip_baseline:
        cpu0 = children_cpu()
        b = baseline_one(args.python, held[1]["candidate"], os.path.join(work, "single-baseline"))
        res["load_inline_single_s"], res["load_inline_single_cpu_s"] = b["seconds"], children_cpu() - cpu0
    save()

    # Throughput on the same cores.
    verdicts, wall, cpu = farm(args.kz, bench, args.jobs, cache, "farm", work)
    built = libs(verdicts)
    res["farm_wall_s"], res["farm_ok"] = wall, sum(1 for lib in built if lib["ok"])
    res["farm_cpu_s"], res["farm_cpu_per_sample_s"] = cpu, cpu / len(bench)
    res["farm_header_modes"] = {m: sum(1 for l in built if l.get("build", {}).get("header_mode") == m) for m in ("split", "lite", "full")}
    res["farm_host_headers"] = {h: sum(1 for l in built if l.get("build", {}).get("host_header") == h) for h in ("slim", "torch")}
    res["farm_fallbacks"] = [[l["name"], l["build"]["fallbacks"]] for l in built if l.get("build", {}).get("fallbacks")]
    res["farm_build_seconds"] = [l["seconds"] for l in built]
    save()
    if not args.skip_baseline_throughput and not args.skip_baseline:
        cpu0 = children_cpu()
        rows, bwall = baseline(args.python, [l["candidate"] for l in bench], args.jobs, os.path.join(work, "baseline"))
        res["load_inline_cpu_s"] = children_cpu() - cpu0
        res["load_inline_wall_s"], res["load_inline_ok"] = bwall, sum(r["ok"] for r in rows)
        res["load_inline_seconds"] = [r["seconds"] for r in rows]
        res["load_inline_errors"] = [r for r in rows if not r["ok"]][:3]
        save()

    # Cold single with the PCH present (held-out sample), then a cache hit.
    singles = []
    for h in held[1:3]:
        v, wall, cpu = farm(args.kz, [h], 1, cache, "single", work)
        singles.append({"wall_s": wall, "cpu_s": cpu, "build": libs(v)})
    res["farm_single_s"] = [s["wall_s"] for s in singles]
    res["farm_single_cpu_s"] = [s["cpu_s"] for s in singles]
    res["farm_single_build_s"] = [s["build"][0]["seconds"] for s in singles if s["build"]]
    v, wall, _ = farm(args.kz, [bench[0]], 1, cache, "hit", work)
    res["cache_hit_lookup_s"], res["cache_hit_request_wall_s"] = libs(v)[0]["seconds"], wall
    res["cache_hit_served_s"] = served_hits(args.kz, bench[0], cache)
    save()

    n = len(bench)
    farm_rate = n / res["farm_wall_s"] * 60
    print(f"\n| figure (H: {res['cores']} cores, -j {args.jobs}) | load_inline | kz farm | ratio |")
    print("|---|---|---|---|")
    if "load_inline_wall_s" in res:
        base_rate = n / res["load_inline_wall_s"] * 60
        print(f"| {n} distinct samples, wall s | {res['load_inline_wall_s']:.1f} | {res['farm_wall_s']:.1f} | |")
        print(f"| throughput, samples/min | {base_rate:.1f} | {farm_rate:.1f} | {farm_rate / base_rate:.2f}x |")
        print(f"| built ok | {res['load_inline_ok']}/{n} | {res['farm_ok']}/{n} | |")
    else:
        print(f"| {n} distinct samples, wall s | | {res['farm_wall_s']:.1f} | |")
        print(f"| built ok | | {res['farm_ok']}/{n} | |")
    base_cpu = f"{res['load_inline_cpu_s'] / n:.1f}" if "load_inline_cpu_s" in res else ""
    print(f"| CPU-seconds per sample (all child processes) | {base_cpu} | {res['farm_cpu_per_sample_s']:.2f} | |")
    print(f"| farm CPU-seconds / 16 cores (projected 16-core wall, s) | | {res['farm_cpu_s'] / 16:.1f} | |")
    single = f"{res['load_inline_single_s']:.1f}" if "load_inline_single_s" in res else ""
    print(f"| cold single sample, s (farm: PCH present; build only) | {single} | "
          f"{statistics.median(res['farm_single_s']):.1f} ({statistics.median(res['farm_single_build_s'] or [0]):.1f}) | |")
    print(f"| cold single sample on a host without the PCH, s | | {res['farm_single_no_pch_s']:.1f} | |")
    print(f"| cache hit: lookup / whole `kz verify` process, ms | | {res['cache_hit_lookup_s']*1000:.1f} / {res['cache_hit_request_wall_s']*1000:.0f} | |")
    hits = res["cache_hit_served_s"]
    if hits:
        print(f"| cache hit in kz serve, request to library, ms (median, max of {len(hits)}) | | "
              f"{statistics.median(hits)*1000:.1f}, {max(hits)*1000:.1f} | |")
    print(f"| header modes (split/lite/full) | | {res['farm_header_modes']} | |")
    print(f"| host headers (slim/torch) | | {res['farm_host_headers']} | |")


if __name__ == "__main__":
    main()
