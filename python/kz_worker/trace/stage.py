"""The CUPTI launch trace around the candidate's checked calls (docs/trace.md).

Contracts:
- `prepare(device)` runs before any candidate code (like timing.load_runtime): it binds
  the kz_tr_* entry points of $KZ_RUNTIME_LIB and loads CUPTI (kz_tr_init with
  `cupti_paths()`). It never raises; without a GPU or CUPTI it returns (None, why).
- `Tracer.enable()` is called before the candidate is imported (CUPTI must be active
  before a CUDA graph is instantiated for its kernels to be traced); `Tracer.window()`
  wraps one candidate call of the correctness trials; `run_stage` adds the repeated-
  input calls, disables CUPTI (nothing is traced while timing) and sends the windows and
  the candidate's kernel names to the supervisor, which runs the rules
  (src/verify/trace_judge.h) and answers: the run stops on a rejection.
- The record layout is kz_tr_record version 2 (dependency fields); a library whose
  kz_tr_record has another size is refused by `prepare` (trace skipped, reason given).
- A failure of the tracer itself never fails the candidate: it marks the tracer broken
  and the stage is reported "skipped" (the verdict's not_checked says why).
"""
import ctypes
import glob
import json
import os
import re
import sys

from ..failure import Failure, describe
from . import names as trace_names

REPEATS = 2           # extra calls on the very same input tensors (caches show there)
SEED_OFFSET = 7919    # seed of the repeated-input calls: options.seed + SEED_OFFSET
CAPACITY = (1 << 16) + 1024  # records read per window (the native side keeps at most
                              # 65536, plus the stream records it appends)
_KINDS = {1: "kernel", 2: "memset", 3: "memcpy", 4: "marker", 5: "event_record", 7: "stream"}
# KZ_TR_SYNC (6) by its CUpti_ActivitySynchronizationType.
_SYNC_KINDS = {1: "event_sync", 2: "stream_wait", 3: "stream_sync", 4: "context_sync"}
_CUPTI_FILE = re.compile(r"libcupti\.so(?:\.(?:1[3-9]|[2-9]\d))?$")  # not year-named files
FACTS_BYTES = 12 << 20  # the windows sent to the supervisor, all together (one frame <= 16 MiB)
MAX_NAMES = 4096        # candidate kernel names sent
_FIELDS = ("stream", "start_ns", "end_ns", "graph", "bytes", "correlation", "event", "sync_id",
           "flags")


class _Record(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int32), ("stream_id", ctypes.c_uint32),
                ("start_ns", ctypes.c_uint64), ("end_ns", ctypes.c_uint64),
                ("bytes", ctypes.c_uint64), ("graph_id", ctypes.c_uint32),
                ("correlation_id", ctypes.c_uint32), ("device_id", ctypes.c_uint32),
                ("context_id", ctypes.c_uint32), ("event_id", ctypes.c_uint32),
                ("detail", ctypes.c_uint32), ("event_sync_id", ctypes.c_uint64),
                ("name", ctypes.c_char * 512)]


def _as_dict(r) -> dict:
    """One kz_tr_record as a plain record {"kind", "name", "stream", "start_ns", "end_ns",
    "graph", "bytes", "correlation"} (+ "event", "sync_id" for event records and
    synchronisations, "flags" for stream records)."""
    kind = _SYNC_KINDS.get(r.detail, "sync") if r.kind == 6 else _KINDS.get(r.kind, "?")
    out = {"kind": kind, "name": r.name.decode("utf-8", "replace"), "stream": r.stream_id,
           "start_ns": r.start_ns, "end_ns": r.end_ns, "graph": r.graph_id, "bytes": r.bytes,
           "correlation": r.correlation_id}
    if r.kind in (5, 6):
        out.update(event=r.event_id, sync_id=r.event_sync_id)
    elif r.kind == 7:
        out["flags"] = r.detail
    return out


def cupti_paths() -> list:
    """Candidate libcupti files (CUDA 13 or later), most likely first: $KZ_CUPTI_PATH if
    set, the `nvidia` pip packages next to torch, $CUDA_HOME/$CUDA_PATH, /usr/local/cuda.
    (A libcupti already loaded in the process, e.g. torch's, is used before any.)"""
    forced = [os.environ["KZ_CUPTI_PATH"]] if os.environ.get("KZ_CUPTI_PATH") else []
    dirs = []
    for site in sys.path:
        dirs += sorted(glob.glob(os.path.join(site, "nvidia", "*", "lib")))
    for var in ("CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(var)
        if root:
            dirs += [os.path.join(root, "extras", "CUPTI", "lib64"),
                     os.path.join(root, "lib64"), os.path.join(root, "lib")]
    dirs += ["/usr/local/cuda/extras/CUPTI/lib64", "/usr/local/cuda/lib64"]
    files = []
    for d in dirs:
        files += sorted((p for p in glob.glob(os.path.join(d, "libcupti.so*"))
                         if _CUPTI_FILE.search(p)), key=len, reverse=True)
    return list(dict.fromkeys(forced + files))


class Tracer:
    """The kz_tr_* entry points of one loaded library (`lib`: a ctypes.CDLL, or in tests
    any object with the same callables) and the windows recorded so far."""

    _SIG = {"init": (ctypes.c_int, [ctypes.POINTER(ctypes.c_char_p), ctypes.c_int]),
            "library": (ctypes.c_char_p, []), "version": (ctypes.c_uint32, []),
            "enable": (ctypes.c_int, []), "start": (ctypes.c_int, []),
            "mark": (ctypes.c_int, [ctypes.c_size_t]),
            "stop": (ctypes.c_int, [ctypes.POINTER(ctypes.c_int),
                                    ctypes.POINTER(ctypes.c_uint64)]),
            "read": (ctypes.c_int, [ctypes.POINTER(_Record), ctypes.c_int,
                                    ctypes.POINTER(ctypes.c_int)]),
            "stream_id": (ctypes.c_int, [ctypes.c_size_t, ctypes.POINTER(ctypes.c_uint32)]),
            "disable": (ctypes.c_int, []), "last_error": (ctypes.c_char_p, []),
            "dependencies": (ctypes.c_char_p, []), "record_size": (ctypes.c_uint32, [])}

    def __init__(self, lib):
        for name, (restype, argtypes) in self._SIG.items():
            fn = getattr(lib, "kz_tr_" + name)  # AttributeError: an older library
            fn.restype, fn.argtypes = restype, argtypes
            setattr(self, "_" + name, fn)
        self.lib, self.windows, self.broken = lib, [], None
        self._buffer = None

    def error(self) -> str:
        msg = self._last_error()
        return msg.decode("utf-8", "replace") if isinstance(msg, bytes) else str(msg or "")

    def check(self, rc: int, what: str) -> None:
        if rc != 0:
            raise RuntimeError(f"{what} failed ({rc}): {self.error()}")

    def init(self, paths) -> None:
        arr = (ctypes.c_char_p * max(1, len(paths)))(*[p.encode() for p in paths])
        self.check(self._init(arr, len(paths)), "kz_tr_init")

    @property
    def library(self) -> str:
        raw = self._library()
        return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw or "")

    def enable(self) -> None:
        self.check(self._enable(), "kz_tr_enable")

    def dependencies(self) -> str:
        """"" while CUPTI records the dependency kinds (event records, stream waits,
        synchronisations, stream flags), else why not."""
        raw = self._dependencies()
        return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw or "")

    def disable(self) -> None:
        if self._disable() != 0 and self.broken is None:
            self.broken = f"kz_tr_disable: {self.error()}"

    def stream_id(self, handle: int) -> int:
        out = ctypes.c_uint32(0)
        self.check(self._stream_id(handle, ctypes.byref(out)), "kz_tr_stream_id")
        return out.value

    def collect(self) -> tuple:
        """Close the open window: (records as dicts, dropped count)."""
        count, dropped = ctypes.c_int(0), ctypes.c_uint64(0)
        self.check(self._stop(ctypes.byref(count), ctypes.byref(dropped)), "kz_tr_stop")
        if self._buffer is None:
            self._buffer = (_Record * CAPACITY)()
        copied = ctypes.c_int(0)
        self.check(self._read(self._buffer, CAPACITY, ctypes.byref(copied)), "kz_tr_read")
        records = [_as_dict(r) for r in self._buffer[:copied.value]]
        return records, dropped.value + max(0, count.value - copied.value)

    def window(self, label: str, device):
        """Context manager around one candidate call (see `_Window`)."""
        return _Window(self, label, device)


class _Window:
    """Synchronise, open a window; after the body: marker on the caller's stream (its
    current stream when the window opened), synchronise, close, keep the window in
    tracer.windows (with the CUPTI ids of the caller's and the legacy default stream, and
    kz_tr_dependencies(): "" when the dependency records were collected). An exception in the body propagates (the window is dropped); an
    exception of the synchronise after the call (a CUDA error) propagates too."""

    def __init__(self, tracer, label, device):
        self.tracer, self.label, self.device = tracer, label, device

    def __enter__(self):
        import torch
        torch.cuda.synchronize(self.device)
        self.stream = torch.cuda.current_stream(self.device).cuda_stream
        self.open = self.tracer.broken is None and self._native(self.tracer._start, "start")
        return self

    def _native(self, fn, what, *args) -> bool:
        rc = fn(*args)
        if rc != 0 and self.tracer.broken is None:
            self.tracer.broken = f"kz_tr_{what}: {self.tracer.error()}"
        return rc == 0

    def __exit__(self, exc_type, exc, tb):
        import torch
        if self.open and exc_type is None:
            marked = self._native(self.tracer._mark, "mark", self.stream)
            torch.cuda.synchronize(self.device)
            try:
                records, dropped = self.tracer.collect()
            except RuntimeError as err:
                self.tracer.broken = str(err)
                return False
            caller, legacy = self._stream_id(self.stream), self._stream_id(0)
            if marked:
                self.tracer.windows.append({"label": self.label, "records": records,
                                            "caller_stream": caller, "dropped": dropped,
                                            "legacy_stream": legacy,
                                            "dependencies": self.tracer.dependencies()})
        elif self.open:
            count = ctypes.c_int(0)
            self.tracer._stop(ctypes.byref(count), None)
        return False

    def _stream_id(self, handle):
        try:
            return self.tracer.stream_id(handle)
        except RuntimeError:
            return None  # caller unknown: the marker's own stream is the caller's


def prepare(device: str):
    """(Tracer with CUPTI loaded, "") or (None, why the trace is unavailable: no GPU,
    KZ_TRACE=0 in the environment, no kz_tr_* in $KZ_RUNTIME_LIB, no usable CUPTI)."""
    if device != "cuda":
        return None, "no GPU"
    if os.environ.get("KZ_TRACE") == "0":
        return None, "disabled (KZ_TRACE=0)"
    path = os.environ.get("KZ_RUNTIME_LIB")
    if not path or not os.path.isfile(path):
        return None, f"native runtime not found (KZ_RUNTIME_LIB={path or '<unset>'})"
    try:
        tracer = Tracer(ctypes.CDLL(path))
    except (OSError, AttributeError) as exc:
        return None, f"{path} has no launch trace (kz_tr_*): {describe(exc)}"
    size = tracer._record_size()
    if size != ctypes.sizeof(_Record):
        return None, (f"{path}: kz_tr_record is {size} bytes, the binding expects "
                      f"{ctypes.sizeof(_Record)} (rebuild the native runtime)")
    try:
        tracer.init(cupti_paths())
    except RuntimeError:
        return None, tracer.error() or "kz_tr_init failed"  # "no CUPTI: <what was tried>"
    except Exception as exc:  # noqa: BLE001 - contract: never raises
        return None, describe(exc)
    return tracer, ""


class SourceRecorder:
    """load_inline stand-in that notes each call's C++/CUDA source texts, then hands
    the call to `inner` (the real replacement). `compiled_in_child` is inner's."""

    def __init__(self, inner):
        self.inner, self.texts = inner, []
        self.compiled_in_child = getattr(inner, "compiled_in_child", [])

    def __call__(self, *args, **kwargs):
        from ..farm.inline import call_fields
        try:
            fields = call_fields(*args, **kwargs)
            self.texts += list(fields["cpp_sources"]) + list(fields["cuda_sources"])
        except Exception:  # noqa: BLE001 - inner raises the real error for bad calls
            pass
        return self.inner(*args, **kwargs)


def candidate_names(candidate_path: str, model_new, source_texts) -> set:
    """The candidate's kernel names: __global__ functions of its load_inline sources
    (and of its file's text), and its Triton JIT functions."""
    try:
        with open(candidate_path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError:
        text = ""
    module = sys.modules.get(getattr(model_new, "__module__", None) or "")
    return (trace_names.cuda_kernel_names(source_texts, [text]) |
            trace_names.triton_kernel_names(text, module))


def _repeated_calls(tracer, task, reference, candidate, device, options, keep=REPEATS + 1):
    """One call on fresh inputs, then REPEATS calls on the very same input tensors
    (same pointers, same values: what a result cache keys on), each traced and compared
    with the reference output (which ran on its own input set of the same seed). The
    last `keep` candidate outputs stay alive (a cache may hand back an earlier output;
    the memory plan lowers `keep` for large tasks). Returns an `incorrect` Failure or
    None; a candidate that raises gives its runtime_error Failure (raised)."""
    from ..run import correctness
    from ..run.compare import compare_outputs
    seed = options.seed + SEED_OFFSET
    correctness.seed_all(seed)
    ref_output = correctness.call_reference(
        reference, correctness.make_inputs(task, seed, device), device)
    cand_inputs, kept = correctness.make_inputs(task, seed, device), []
    for k in range(REPEATS + 1):
        label = "fresh inputs" if k == 0 else f"same inputs again ({k})"
        correctness.seed_all(seed)
        if len(kept) >= max(1, keep):
            kept.pop(0)
        output = correctness.call_candidate(candidate, cand_inputs, device,
                                            tracer.window(label, device))
        kept.append(output)
        _, failure = compare_outputs(k, ref_output, output, options)
        if failure:
            return Failure("incorrect", None, f"traced call '{label}': {failure}")
    return None


def compact_window(window: dict, budget: int) -> dict:
    """A window as the supervisor reads it (src/verify/trace_facts.h): names interned, each
    record a list [kind, name index, stream, start_ns, end_ns, graph, bytes, correlation,
    event, sync_id, flags]. Records past `budget` bytes of JSON are left out and counted in
    `dropped` (as records CUPTI dropped: the window is then judged by timing only)."""
    records, keep = window["records"], len(window["records"])
    while True:
        names, index, rows = [], {}, []
        for r in records[:keep]:
            name = r.get("name", "")
            if name not in index:
                index[name] = len(names)
                names.append(name)
            rows.append([r.get("kind", "?"), index[name]] + [int(r.get(k) or 0) for k in _FIELDS])
        out = {"label": window["label"], "caller_stream": window.get("caller_stream"),
               "legacy_stream": window.get("legacy_stream"),
               "dropped": window.get("dropped", 0) + len(records) - keep,
               "names": names, "records": rows}
        if "dependencies" in window:
            out["dependencies"] = window["dependencies"]
        size = len(json.dumps(out))
        if size <= budget or keep == 0:
            return out
        keep = min(keep - 1, int(keep * budget / size * 0.9))


def facts(tracer, names) -> dict:
    """The trace facts of the judge request: the CUPTI library, the candidate's kernel
    names and every window, within FACTS_BYTES together."""
    budget = FACTS_BYTES // max(1, len(tracer.windows))
    return {"library": tracer.library, "candidate_kernel_names": sorted(names)[:MAX_NAMES],
            "windows": [compact_window(w, budget) for w in tracer.windows]}


def run_stage(tracer, reason, task, reference, candidate, device, options, names, judge,
              keep=REPEATS + 1):
    """Stage `trace` after the correctness trials passed: the repeated-input calls, then the
    supervisor's judgement of every window: `judge(facts)` returns (verdict, reason), verdict
    "pass" | "reject" | "invalid". Returns (stage data, Failure or None): a rejection is
    `rejected` (error kind `trace`, the supervisor's reason, rule id first); facts it refused
    are a `worker_internal` error. The supervisor puts its own stages.trace object in the
    verdict; the event says only that it judged. CUPTI is disabled on the way out. Without a
    tracer, or when the tracer broke, the stage is {"status": "skipped", "reason": ...}."""
    if tracer is None:
        return {"status": "skipped", "reason": reason or "tracer unavailable"}, None
    try:
        mismatch = _repeated_calls(tracer, task, reference, candidate, device, options, keep)
    finally:
        tracer.disable()
    if tracer.broken is not None:
        return {"status": "skipped", "reason": tracer.broken}, mismatch
    verdict, why = judge(facts(tracer, names))
    stage = {"status": "judged", "verdict": verdict, "windows": len(tracer.windows)}
    if verdict == "reject":
        return stage, Failure("rejected", "trace", why)
    if verdict != "pass":
        return stage, Failure("runtime_error", "worker_internal", f"trace judge: {why}")
    return stage, mismatch
