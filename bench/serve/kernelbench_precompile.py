"""The CPU pre-compile phase of kernelbench_pipeline.py (KernelBench's build_cache step,
src/kernelbench/compile.py batch_compile), and the process-pool helpers both phases use:
a spawn pool whose workers each own a process group, so that a timed-out build or eval is
killed with its ninja/nvcc/ptxas children."""
import contextlib
import io
import multiprocessing as mp
import os
import shutil
import signal
import threading
import time

from kernelbench_eval import with_build_dir


def _own_group():
    """Pool initializer: a process group of its own (still this session), so that a
    timed-out worker is killed with its ninja/nvcc/ptxas children."""
    os.setpgid(0, 0)


def _own_group_logged(log_dir):
    _own_group()
    fd = os.open(os.path.join(log_dir, f"worker_{os.getpid()}.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)


def kill_group(pid):
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.2 if sig == signal.SIGTERM else 0)


def close_pool(pool, busy_pids=(), grace=60):
    """Kill the workers still running a task (their process groups: ninja, nvcc, ptxas),
    then Pool.terminate(). Only busy workers are killed: an idle worker waits for its next
    task holding the task queue's lock, and killing it would leave terminate() blocked on
    that lock. A watchdog bounds terminate() anyway."""
    for pid in busy_pids:
        kill_group(pid)
    t = threading.Thread(target=pool.terminate, daemon=True)
    t.start()
    t.join(grace)
    if t.is_alive():
        for p in list(pool._pool):
            kill_group(p.pid)
        return False
    return True


# ----------------------------------------------------------------------------------------
# Phase 1: CPU pre-compile (runs in a pool worker; the worker is reused for many samples).

def precompile_one(index, src, build_dir, stamp):
    with open(stamp, "w") as f:                       # the parent's timeout clock starts here
        f.write(f"{os.getpid()} {time.time()}\n")
    t0 = time.time()
    from torch.utils import cpp_extension
    versions = cpp_extension.JIT_EXTENSION_VERSIONER.entries
    before = {k: v.version for k, v in versions.items()}
    t_import = time.time() - t0
    os.environ["TORCH_USE_CUDA_DSA"] = "1"
    os.makedirs(build_dir, exist_ok=True)
    code = with_build_dir(src, build_dir)
    ok, err, buf = True, None, io.StringIO()
    try:
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            try:
                exec(compile(code, "<string>", "exec"), {"BUILD_DIRECTORY": build_dir})
            except SyntaxError as e:   # KernelBench's build_compile_cache counts this as built
                err = f"SyntaxError (counted as built, as KernelBench does): {e}"
    except Exception as e:  # noqa: BLE001 - any failure of the candidate's module code
        ok, err = False, f"{type(e).__name__}: {str(e)[:400]}"
    after = {k: v.version for k, v in versions.items()}
    # torch's JIT versioner hashes the build directory: a worker that already built an
    # extension of the same name (another copy) builds this one as NAME_v1, which a fresh
    # eval process (version 0) will not find, so it rebuilds on the GPU host's time.
    bumped = sorted(k for k, v in after.items() if v > 0 and before.get(k) != v)
    return {"index": index, "ok": ok, "error": err, "seconds": time.time() - t0, "import_s": t_import,
            "pid": os.getpid(), "version_bumped": bumped}


def run_precompile(todo, batch, args, state, deadline, save):
    """todo: sample indices to build. Records state['results'][i]['precompile']."""
    if not todo:
        return True
    log_dir = os.path.join(args.out, "precompile_logs")
    os.makedirs(log_dir, exist_ok=True)
    stamps = os.path.join(args.build_dir, ".stamps")
    os.makedirs(stamps, exist_ok=True)
    ctx = mp.get_context("spawn")
    pool = ctx.Pool(args.jobs, initializer=_own_group_logged, initargs=(log_dir,))
    pending = {}
    for i in todo:
        bdir = os.path.join(args.build_dir, f"{i:04d}")
        shutil.rmtree(bdir, ignore_errors=True)
        stamp = os.path.join(stamps, f"{i:04d}")
        if os.path.exists(stamp):
            os.remove(stamp)
        pending[i] = (pool.apply_async(precompile_one, (i, batch[i]["sample"]["candidate"], bdir, stamp)), stamp)
    complete = True
    try:
        while pending:
            for i, (ar, stamp) in list(pending.items()):
                rec = state["results"][i]
                if ar.ready():
                    try:
                        r = ar.get()
                    except Exception as e:  # noqa: BLE001 - pickling / worker errors
                        r = {"index": i, "ok": False, "error": f"pool: {e}", "seconds": None}
                    r["timed_out"] = False
                    rec["precompile"] = r
                    del pending[i]
                    if not r["ok"]:   # compile.py removes a failed sample's build directory
                        shutil.rmtree(os.path.join(args.build_dir, f"{i:04d}"), ignore_errors=True)
                    print(f"precompile {i:4d} {rec['name']:<44} {'ok ' if r['ok'] else 'ERR'} "
                          f"{r['seconds'] or 0:6.1f} s{'  (name version bumped)' if r.get('version_bumped') else ''}",
                          flush=True)
                    save()
                elif os.path.exists(stamp):
                    try:
                        pid, started = open(stamp).read().split()
                    except ValueError:
                        continue
                    if time.time() - float(started) > args.compile_timeout:
                        # KernelBench re-submits a timed-out build (and cannot stop the first);
                        # here the worker's process group is killed and the pool replaces it.
                        kill_group(int(pid))
                        rec["precompile"] = {"index": i, "ok": False, "timed_out": True,
                                             "seconds": time.time() - float(started), "error": "timeout"}
                        shutil.rmtree(os.path.join(args.build_dir, f"{i:04d}"), ignore_errors=True)
                        del pending[i]
                        print(f"precompile {i:4d} {rec['name']:<44} TIMEOUT", flush=True)
                        save()
            if pending and deadline and time.time() > deadline:
                complete = False
                break
            time.sleep(0.1)
    finally:
        busy = []
        for i, (ar, stamp) in pending.items():   # interrupted (--max-wall or an exception)
            if not ar.ready() and os.path.exists(stamp):
                with contextlib.suppress(ValueError, OSError):
                    busy.append(int(open(stamp).read().split()[0]))
        close_pool(pool, busy)
        for i in pending:   # half-built: built again on --resume
            shutil.rmtree(os.path.join(args.build_dir, f"{i:04d}"), ignore_errors=True)
    return complete
