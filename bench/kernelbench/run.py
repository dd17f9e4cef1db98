"""kz beside KernelBench's own evaluation on KernelBench's real task sizes (issue 14).

Selects the largest level-1 tasks (inputs + outputs, measured on the meta device) and the
first level-2 tasks of a fetched KernelBench snapshot, pairs each with an honest Triton
candidate where `candidates.py` has one (else the reference itself: kz's self-check, and
`ModelNew = Model` for KernelBench), then, side by side on the same GPU:
  kz:           `kz verify --json --footprint --manifest` over all samples (every check on; a
                fresh child per sample, started while the previous sample runs), or with
                --kz-mode fresh one `kz verify` per sample;
  KernelBench:  `eval_kernel_against_ref` in one warm process (kb_eval.py), same samples.
Writes OUT/tasks.json, OUT/kz.jsonl, OUT/kernelbench.jsonl (both resumable) and prints a
table: wall time per sample, the ratio, kz's peak GPU memory against the bound
ref_peak + 2 x (inputs + outputs).

Usage: run.py --kernelbench KB_ROOT --kz build/bin/kz --out OUT [--level1 20] [--level2 20]
              [--only ID,...] [--skip-kernelbench] [--skip-kz] [--timeout 300]
              [--kz-mode manifest|fresh]
"""
import argparse
import glob
import importlib.util
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import candidates  # noqa: E402
import report  # noqa: E402


def footprint(path: str) -> dict:
    """Bytes of inputs and outputs of one call, on the meta device (no allocation)."""
    import torch
    spec = importlib.util.spec_from_file_location("kb_task", path)
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
        with torch.device("meta"):
            ins = mod.get_inputs()
            out = mod.Model(*mod.get_init_inputs())(*ins)
        outs = out if isinstance(out, (tuple, list)) else [out]
        size = lambda ts: sum(t.numel() * t.element_size() for t in ts  # noqa: E731
                              if isinstance(t, torch.Tensor))
        return {"inputs": size(ins), "outputs": size(outs)}
    except Exception as exc:  # noqa: BLE001 - data-dependent shapes: unknown, listed last
        return {"inputs": -1, "outputs": -1, "error": f"{type(exc).__name__}: {str(exc)[:120]}"}


def select(kb_root: str, n1: int, n2: int) -> list:
    tasks = []
    level1 = []
    for path in sorted(glob.glob(os.path.join(kb_root, "KernelBench", "level1", "*.py"))):
        level1.append((path, footprint(path)))
    level1.sort(key=lambda p: -(p[1]["inputs"] + p[1]["outputs"]))
    for path, fp in level1[:n1]:
        tasks.append({"level": 1, "path": path, "footprint": fp})
    level2 = sorted(glob.glob(os.path.join(kb_root, "KernelBench", "level2", "*.py")),
                    key=lambda p: int(os.path.basename(p).split("_")[0]))
    for path in level2[:n2]:
        tasks.append({"level": 2, "path": path, "footprint": footprint(path)})
    return tasks


def samples(tasks: list, work: str) -> list:
    honest_dir = os.path.join(work, "honest")
    self_dir = os.path.join(work, "selfcheck")
    names = set(candidates.write(honest_dir))
    os.makedirs(self_dir, exist_ok=True)
    out = []
    for t in tasks:
        name = os.path.basename(t["path"])
        sid = f"L{t['level']}/{name[:-3]}"
        if t["level"] == 1 and name in names:
            out.append({"id": sid, "task": t["path"], "candidate": os.path.join(honest_dir, name),
                        "kind": "honest", "backend": "triton", "footprint": t["footprint"]})
            continue
        alias = os.path.join(self_dir, name)
        with open(t["path"]) as src, open(alias, "w") as dst:
            dst.write(src.read() + "\n\nModelNew = Model  # the reference as its own candidate\n")
        out.append({"id": sid, "task": t["path"], "candidate": alias, "kind": "self",
                    "backend": "cuda", "footprint": t["footprint"]})
    return out


def done_ids(path: str) -> set:
    if not os.path.exists(path):
        return set()
    return {json.loads(line)["id"] for line in open(path) if line.strip()}


def kz_row(s: dict, verdict: dict, wall: float, rc, stderr: str = "") -> dict:
    """One kz.jsonl row: the sample's wall time and what of its verdict the table needs."""
    return {"id": s["id"], "tool": "kz", "wall_s": round(wall, 3), "rc": rc,
            "status": verdict.get("status"), "reason": verdict.get("reason", "")[:300],
            "profile": verdict.get("profile"), "child": verdict.get("child"),
            "footprint": verdict.get("footprint"),
            "timing": {k: verdict.get("stages", {}).get("timing", {}).get(k)
                       for k in ("speedup", "stable", "pool")},
            "not_checked": verdict.get("not_checked"), "stderr": stderr}


def run_kz_manifest(kz: str, items: list, out_path: str, timeout: float) -> None:
    """All pending samples in one `kz verify --manifest` (footprints and builds first, each
    run child started while the previous sample runs). A sample's wall is the time from
    the previous verdict (or the start) to its own: they add up to the batch's wall."""
    done = done_ids(out_path)
    todo = [s for s in items if s["id"] not in done]
    if not todo:
        return
    manifest = out_path + ".manifest.jsonl"
    with open(manifest, "w") as m:
        for s in todo:
            line = ({"task": s["task"], "self_check": True} if s["kind"] == "self" else
                    {"task": s["task"], "candidate": s["candidate"], "backend": s["backend"]})
            m.write(json.dumps(line) + "\n")
    cmd = [kz, "-q", "verify", "--json", "--footprint", "--manifest", manifest,
           "--timeout", str(timeout)]
    start = last = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    with open(out_path, "a") as out:
        for s, line in zip(todo, proc.stdout):
            now = time.monotonic()
            verdict = json.loads(line) if line.startswith("{") else {}
            row = kz_row(s, verdict, now - last, None)
            row["mode"] = "manifest"
            last = now
            out.write(json.dumps(row) + "\n")
            out.flush()
            print(f"kz {s['id']}: {row['status']} {row['wall_s']:.1f}s "
                  f"(run child {(row['child'] or {}).get('wall_s', 0):.1f}s)", flush=True)
    proc.wait()
    print(f"kz manifest: {len(todo)} samples in {time.monotonic() - start:.1f}s, rc {proc.returncode}",
          flush=True)


def run_kz(kz: str, items: list, out_path: str, timeout: float) -> None:
    done = done_ids(out_path)
    with open(out_path, "a") as out:
        for s in items:
            if s["id"] in done:
                continue
            cmd = [kz, "-q", "verify", "--json", "--ref", s["task"], "--timeout", str(timeout)]
            cmd += ["--self-check"] if s["kind"] == "self" else ["--candidate", s["candidate"]]
            start = time.monotonic()
            proc = subprocess.run(cmd, capture_output=True, text=True)
            wall = time.monotonic() - start
            lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
            verdict = json.loads(lines[-1]) if lines else {}
            row = kz_row(s, verdict, wall, proc.returncode, proc.stderr[-500:] if not lines else "")
            row["mode"] = "fresh"
            out.write(json.dumps(row) + "\n")
            out.flush()
            print(f"kz {s['id']}: {row['status']} {wall:.1f}s", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernelbench", required=True)
    ap.add_argument("--kz", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--level1", type=int, default=20)
    ap.add_argument("--level2", type=int, default=20)
    ap.add_argument("--only", default="", help="comma-separated sample ids (L1/19_ReLU, ...)")
    ap.add_argument("--skip-kz", action="store_true")
    ap.add_argument("--skip-kernelbench", action="store_true")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--kz-mode", choices=("manifest", "fresh"), default="manifest",
                    help="manifest: one kz verify --manifest for all samples (run children "
                         "started ahead); fresh: one kz verify per sample")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    tasks_path = os.path.join(args.out, "tasks.json")
    if os.path.exists(tasks_path):
        tasks = json.load(open(tasks_path))
    else:
        tasks = select(args.kernelbench, args.level1, args.level2)
        json.dump(tasks, open(tasks_path, "w"), indent=1)
    items = samples(tasks, os.path.join(args.out, "work"))
    if args.only:
        wanted = set(args.only.split(","))
        items = [s for s in items if s["id"] in wanted]
    with open(os.path.join(args.out, "samples.jsonl"), "w") as f:
        for s in items:
            f.write(json.dumps(s) + "\n")
    if not args.skip_kz:
        runner = run_kz_manifest if args.kz_mode == "manifest" else run_kz
        runner(args.kz, items, os.path.join(args.out, "kz.jsonl"), args.timeout)
    if not args.skip_kernelbench:
        env = dict(os.environ, PYTHONPATH=os.path.join(args.kernelbench, "src") + os.pathsep
                   + os.environ.get("PYTHONPATH", ""))
        subprocess.run([sys.executable, os.path.join(HERE, "kb_eval.py"),
                        os.path.join(args.out, "samples.jsonl"),
                        os.path.join(args.out, "kernelbench.jsonl")], env=env)
    print(report.table(items, args.out))


if __name__ == "__main__":
    main()
