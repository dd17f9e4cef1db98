"""KernelBench's per-sample GPU evaluation, as bench/serve/kernelbench_pipeline.py runs it in
one spawned process per sample (our own code, reproducing the shape of KernelBench's
eval.eval_kernel_against_ref and timing.time_execution_with_cuda_event with their defaults;
kernelbench_pipeline.py's docstring names the sources and where we depart)."""
import importlib.util
import os
import statistics
import tempfile
import time
import traceback

SEED = 42                 # KernelBench eval_kernel_against_ref(seed_num=42)
CORRECT_TRIALS = 5        # EvalConfig.num_correct_trials
PERF_TRIALS = 100         # EvalConfig.num_perf_trials
WARMUP, DISCARD = 3, 1    # timing.time_execution_with_cuda_event defaults
SPEEDUP_FLAG = 10.0       # excessive_speedup_threshold


def with_build_dir(src, build_dir):
    # As KernelBench's load_custom_model: the candidate sets TORCH_EXTENSIONS_DIR itself,
    # so load_inline builds in (or loads from) the sample's own directory.
    return f"import os\nos.environ['TORCH_EXTENSIONS_DIR'] = {build_dir!r}\n" + src



# ----------------------------------------------------------------------------------------
# Phase 2: GPU eval (one spawned process per sample).

def _timing_stats(ms):
    def sig3(x):
        return float(f"{x:.3g}")
    return {"mean": sig3(statistics.fmean(ms)), "std": sig3(statistics.pstdev(ms)), "min": sig3(min(ms)),
            "max": sig3(max(ms)), "num_trials": len(ms)}


def _cuda_event_times(torch, fn, inputs, dev):
    """KernelBench's cuda_event timing: warm-ups, then per trial a synchronize, an L2 flush
    (a 256 MB fill), start event, the call, end event, synchronize; first trial dropped."""
    out = []
    with torch.cuda.device(dev):
        for _ in range(WARMUP):
            fn(*inputs)
            torch.cuda.synchronize(device=dev)
        torch.cuda.empty_cache()
        for trial in range(PERF_TRIALS + DISCARD):
            torch.cuda.synchronize(device=dev)
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            flush = torch.empty((32, 1024, 1024), dtype=torch.int64, device=dev)
            flush.fill_(42)
            del flush
            start.record()
            fn(*inputs)
            end.record()
            torch.cuda.synchronize(device=dev)
            if trial >= DISCARD:
                out.append(start.elapsed_time(end))
    return out


def _against_reference(torch, spec, dev, ph, tmp):
    """The steps of KernelBench's eval_kernel_against_ref (fp32, backend from the sample)."""
    clock = [time.time()]

    def lap(name):
        now = time.time()
        ph[name] = now - clock[0]
        clock[0] = now

    def seed(s):
        torch.manual_seed(s)
        torch.cuda.manual_seed(s)

    def to_dev(x):
        return x.to(dtype=torch.float32).to(device=dev) if isinstance(x, torch.Tensor) else x

    res = {"compiled": False, "correct": False}
    torch.cuda.set_device(dev)
    res["hardware"] = torch.cuda.get_device_name(dev)
    lap("cuda_init_s")

    ref = {}
    exec(compile(spec["task"], "<string>", "exec"), ref)   # a broken task raises: the outer catch
    Model, get_init_inputs, get_inputs = ref.get("Model"), ref.get("get_init_inputs"), ref.get("get_inputs")
    seed(SEED)
    init_inputs = [to_dev(x) for x in get_init_inputs()]
    with torch.no_grad():
        seed(SEED)
        original = Model(*init_inputs)
    lap("ref_load_s")

    os.environ["TORCH_USE_CUDA_DSA"] = "1"
    ModelNew = None
    try:
        if spec["backend"] == "triton":
            # Triton needs a real module file (its JIT reads the source): a temp file, imported.
            with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
                f.write(spec["candidate"])
                tmp.append(f.name)
            mspec = importlib.util.spec_from_file_location("temp_module", tmp[0])
            module = importlib.util.module_from_spec(mspec)
            mspec.loader.exec_module(module)
            ModelNew = getattr(module, "ModelNew")
        else:
            ctx = {"BUILD_DIRECTORY": spec["build_dir"]}
            try:
                exec(compile(with_build_dir(spec["candidate"], spec["build_dir"]), "<string>", "exec"), ctx)
                ModelNew = ctx.get("ModelNew")
            except SyntaxError:
                ModelNew = None
        torch.cuda.synchronize(device=dev)
    except Exception as e:  # noqa: BLE001 - compile failure of the candidate
        lap("cand_load_s")
        if "lock" in str(e) or "No such file or directory" in str(e):
            res["kernelbench_none"] = True   # KernelBench returns None ("please retry")
        res.update(error_kind="compilation_error", error=f"{type(e).__name__}: {str(e)[:300]}")
        return res
    lap("cand_load_s")
    if ModelNew is None:
        res.update(error_kind="compilation_error", error="SyntaxError or no ModelNew")
        return res

    try:
        with torch.no_grad():
            seed(SEED)
            custom = ModelNew(*init_inputs)
            original = original.to(device=dev, dtype=torch.float32)
            custom = custom.to(device=dev, dtype=torch.float32)
            torch.cuda.synchronize(device=dev)
    except RuntimeError as e:
        res.update(compiled=True, error_kind="runtime_error", error=f"{type(e).__name__}: {str(e)[:300]}")
        return res
    res["compiled"] = True

    # Correctness: trial seeds drawn from seed 42; reference first, then the candidate, on
    # the same inputs; shape mismatch or an exception ends it; a value mismatch is counted.
    passed = {spec["tolerance"]: 0, 1e-4: 0}
    try:
        torch.manual_seed(SEED)
        seeds = [torch.randint(0, 2**32 - 1, (1,)).item() for _ in range(CORRECT_TRIALS)]
        with torch.no_grad():
            for s in seeds:
                seed(s)
                inputs = [to_dev(x) for x in get_inputs()]
                seed(s)
                model = original.to(device=dev, dtype=torch.float32)
                seed(s)
                model_new = custom.to(device=dev, dtype=torch.float32)
                want = model(*inputs)
                torch.cuda.synchronize(device=dev)
                try:
                    got = model_new(*inputs)
                    torch.cuda.synchronize(device=dev)
                    if want.shape != got.shape:
                        res.update(error_kind="correctness_issue", error=f"shape {tuple(got.shape)} != {tuple(want.shape)}")
                        break
                    for tol in passed:
                        passed[tol] += bool(torch.allclose(want, got, atol=tol, rtol=tol))
                except Exception as e:  # noqa: BLE001 - the candidate failed at run time
                    res.update(error_kind="runtime_error", error=f"{type(e).__name__}: {str(e)[:300]}")
                    break
    except Exception as e:  # noqa: BLE001 - e.g. the reference failed after the candidate broke the context
        res.update(error_kind="runtime_error", error=f"{type(e).__name__}: {str(e)[:300]}")
    res["trials_passed"] = passed[spec["tolerance"]]
    res["correct"] = "error_kind" not in res and passed[spec["tolerance"]] == CORRECT_TRIALS
    res["correct_at_1e-4"] = "error_kind" not in res and passed[1e-4] == CORRECT_TRIALS
    lap("correctness_s")

    if res["correct"]:
        try:
            torch.cuda.synchronize(device=dev)
            seed(SEED)
            inputs = [to_dev(x) for x in get_inputs()]
            stats = _timing_stats(_cuda_event_times(torch, custom.to(device=dev, dtype=torch.float32), inputs, dev))
            res["runtime_ms"], res["runtime_stats"] = stats["mean"], stats
        except Exception as e:  # noqa: BLE001
            res["error_during_performance"] = f"{type(e).__name__}: {str(e)[:300]}"
    lap("timing_s")

    # The excessive-speedup check runs whatever the verdict (not in a try, as KernelBench).
    torch.cuda.synchronize(device=dev)
    seed(SEED)
    inputs = [to_dev(x) for x in get_inputs()]
    ref_stats = _timing_stats(_cuda_event_times(torch, original, inputs, dev))
    res["ref_runtime_ms"] = ref_stats["mean"]
    if res.get("runtime_ms"):
        res["speedup"] = ref_stats["mean"] / res["runtime_ms"]
        res["excessive_speedup"] = res["speedup"] > SPEEDUP_FLAG
    lap("ref_timing_s")
    return res


def eval_one(spec):
    """Runs in the sample's own spawned process (KernelBench's evaluate_single_sample)."""
    t_enter = time.time()
    ph = {"spawn_s": t_enter - spec["t_submit"]}
    import torch
    ph["import_torch_s"] = time.time() - t_enter
    dev = torch.device("cuda", spec["gpu"])
    tmp = []
    try:
        res = _against_reference(torch, spec, dev, ph, tmp)
        with torch.cuda.device(dev):   # graceful_eval_cleanup
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats(device=dev)
            torch.cuda.synchronize(device=dev)
    except Exception as e:  # noqa: BLE001 - KernelBench's last-level catch: not compiled
        kind = "cuda_error" if "CUDA error" in str(e) else "other_error"
        res = {"compiled": False, "correct": False, "error_kind": kind,
               "error": f"{type(e).__name__}: {str(e)[:300]}", "traceback": traceback.format_exc()[-800:]}
    finally:
        for t in tmp:
            os.remove(t)
    res["phases"] = ph
    return res
