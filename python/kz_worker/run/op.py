"""Op `run`: verify one candidate against its task (docs/worker-protocol.md).

Stages, each followed by an `event` frame: load (task, candidate, both models built
after `torch.manual_seed(options.seed)` and moved to the device), parameters,
correctness (each candidate call traced with CUPTI on a GPU), trace (the launch-trace
rules, docs/trace.md), extra_checks, timing (raw per-call times: the supervisor computes
the statistics and the host-time cross-check). The first Failure ends the run; `run_op`
returns the `result`.
"""

import importlib.metadata
import os
import time

import torch

from .. import loader
from ..failure import Failure, candidate_failure, describe, traceback_tail
from ..farm import inline
from ..options import parse_run_request
from ..trace import stage as trace
from . import correctness, extra_checks, inputs, memory_plan, params
from .timed import measure


def _version(package: str):
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def device_info(device: torch.device) -> dict:
    """The result's `device` object for `device` (cuda:0 or cpu)."""
    info = {"kind": device.type}
    if device.type == "cuda":
        major, minor = torch.cuda.get_device_capability(0)
        info.update(index=0, name=torch.cuda.get_device_name(0), capability=f"{major}.{minor}")
    else:
        info["triton_interpret"] = os.environ.get("TRITON_INTERPRET") == "1"
    info.update(torch=torch.__version__, cuda=torch.version.cuda, triton=_version("triton"))
    return info


def prepare_timing(device: str):
    """Import `kz_worker.run.timing` and load its native runtime; called before any task or
    candidate code. Returns (module or None, reason it is unavailable)."""
    if device != "cuda":
        return None, "no GPU"
    try:
        from . import timing
    except Exception as exc:
        return None, f"timing module unavailable: {describe(exc)}"
    ok, reason = timing.load_runtime()
    return (timing, "") if ok else (None, reason or "timing runtime not loaded")


class _Run:
    """One verification; `stages` collects the stage objects as they are sent."""

    def __init__(self, request, channel, timing, timing_reason, tracer=None, trace_reason="no GPU"):
        self.request, self.options, self.channel = request, request.options, channel
        self.timing, self.timing_reason = timing, timing_reason
        self.tracer, self.trace_reason = tracer, trace_reason
        self.stages = {}
        self.plan = memory_plan.choose(None)
        self.profile = {"stages": {}}  # where the time and the memory went (docs/memory.md)
        self._mark = time.monotonic()
        self.device = torch.device("cuda:0" if request.device == "cuda" else "cpu")
        self.device_info = {"kind": self.device.type}
        self.extensions = inline.PrebuiltLoader(request.prebuilt)
        self.loader = trace.SourceRecorder(self.extensions)  # notes the kernel sources

    def stage(self, name: str, data: dict) -> None:
        """Record the finished stage `name` (with its time and peak GPU memory in the
        profile) and send its `event` frame."""
        now = time.monotonic()
        entry = {"seconds": round(now - self._mark, 6)}
        if self.device.type == "cuda" and torch.cuda.is_initialized():
            entry["peak_gpu_bytes"] = torch.cuda.max_memory_allocated(self.device)
            torch.cuda.reset_peak_memory_stats(self.device)
        self.profile["stages"][name] = entry
        self._mark = now
        self.stages[name] = data
        self.channel.event(name, data)

    def gate(self, want: str) -> None:
        """The GPU gate's safe point (docs/throughput.md), when options.gate is on: the
        device is synchronised first (no kernel of the stage before outlives its hold); the
        wait is noted in the profile."""
        if not self.options.gate:
            return
        if self.device.type == "cuda" and torch.cuda.is_initialized():
            torch.cuda.synchronize(self.device)
        t0 = time.monotonic()
        self.channel.gate(want, self.options.footprint_bytes)
        waits = self.profile.setdefault("gate", {})
        waits[want + "_wait_s"] = round(time.monotonic() - t0, 6)

    def execute(self) -> str:
        """Run every stage; return the reason of a `correct` verdict or raise Failure."""
        self.gate("shared")  # before CUDA is initialised
        self.setup_device()
        self.enable_trace()
        task, reference, candidate = self.load()
        data = params.match_parameters(reference, candidate)
        self.stage("parameters", data)
        if data["status"] == "mismatch":
            raise Failure("incorrect", None, params.mismatch_reason(data))
        self.facts = {}
        data, failure = correctness.run_trials(task, reference, candidate, self.device,
                                               self.options, self.tracer, self.facts)
        self.stage("correctness", data)
        if failure is not None:
            raise failure
        if data["status"] == "fail":
            raise Failure("incorrect", None, correctness.first_failure(data))
        sizes = data.get("bytes") or {}
        self.plan = memory_plan.choose(sizes, bool(sizes.get("reference_writes_inputs")))
        self.profile["memory_plan"] = self.plan.describe()
        self.profile["inputs"] = inputs.origin(task, self.device)
        trials = data["trials_run"]
        if self.options.integrity:
            self.integrity_stages(task, reference, candidate)
        return self.time(task, reference, candidate, trials)

    def integrity_stages(self, task, reference, candidate) -> None:
        """Stages `trace` and `extra_checks` (skipped with options.integrity off)."""
        self.trace_stage(task, reference, candidate)
        data, failure_message = extra_checks.run(task, reference, candidate, self.device,
                                                 self.options,
                                                 self.facts.get("weak_task", False))
        self.stage("extra_checks", data)
        if failure_message:
            raise Failure("incorrect", None, failure_message)

    def setup_device(self) -> None:
        """not_run without a GPU for device cuda; else memory fraction, no TF32."""
        if self.device.type == "cuda":
            if not torch.cuda.is_available():
                raise Failure("not_run", None, "device cuda requested but no GPU is visible")
            if self.options.gpu_mem_fraction is not None:
                torch.cuda.set_per_process_memory_fraction(self.options.gpu_mem_fraction, 0)
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False
        self.device_info = device_info(self.device)

    def enable_trace(self) -> None:
        """Activate CUPTI before any candidate code runs (graphs instantiated later are
        traced); a failure leaves the trace unavailable, with the reason."""
        if self.tracer is None:
            return
        try:
            self.tracer.enable()
        except RuntimeError as exc:
            self.tracer, self.trace_reason = None, str(exc)

    def trace_stage(self, task, reference, candidate) -> None:
        """Stage `trace`: the traced calls, judged by the supervisor (docs/trace.md)."""
        names = trace.candidate_names(self.request.candidate_path, type(candidate),
                                      self.loader.texts)
        data, failure = trace.run_stage(self.tracer, self.trace_reason, task, reference,
                                        candidate, self.device, self.options, names,
                                        lambda facts: self.channel.judge("trace", facts),
                                        keep=self.plan.traced_outputs)
        self.stage("trace", data)
        if failure is not None:
            raise failure

    def load(self):
        """Stage `load`: import both modules, construct and move both models.

        `compiled_in_child` is the live list of inline extensions compiled in this
        process, so the final result also names those compiled after this stage.
        """
        start = time.monotonic()
        data = {"status": "ok", "seconds": 0.0,
                "compiled_in_child": self.extensions.compiled_in_child}
        try:
            task = loader.load_task(self.request.task_path)
            model_new = (loader.load_task(self.request.candidate_path).model
                         if self.options.self_check
                         else loader.load_candidate(self.request.candidate_path))
            reference, candidate = self.construct(task, model_new)
        except BaseException:
            data["status"] = "error"
            raise
        finally:
            data["seconds"] = round(time.monotonic() - start, 6)
            self.stage("load", data)
        return task, reference, candidate

    def construct(self, task, model_new):
        """Both models, each built right after seeding with options.seed (the init
        inputs too), under `torch.device(device)` so that large parameters are created on
        the GPU (a constructor that fails there is built on the host), then moved."""
        reference = self._built(lambda: loader.construct_reference(task, loader.init_inputs(task)))
        candidate = self._built(lambda: loader.construct_candidate(model_new,
                                                                   loader.init_inputs(task)))
        try:
            reference.to(self.device)
        except BaseException as exc:
            raise Failure.from_exception("invalid_task", "invalid_task",
                                         "task: moving Model to the device", exc) from None
        try:
            candidate.to(self.device)
        except BaseException as exc:
            raise candidate_failure(exc, "moving ModelNew to the device", "runtime_error",
                                    "runtime") from None
        return reference, candidate

    def _built(self, build):
        """`build()` after seeding, on the device first; on the host (seeded again) when
        that raises an ordinary exception other than a classified Failure."""
        correctness.seed_all(self.options.seed)
        if self.device.type != "cuda":
            return build()
        try:
            with torch.device(self.device):
                return build()
        except Failure as failure:
            if failure.status != "invalid_task" and failure.kind not in ("constructor_error",):
                raise
        except Exception:  # noqa: BLE001 - host-only constructor code: retried on the host
            pass
        correctness.seed_all(self.options.seed)
        return build()

    def time(self, task, reference, candidate, trials: int) -> str:
        """Stage `timing` (after correctness passed); return the `correct` reason."""
        if self.device.type != "cuda":
            data = {"status": "skipped", "reason": "no GPU"}
        elif not self.options.timing:
            data = {"status": "skipped", "reason": "timing disabled by options"}
        elif self.timing is None:
            data = {"status": "skipped", "reason": self.timing_reason}
        else:
            self.gate("exclusive")
            data = measure(self.timing, task, reference, candidate, self.device, self.options,
                           self.plan)
        self.gate("release")
        self.stage("timing", data)
        reason = f"matched the reference on {trials} trials"
        if data.get("status") != "measured":
            return f"{reason} (timing skipped: {data.get('reason')})"
        return reason  # the supervisor judges the times (speedup, host cross-check)


def run_op(request: dict, channel) -> dict:
    """Handle a `run` request; send its events on `channel`, return its result frame.

    Raises ProtocolError for a malformed request. Unexpected exceptions of the worker
    itself become status runtime_error with error kind `worker_internal`.
    """
    parsed = parse_run_request(request)
    timing, timing_reason = prepare_timing(parsed.device)
    tracer, trace_reason = trace.prepare(parsed.device) \
        if parsed.options.integrity and not parsed.options.self_check \
        else (None, "self-check: the reference is its own candidate (rules that require the "
                    "candidate's own kernels are lifted)" if parsed.options.self_check
              else "integrity checks off")
    run = _Run(parsed, channel, timing, timing_reason, tracer, trace_reason)
    status, error = "correct", None
    try:
        with torch.no_grad(), inline.replaced(run.loader):
            reason = run.execute()
    except Failure as failure:
        status, reason, error = failure.status, failure.reason, failure.error()
    except (Exception, SystemExit) as exc:
        status, reason = "runtime_error", f"worker internal error: {describe(exc)}"
        error = {"kind": "worker_internal", "message": str(exc), "traceback": traceback_tail(exc)}
    return {"type": "result", "status": status, "reason": reason, "stages": run.stages,
            "device": run.device_info, "error": error, "profile": run.profile}
