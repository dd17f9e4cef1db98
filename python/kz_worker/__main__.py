"""Entry point: `python -m kz_worker`.

Reads one request frame from the fd in KZ_PROTOCOL_FD, dispatches it, writes exactly
one `result` frame, flushes stdout/stderr and exits 0 at once (no interpreter teardown,
which could touch a broken CUDA context). Malformed requests, an unknown `op` or
`protocol` get `{"ok": false, "error": {"kind": "protocol"}}`; an unexpected exception
of the worker gets an error of kind `worker_internal`. Ops are imported lazily: `screen`
must not import torch (it is the fast path).
"""

import contextlib
import os
import signal
import sys
import threading
import time

from .failure import describe, traceback_tail
from .protocol import FD_ENV, PROTOCOL_VERSION, Channel, ProtocolError

OPS = ("extract", "build", "run", "screen", "baseline", "task_check", "footprint", "module_scan",
       "validate", "calibrate", "build_facts", "embed")


def _protocol_error(message: str) -> dict:
    return {"type": "result", "ok": False, "error": {"kind": "protocol", "message": message}}


def _internal_error(op, exc: BaseException) -> dict:
    error = {"kind": "worker_internal", "message": str(exc), "traceback": traceback_tail(exc)}
    if op == "run":
        return {"type": "result", "status": "runtime_error", "stages": {}, "device": {},
                "reason": f"worker internal error: {describe(exc)}", "error": error}
    return {"type": "result", "ok": False, "error": error}


def handle(request: dict, channel: Channel) -> dict:
    """Dispatch one request; return its result frame (never raises an Exception)."""
    op = request.get("op")
    try:
        if request.get("protocol") != PROTOCOL_VERSION:
            raise ProtocolError(f"unsupported protocol {request.get('protocol')!r}")
        if op not in OPS:
            raise ProtocolError(f"unknown op {op!r}")
        if op == "extract":
            from .farm.extract import extract_op
            return extract_op(request)
        if op == "build":
            from .farm.build import build_op
            return build_op(request)
        if op == "build_facts":
            from .farm.build_facts import build_facts_op
            return build_facts_op(request)
        if op == "screen":
            from .screen import screen_op
            return screen_op(request)
        if op == "baseline":
            from .task.baseline import baseline_op
            return baseline_op(request, channel)
        if op == "calibrate":
            from .task.calibrate import calibrate_op
            return calibrate_op(request)
        if op == "embed":
            from .embed import embed_op
            return embed_op(request)
        if op == "footprint":
            from .task.footprint_op import footprint_op
            return footprint_op(request)
        if op == "module_scan":
            from .screen.module_scan import module_scan_op
            return module_scan_op(request)
        if op == "validate":
            from .task.validate import validate_op
            return validate_op(request, channel)
        if op == "task_check":
            from .task.task_check import task_check_op
            return task_check_op(request, channel)
        from .run.op import run_op
        return run_op(request, channel)
    except ProtocolError as exc:
        return _protocol_error(str(exc))
    except (Exception, SystemExit) as exc:
        return _internal_error(op, exc)


def _preload() -> None:
    """KZ_PRELOAD=1: a run child started ahead of its sample (a `kz serve` slot's next
    child, the next sample of a manifest) imports what every run needs before it blocks on
    its request, so the import overlaps the previous sample's run, and maps the GPU
    libraries that torch otherwise opens at its first convolution (host work only). No CUDA
    call, no candidate code. KZ_PRELOAD_CUDA=1 also creates the CUDA context ahead (touches
    the GPU while another sample may be timed there: off by default). A failure here is
    left for the request to meet again, with its real error."""
    with contextlib.suppress(Exception):
        import torch  # noqa: F401

        from .run import op as run  # noqa: F401
        with contextlib.suppress(ImportError):
            import triton  # noqa: F401
        from .preload import map_gpu_libraries
        map_gpu_libraries()
        if os.environ.get("KZ_PRELOAD_CUDA") == "1" and torch.cuda.is_available():
            torch.empty(1, device="cuda")


def _handle_profiled(request: dict, channel: Channel) -> dict:
    """`handle`, under cProfile when KZ_WORKER_PROFILE names a directory: the op's top
    functions by cumulative time go to DIR/<op>-<pid>.txt (where a sample's time goes)."""
    folder = os.environ.get("KZ_WORKER_PROFILE")
    if not folder:
        return handle(request, channel)
    import cProfile
    import io
    import pstats
    profiler = cProfile.Profile()
    result = profiler.runcall(handle, request, channel)
    with contextlib.suppress(OSError):
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("cumulative").print_stats(45)
        path = os.path.join(folder, f"{request.get('op')}-{os.getpid()}.txt")
        with open(path, "w") as out:
            out.write(text.getvalue())
    return result


def exit_with_parent(period_s: float = 1.0) -> None:
    """The supervisor enforces this child's time and memory limits; if it dies (a SIGKILL
    leaves it no chance to clean up), this child's process group (its compilers, a hanging
    kernel) is killed within `period_s`, instead of running on unsupervised beside the next
    run. Only when this process leads its group, as kz starts it."""
    parent = os.getppid()
    if os.getpgrp() != os.getpid():
        return

    def watch():
        while True:
            time.sleep(period_s)
            if os.getppid() != parent:
                os.killpg(os.getpgrp(), signal.SIGKILL)

    threading.Thread(target=watch, name="kz-parent-watch", daemon=True).start()


def main() -> None:
    """Serve one request on the protocol fd, then exit 0 without teardown."""
    if FD_ENV not in os.environ:
        print(f"kz_worker: {FD_ENV} is not set; run by the kz supervisor", file=sys.stderr)
        sys.exit(2)
    exit_with_parent()
    if os.environ.get("KZ_PRELOAD") == "1":
        _preload()
    channel = Channel.from_env()
    try:
        request = channel.read()
        token = request.pop("token", None)
        channel.token = token if isinstance(token, str) else None
    except ProtocolError as exc:
        request, result = {}, _protocol_error(str(exc))
    else:
        result = _handle_profiled(request, channel)
    try:
        channel.write(result)
    except ProtocolError as exc:  # the result itself is too large to send
        channel.write(_internal_error(request.get("op"), exc))
    with contextlib.suppress(Exception):  # candidates may have replaced or closed them
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
