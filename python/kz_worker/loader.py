"""Load task and candidate modules from paths and construct their models.

Modules get unique names (`kz_task_<hex>`, `kz_candidate_<hex>`) and are registered in
`sys.modules` while they execute, with their real path as `__file__` (Triton's JIT
reads kernel source through it). Every failure is raised as a classified `Failure`:

* task problems -> status `invalid_task`;
* candidate problems -> status `compile_error` with error kind `python_syntax` (with
  `line`), `import_error`, `missing_model_new`, `constructor_mismatch`,
  `constructor_error`, or the kind of an inline-extension failure (`compile_error`,
  `library_load_error`); a CUDA error raised by candidate code -> `runtime_error`.
"""

import importlib.util
import inspect
import sys
import uuid
from dataclasses import dataclass

import torch

from .failure import Failure, candidate_failure, traceback_tail

TASK_NAMES = ("Model", "get_inputs", "get_init_inputs")


@dataclass
class Task:
    """The reference task: its `Model` class and input factories."""
    model: type
    get_inputs: object
    get_init_inputs: object
    namespace: dict | None = None  # the task module's globals (its size constants live here)


def _task_failure(what: str, exc: BaseException, kind: str = "invalid_task") -> Failure:
    return Failure.from_exception("invalid_task", kind, f"task: {what}", exc)


def exec_module(path: str, role: str):
    """Compile and execute the file at `path` as a fresh module; return the module.

    `role` is "task" (failures are `invalid_task`) or "candidate" (`compile_error`,
    see `candidate_failure`). Kinds: python_syntax for a compile-time SyntaxError
    (`line` set), import_error for anything raised by module-level code (SystemExit
    included) or an unreadable file.
    """
    status = "invalid_task" if role == "task" else "compile_error"
    try:
        with open(path, "rb") as handle:
            code = compile(handle.read(), path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise Failure(status, "python_syntax",
                      f"{role}: syntax error at line {exc.lineno}: {exc.msg}",
                      message=str(exc), tb=traceback_tail(exc), line=exc.lineno) from None
    except (OSError, ValueError) as exc:
        raise Failure.from_exception(status, "import_error", f"{role}: reading {path}",
                                     exc) from None
    name = f"kz_{role}_{uuid.uuid4().hex[:12]}"
    module = importlib.util.module_from_spec(importlib.util.spec_from_file_location(name, path))
    sys.modules[name] = module
    try:
        exec(code, module.__dict__)
    except BaseException as exc:  # module code may raise anything, SystemExit too
        del sys.modules[name]
        if role == "task":
            raise _task_failure("module-level code", exc, "import_error") from None
        raise candidate_failure(exc, "module-level code", status, "import_error") from None
    return module


def load_task(path: str) -> Task:
    """Load the reference task; Failure(invalid_task) if it is unusable."""
    module = exec_module(path, "task")
    missing = [n for n in TASK_NAMES if not callable(getattr(module, n, None))]
    if missing:
        raise Failure("invalid_task", "invalid_task", f"task: does not define {', '.join(missing)}")
    return Task(module.Model, module.get_inputs, module.get_init_inputs, vars(module))


def load_candidate(path: str) -> type:
    """Load the candidate and return its `ModelNew`; Failure(compile_error) otherwise."""
    module = exec_module(path, "candidate")
    model_new = getattr(module, "ModelNew", None)
    if not callable(model_new):
        raise Failure("compile_error", "missing_model_new", "candidate: does not define ModelNew")
    return model_new


def init_inputs(task: Task) -> list:
    """`get_init_inputs()` as a list; Failure(invalid_task) if it raises."""
    try:
        inputs = task.get_init_inputs()
    except BaseException as exc:
        raise _task_failure("get_init_inputs()", exc) from None
    if not isinstance(inputs, (list, tuple)):
        raise Failure("invalid_task", "invalid_task",
                      f"task: get_init_inputs() returned {type(inputs).__name__}, not a list")
    return list(inputs)


def construct_reference(task: Task, inputs: list) -> torch.nn.Module:
    """`Model(*inputs)`; Failure(invalid_task) if it raises or is no nn.Module."""
    try:
        model = task.model(*inputs)
    except BaseException as exc:
        raise _task_failure("Model constructor", exc) from None
    if not isinstance(model, torch.nn.Module):
        raise Failure("invalid_task", "invalid_task", "task: Model is not a torch.nn.Module")
    return model


def construct_candidate(model_new: type, inputs: list) -> torch.nn.Module:
    """`ModelNew(*inputs)`, classified on failure (status `compile_error` unless a CUDA
    error): a signature that does not bind `inputs`, or a TypeError, is
    `constructor_mismatch`; any other exception, or a result that is no nn.Module,
    `constructor_error`; a failing inline extension keeps its kind."""
    try:
        signature = inspect.signature(model_new)
    except (TypeError, ValueError):
        signature = None
    if signature is not None:
        try:
            signature.bind(*inputs)
        except TypeError as exc:
            raise Failure("compile_error", "constructor_mismatch",
                          f"candidate: ModelNew does not accept get_init_inputs(): {exc}",
                          message=str(exc), tb=traceback_tail(exc)) from None
    try:
        model = model_new(*inputs)
    except BaseException as exc:
        kind = "constructor_mismatch" if isinstance(exc, TypeError) else "constructor_error"
        raise candidate_failure(exc, "ModelNew constructor", "compile_error", kind) from None
    if not isinstance(model, torch.nn.Module):
        raise Failure("compile_error", "constructor_error",
                      "candidate: ModelNew is not a torch.nn.Module")
    return model
