#!/usr/bin/env python3
"""KernelBench's batch-evaluation pipeline over the same labelled batch as gpu_batch.py
(issue 5: samples per GPU-hour of `kz serve` beside KernelBench's pipeline).

Our own re-implementation of the *shape* of KernelBench's scripts/eval_from_generations.py
(ScalingIntelligence/KernelBench, commit 423217d), with its defaults:

1. CPU pre-compile (its `build_cache=True` step, src/kernelbench/compile.py batch_compile):
   a spawn process pool of --jobs workers; every CUDA `load_inline` candidate is exec'd
   once with TORCH_EXTENSIONS_DIR set to a build directory of its own, so that its
   extension is built there; a per-sample timeout. Triton candidates have nothing to build
   (their kernels JIT-compile on the GPU in the eval phase).
2. GPU eval (batch_eval with num_gpu_devices=1): one fresh spawned process per sample
   (a one-worker mp.Pool, as KernelBench), on one GPU, with a per-sample timeout; the
   process loads the reference and the candidate from source (the CUDA candidate re-runs
   load_inline in its pre-compiled build directory), checks correctness over 5 trials of
   fresh random inputs (seed 42, allclose with atol = rtol = --tolerance), times a correct
   candidate with CUDA events (3 warm-ups, 1 discarded, 100 trials, L2 flushed before each)
   and times the reference the same way (its excessive-speedup check, > 10x flagged).

  python3 bench/serve/kernelbench_pipeline.py --count 200 --jobs 16 --gpu 0 --out OUT   # H200 host
  python3 bench/serve/kernelbench_pipeline.py --count 4 --jobs 2 --compile-only --out OUT

(python3 without torch re-executes itself under $KZ_PYTHON or .venv/bin/python.)
Writes OUT/kernelbench_pipeline.json after every sample: per sample the name, label, phase
times, compiled / correct / timed out / runtime; and the phase walls. Prints a table:
samples, pre-compile wall, eval wall, samples per hour and per GPU-hour (GPU-hours = the
whole run's wall: the pipeline holds the GPU throughout), verdicts agreeing with the
labels (KernelBench "correct" = compiled and correct; any other label wants "not
correct"), and the labelled cheats that KernelBench accepted as correct.

--max-wall S stops starting new work after S seconds (exit 3) and --resume continues a
run from OUT/kernelbench_pipeline.json (walls add up over the invocations; pre-compiled
build directories must still be there: put --build-dir on a disk that survives). Exit 2
when the eval phase has no CUDA GPU. Standard library + torch.
"""
import argparse
import importlib.util
import json
import multiprocessing as mp
import os
import platform
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from gpu_batch import make_batch  # noqa: E402
from kernelbench_eval import eval_one  # noqa: E402
from kernelbench_precompile import _own_group, close_pool, run_precompile  # noqa: E402

STATE = "kernelbench_pipeline.json"


# ----------------------------------------------------------------------------------------
# Interpreter: the pipeline needs torch in this process (spawned workers inherit it).

def reexec_with_torch():
    if importlib.util.find_spec("torch") is not None:
        return
    if not os.environ.get("KZ_PIPELINE_REEXEC"):   # (a venv's python may be a link to this one)
        for py in (os.environ.get("KZ_PYTHON"), os.path.join(ROOT, ".venv/bin/python")):
            if py and os.path.exists(py):
                os.environ["KZ_PIPELINE_REEXEC"] = "1"
                os.execv(py, [py, os.path.abspath(__file__)] + sys.argv[1:])
    raise SystemExit("kernelbench_pipeline: no torch for this interpreter, $KZ_PYTHON or .venv/bin/python")


def eval_sample(spec, timeout):
    """A one-worker spawn pool per sample, as KernelBench's batch_eval. A worker that dies
    (SIGSEGV) never returns its task: the wait runs to the timeout, as in KernelBench."""
    ctx = mp.get_context("spawn")
    t0 = time.time()
    spec["t_submit"] = t0
    pool = ctx.Pool(1, initializer=_own_group)
    first = list(pool._pool)
    ar = pool.apply_async(eval_one, (spec,))
    busy = []
    try:
        res = ar.get(timeout=timeout)
        res["timed_out"] = False
    except mp.TimeoutError:
        died = [p.exitcode for p in first if p.exitcode is not None]
        busy = [p.pid for p in first if p.exitcode is None]   # the hung one, still on the task
        res = {"compiled": False, "correct": False, "timed_out": True, "error_kind": "timeout",
               "error": f"no result in {timeout:.0f} s" + (f" (worker died, exit code {died[0]})" if died else "")}
    except Exception as e:  # noqa: BLE001 - multiprocessing-level failure (the task's pickling)
        res = {"compiled": False, "correct": False, "timed_out": False, "error_kind": "pool_error", "error": str(e)}
    if not close_pool(pool, busy):
        res["pool_terminate_stuck"] = True
    res["wall_s"] = time.time() - t0
    return res


# ----------------------------------------------------------------------------------------

def summarise(state, batch):
    segs = state["segments"] + ([state["open_segment"]] if state.get("open_segment") else [])
    pre = sum(s["wall_s"] for s in segs if s["phase"] == "precompile")
    ev = sum(s["wall_s"] for s in segs if s["phase"] == "eval")
    done = [r for r in state["results"] if r.get("eval")]
    s = {"samples": len(batch), "evaluated": len(done), "precompile_wall_s": pre, "eval_wall_s": ev,
         "total_wall_s": pre + ev}
    if done and pre + ev > 0:
        s["samples_per_hour"] = len(done) / (pre + ev) * 3600
        s["samples_per_gpu_hour"] = s["samples_per_hour"] / 1   # one GPU held for the whole run
    for r in state["results"]:
        e = r.get("eval")
        if e:
            r["kb_correct"] = bool(e.get("compiled") and e.get("correct"))
            r["agrees"] = r["kb_correct"] == (r["want"] == "correct")
    s["agree"] = sum(1 for r in done if r["agrees"])
    s["agree_at_1e-4"] = sum(1 for r in done if bool(r["eval"].get("correct_at_1e-4")) == (r["want"] == "correct"))
    s["cheats_accepted"] = sum(1 for r in done if r["want"] == "rejected" and r["kb_correct"])
    s["cheats"] = sum(1 for r in done if r["want"] == "rejected")
    s["wrong_accepted"] = sum(1 for r in done if r["want"] not in ("correct", "rejected") and r["kb_correct"])
    s["correct_refused"] = sum(1 for r in done if r["want"] == "correct" and not r["kb_correct"])
    s["timed_out"] = sum(1 for r in done if r["eval"].get("timed_out"))
    s["excessive_speedup_flags"] = sum(1 for r in done if r["eval"].get("excessive_speedup"))
    pre_recs = [r["precompile"] for r in state["results"] if r.get("precompile")]
    s["precompiled"] = len(pre_recs)
    s["precompile_failed"] = sum(1 for p in pre_recs if not p["ok"])
    s["precompile_version_bumped"] = sum(1 for p in pre_recs if p.get("version_bumped"))
    by = {}
    for r in done:
        b = by.setdefault(r["want"], {"n": 0, "kb_correct": 0})
        b["n"] += 1
        b["kb_correct"] += r["kb_correct"]
    s["by_label"] = by
    return s


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--jobs", type=int, default=os.cpu_count(), help="pre-compile workers (KernelBench num_cpu_workers)")
    ap.add_argument("--gpu", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=180, help="per sample, each phase (KernelBench default 180 s)")
    ap.add_argument("--compile-timeout", type=float,
                    help="per pre-compile build (default: --timeout, as KernelBench; kz's builds have their own "
                         "limit, so a comparison at a short run --timeout passes 180 here)")
    ap.add_argument("--tolerance", type=float, default=1e-2,
                    help="atol = rtol (KernelBench v0/v0.1: 1e-2; its current fp32 default is 1e-4, also recorded)")
    ap.add_argument("--arch", default="Hopper", help="TORCH_CUDA_ARCH_LIST (KernelBench set_gpu_arch; H200: Hopper)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--build-dir", help="per-sample build directories (default OUT/build)")
    ap.add_argument("--compile-only", action="store_true", help="the CPU pre-compile phase only")
    ap.add_argument("--no-precompile", action="store_true",
                    help="KernelBench's default build_cache=False: every build in the eval phase")
    ap.add_argument("--resume", action="store_true", help=f"continue from OUT/{STATE}")
    ap.add_argument("--max-wall", type=float, help="start no new work after this many seconds (exit 3)")
    args = ap.parse_args(argv)
    if args.compile_timeout is None:
        args.compile_timeout = args.timeout
    return args


def main():
    args = parse_args()
    reexec_with_torch()
    t_start = time.time()
    deadline = t_start + args.max_wall if args.max_wall else None
    args.out = os.path.abspath(args.out)
    args.build_dir = os.path.abspath(args.build_dir or os.path.join(args.out, "build"))
    os.makedirs(args.out, exist_ok=True)
    os.makedirs(args.build_dir, exist_ok=True)
    os.environ["TORCH_CUDA_ARCH_LIST"] = args.arch   # set before any worker is spawned
    path = os.path.join(args.out, STATE)

    import torch
    if not args.compile_only:
        if not torch.cuda.is_available() or torch.cuda.device_count() <= args.gpu:
            print(f"kernelbench_pipeline: no CUDA GPU {args.gpu} here (torch {torch.__version__}, "
                  f"{torch.cuda.device_count()} devices): the eval phase needs one. "
                  "--compile-only runs the CPU pre-compile phase alone.", file=sys.stderr)
            return 2

    batch = make_batch(args.count)
    config = {"count": args.count, "jobs": args.jobs, "gpu": args.gpu, "timeout": args.timeout,
              "compile_timeout": args.compile_timeout,
              "tolerance": args.tolerance, "arch": args.arch, "precompile": not args.no_precompile,
              "python": sys.executable, "torch": torch.__version__, "host": platform.node(), "cpus": os.cpu_count(),
              "gpu_name": None,   # read by the first eval process: this one makes no CUDA context
              "kernelbench": "ScalingIntelligence/KernelBench@423217d (pipeline shape)"}
    if args.resume and os.path.exists(path):
        state = json.load(open(path))
        if [r["name"] for r in state["results"]] != [b["name"] for b in batch]:
            raise SystemExit(f"{path} holds another batch: not resuming")
        state.setdefault("invocations", []).append(config)
        killed = state.pop("open_segment", None)
        if killed:   # an invocation killed mid-phase: its wall so far still counts
            state["segments"].append(dict(killed, killed=True))
    else:
        state = {"config": config, "invocations": [config], "segments": [],
                 "results": [{"index": i, "name": b["name"], "copy": b["copy"], "backend": b["sample"]["backend"],
                              "want": b["want"], "precompile": None, "eval": None} for i, b in enumerate(batch)]}

    current = {}

    def save():
        if current:
            state["open_segment"] = {"phase": current["phase"], "wall_s": time.time() - current["t0"]}
        state["summary"] = summarise(state, batch)
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(state, f, indent=1)
        os.replace(tmp, path)

    def close_segment(samples, done):
        state["segments"].append({"phase": current["phase"], "wall_s": time.time() - current["t0"],
                                  "samples": samples, "complete": done})
        current.clear()
        state.pop("open_segment", None)
        save()

    complete = True
    if not args.no_precompile:
        todo = []
        for i, r in enumerate(state["results"]):
            if r["backend"] != "cuda" or r["eval"]:
                continue
            p = r["precompile"]
            if p is None or (p["ok"] and not os.path.isdir(os.path.join(args.build_dir, f"{i:04d}"))):
                todo.append(i)
        print(f"pre-compile: {len(todo)} CUDA samples, {args.jobs} workers, TORCH_CUDA_ARCH_LIST={args.arch}", flush=True)
        if todo:
            current.update(phase="precompile", t0=time.time())
            try:
                complete = run_precompile(todo, batch, args, state, deadline, save)
            finally:
                close_segment(len(todo), complete)

    if complete and not args.compile_only:
        current.update(phase="eval", t0=time.time())
        todo = [i for i, r in enumerate(state["results"]) if not r["eval"]]
        print(f"eval: {len(todo)} samples on GPU {args.gpu}, one process each, "
              f"timeout {args.timeout:.0f} s", flush=True)
        try:
            for i in todo:
                if deadline and time.time() > deadline:
                    complete = False
                    break
                r = state["results"][i]
                spec = {"task": batch[i]["sample"]["task"], "candidate": batch[i]["sample"]["candidate"],
                        "backend": r["backend"], "gpu": args.gpu, "tolerance": args.tolerance,
                        "build_dir": os.path.join(args.build_dir, f"{i:04d}")}
                e = eval_sample(spec, args.timeout)
                if e.get("timed_out") or e.get("error_kind") == "pool_error":
                    shutil.rmtree(spec["build_dir"], ignore_errors=True)  # remove_cache_dir (that sample's only)
                r["eval"] = e
                if e.get("hardware"):
                    state["config"]["gpu_name"] = state["invocations"][-1]["gpu_name"] = e["hardware"]
                ok = e.get("compiled") and e.get("correct")
                print(f"eval {i:4d} {r['name']:<44} want {r['want']:<13} KB {'correct' if ok else 'not correct':<11} "
                      f"{e['wall_s']:6.1f} s  {e.get('error_kind', '')}", flush=True)
                save()
        finally:
            close_segment(len(todo), complete)
    save()
    s = state["summary"]
    print("\n| pipeline | samples | evaluated | pre-compile wall s | eval wall s | total s | samples/h "
          "| per GPU-hour | agree with label | cheats accepted as correct |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    rate = lambda k: f"{s[k]:.0f}" if k in s else "-"  # noqa: E731
    print(f"| KernelBench (eval_from_generations shape) | {s['samples']} | {s['evaluated']} | "
          f"{s['precompile_wall_s']:.1f} | {s['eval_wall_s']:.1f} | {s['total_wall_s']:.1f} | {rate('samples_per_hour')} | "
          f"{rate('samples_per_gpu_hour')} | {s['agree']}/{s['evaluated']} | {s['cheats_accepted']}/{s['cheats']} |")
    print(f"pre-compile: {s['precompiled']} CUDA samples, {s['precompile_failed']} failed, "
          f"{s['precompile_version_bumped']} built under a bumped extension name (rebuilt at eval)")
    if s["evaluated"]:
        print(f"eval: {s['timed_out']} timed out; {s['wrong_accepted']} wrong/crashing accepted, "
              f"{s['correct_refused']} correct refused; agree at atol=rtol=1e-4: {s['agree_at_1e-4']}; "
              f"excessive-speedup flags: {s['excessive_speedup_flags']}")
        for want, b in sorted(s["by_label"].items()):
            print(f"  label {want:<14} {b['n']:4d} samples, KernelBench correct: {b['kb_correct']}")
    print(f"wrote {path}")
    if not complete:
        print("incomplete (--max-wall): run again with --resume", flush=True)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
