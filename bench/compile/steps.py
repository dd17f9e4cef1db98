"""Where a farm build's CPU-seconds go, step by step (docs/compile-farm.md, "Where a farm
build spends its CPU").

For each sample: the `extract` op in a fresh Python (as `kz verify` runs it), then the
`build` op in a fresh Python (`python -m kz_worker`'s import plus `build_op`, template
driver once a template exists), each measured as CPU-seconds (user + sys of the process
and all its children, getrusage). Then every command of the finished build.ninja is run
again on its own and measured the same way (main.o, cuda.cuda.o, the link), nvcc once more
with `-time` for its phases (wall ms, ~CPU ms when run alone). The first sample of a fresh
--pch-root also builds the precompiled headers: that one-time cost is its own row.

Usage: python bench/compile/steps.py [--count 2] [--samples relu_b128,rowsum_b128]
       [--work DIR] [--pch-root DIR] [--repeat N] [--out FILE.json] [--worker-path DIR]
Needs TORCH_CUDA_ARCH_LIST (default 9.0) and nvcc; no GPU.
"""
import argparse
import csv
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.path.join(os.path.dirname(os.path.dirname(HERE)), "python")

EXTRACT = """import json, sys
from kz_worker.farm.extract import extract_op
print(json.dumps(extract_op({"candidate_path": sys.argv[1]})))"""
BUILD = """import json, sys
from kz_worker.farm.build import build_op
req = json.load(open(sys.argv[1]))
print(json.dumps(build_op(req)))"""


def cpu_of(cmd, **kw):
    """(CompletedProcess, CPU s, wall s) of a command (user + sys of it and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return p, round(cpu, 3), round(time.monotonic() - start, 3)


def env(pydir):
    e = dict(os.environ, PYTHONPATH=pydir, PYTHONDONTWRITEBYTECODE="1", CUDA_VISIBLE_DEVICES="",
             MAX_JOBS=os.environ.get("MAX_JOBS", "2"))
    e.setdefault("TORCH_CUDA_ARCH_LIST", "9.0")
    e.setdefault("CUDA_HOME", "/usr/local/cuda")
    e["PATH"] = os.path.dirname(sys.executable) + ":" + e.get("PATH", "")
    return e


def step_name(command):
    if "nvcc" in command.split()[0]:
        return "cuda.cuda.o (nvcc)"
    return "link" if " -shared" in command else "main.o (g++)"


def nvcc_phases(command, build_dir, e):
    """{phase: ms} from `nvcc -time` (the device compile run again, alone)."""
    with tempfile.NamedTemporaryFile(suffix=".csv", delete=False) as f:
        path = f.name
    subprocess.run(f"{command} -time {path}", shell=True, cwd=build_dir, env=e,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    phases = {}
    with open(path) as f:
        for row in csv.reader(f):             # (nvcc appends to an existing file, no header)
            try:
                ms = float(row[6])
            except (IndexError, ValueError):
                continue
            phases[row[1].strip()] = round(phases.get(row[1].strip(), 0.0) + ms, 1)
    os.remove(path)
    return phases


def main():
    # The accelerated build this script timed step by step (op `build` with `accelerate`) is
    # now kz's C++ driver (src/compile/build_driver.h); op `build` is torch's plain load_inline.
    # Not yet ported: time `kz verify --cpu` builds instead (bench/compile/run.py).
    sys.exit("steps.py: the Python build driver it measured moved to C++ (issue 20); see run.py")
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=2, help="first N samples of make_samples.py")
    ap.add_argument("--samples", default="", help="comma-separated sample names instead")
    ap.add_argument("--work", default="/tmp/kz-compile-steps")
    ap.add_argument("--pch-root", default="", help="default: WORK/cache/pch (PCH built on first use)")
    ap.add_argument("--repeat", type=int, default=1, help="times each ninja command is rerun (min kept)")
    ap.add_argument("--out", default="")
    ap.add_argument("--worker-path", default=PYDIR, help="the kz_worker package's parent (to compare versions)")
    args = ap.parse_args()
    e = env(args.worker_path)
    samples_dir = os.path.join(args.work, "samples")
    if not os.path.isdir(samples_dir):
        subprocess.run([sys.executable, os.path.join(HERE, "make_samples.py"), samples_dir, "--count", "36"], check=True)
    names = args.samples.split(",") if args.samples else \
        [json.loads(l)["candidate"].rsplit("/", 1)[1][:-3] for l in open(os.path.join(samples_dir, "manifest.jsonl"))][:args.count]
    pch_root = args.pch_root or os.path.join(args.work, "cache", "pch")
    os.makedirs(pch_root, exist_ok=True)
    _, py_cpu, _ = cpu_of([sys.executable, "-c", "import kz_worker.farm.build, kz_worker.fastbuild"], env=e)
    rows = []
    for name in names:
        cand = os.path.join(samples_dir, "candidates", f"{name}.py")
        p, ex_cpu, ex_wall = cpu_of([sys.executable, "-c", EXTRACT, cand], env=e)
        call = json.loads(p.stdout.strip().splitlines()[-1])["calls"][0]
        build_dir = os.path.join(args.work, "builds", name)
        shutil.rmtree(build_dir, ignore_errors=True)
        req = os.path.join(args.work, f"{name}.request.json")
        with open(req, "w") as f:
            json.dump({"call": call, "build_dir": build_dir, "accelerate": {"pch_root": pch_root}}, f)
        p, b_cpu, b_wall = cpu_of([sys.executable, "-c", BUILD, req], env=e)
        result = json.loads(p.stdout.strip().splitlines()[-1])
        report = result.get("build", {})
        commands = subprocess.run(["ninja", "-t", "commands"], cwd=build_dir, stdout=subprocess.PIPE,
                                  text=True, env=e).stdout.splitlines()
        steps = {}
        for command in commands:
            best = None
            for _ in range(max(1, args.repeat)):
                _, c, _ = cpu_of(command, shell=True, cwd=build_dir, env=e)
                best = c if best is None else min(best, c)
            steps[step_name(command)] = best
        nvcc = next((c for c in commands if "nvcc" in c.split()[0]), None)
        row = {"sample": name, "ok": result.get("ok"), "header_mode": report.get("header_mode"),
               "host_header": report.get("host_header"), "driver": report.get("driver"),
               "fallbacks": report.get("fallbacks"), "linker": report.get("linker"),
               "pch_seconds": report.get("pch_seconds"),
               "extract_cpu_s": ex_cpu, "extract_wall_s": ex_wall,
               "build_cpu_s": b_cpu, "build_wall_s": b_wall, "steps_cpu_s": steps,
               "other_cpu_s": round(b_cpu - sum(steps.values()), 3),
               "nvcc_phases_ms": nvcc_phases(nvcc, build_dir, e) if nvcc else {}}
        rows.append(row)
        print(json.dumps(row), flush=True)
    out = {"python_import_cpu_s": py_cpu, "rows": rows}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(out, f, indent=2)
    print(f"\npython start + import of the build modules: {py_cpu:.2f} CPU-s")
    print("| sample | mode / host | extract | build | main.o | cuda.cuda.o | link | other (python, ninja, nm; PCH) |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        s = r["steps_cpu_s"]
        print(f"| {r['sample']} | {r['header_mode']} / {r['host_header']} | {r['extract_cpu_s']:.2f} | {r['build_cpu_s']:.2f} | "
              f"{s.get('main.o (g++)', 0):.2f} | {s.get('cuda.cuda.o (nvcc)', 0):.2f} | {s.get('link', 0):.2f} | "
              f"{r['other_cpu_s']:.2f}{' (PCH %.0f s wall)' % r['pch_seconds'] if r['pch_seconds'] else ''} |")


if __name__ == "__main__":
    main()
