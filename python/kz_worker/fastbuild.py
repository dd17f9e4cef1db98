"""Faster builds of `load_inline` extensions with the same output (docs/compile-farm.md).

Torch's own `load_inline` writes `main.cpp`, `cuda.cu` and `build.ninja`; `accelerated()`
hooks its ninja step and, before ninja runs:

- host: adds a GCC precompiled header of `<torch/extension.h>` to `main.cpp`'s flags,
  built once per exact flag set under `pch_root` (GCC checks a PCH against the flags and
  ignores an unusable one: a mismatch costs time, never correctness; `-Winvalid-pch`
  says so in the log);
- device, fastest first (`header_mode`):
  `split`: cuda.cu is cut into a torch-free device part (nvcc, ~1 s) and a host part
  appended to main.cpp (g++ with the PCH); see cusplit.py;
  `lite`: cuda.cu is compiled against `kz_torch_lite.h` instead of `<torch/types.h>` /
  `<torch/extension.h>` (the Tensor class, factory ops, the `torch::` names and dtype
  constants: a subset of the same declarations);
  `full`: torch's own files. A mode that fails to compile or link falls back to the next,
  so a source that needs more than a mode offers costs time, never correctness.

`run_modes` is that sequence for any ninja runner: torch's (`accelerated`) or the
torch-free one of ninja_template.py (`check_symbols_nm` then checks a split build).
This module imports torch only inside `accelerated`.
"""

import contextlib
import fcntl
import hashlib
import os
import re
import subprocess
import sys
import time

from . import cusplit

LITE_NAME = "kz_torch_lite.h"
PCH_NAME = "kz_torch_ext.h"
_TORCH_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]torch/(types|extension)\.h[>"]\s*$', re.M)

LITE_HEADER = """// Written by KernelZero's build farm: a lighter stand-in for <torch/types.h>.
#pragma once
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/zeros_like.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/ones_like.h>
#include <ATen/ops/full.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/util/Exception.h>
#include <optional>
namespace at { namespace cuda { using c10::cuda::getCurrentCUDAStream; } }
namespace torch {
using namespace at;
using std::nullopt;
using std::optional;
using Dtype = at::ScalarType;
constexpr auto kUInt8 = at::kByte; constexpr auto kInt8 = at::kChar;
constexpr auto kInt16 = at::kShort; constexpr auto kInt32 = at::kInt;
constexpr auto kInt64 = at::kLong; constexpr auto kUInt16 = at::kUInt16;
constexpr auto kUInt32 = at::kUInt32; constexpr auto kUInt64 = at::kUInt64;
constexpr auto kFloat16 = at::kHalf; constexpr auto kFloat32 = at::kFloat;
constexpr auto kFloat64 = at::kDouble;
constexpr auto kU8 = kUInt8; constexpr auto kU16 = kUInt16; constexpr auto kU32 = kUInt32;
constexpr auto kU64 = kUInt64; constexpr auto kI8 = kInt8; constexpr auto kI16 = kInt16;
constexpr auto kI32 = kInt32; constexpr auto kI64 = kInt64; constexpr auto kF16 = kFloat16;
constexpr auto kF32 = kFloat32; constexpr auto kF64 = kFloat64;
}
"""


def _ninja_vars(path: str) -> dict:
    out = {}
    with open(path) as f:
        for line in f:
            m = re.match(r"^(\w+) = (.*)$", line.rstrip("\n"))
            if m:
                out[m.group(1)] = m.group(2)
    return out


def _set_ninja_var(path: str, name: str, value: str) -> None:
    with open(path) as f:
        text = f.read()
    text = re.sub(rf"^{name} = .*$", lambda _: f"{name} = {value}", text, count=1, flags=re.M)
    with open(path, "w") as f:
        f.write(text)


def _torch_version() -> str:
    """torch.__version__, read from torch/version.py unless torch is already imported."""
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "__version__"):
        return str(torch.__version__)
    from .probe import probe
    return probe()["torch"] or ""


def ensure_pch(pch_root: str, cxx: str, cflags: str) -> tuple[str, float]:
    """Directory holding a PCH of <torch/extension.h> for exactly these flags (built once,
    under a lock, written to a temp file and renamed). Returns (dir, seconds spent)."""
    flags = re.sub(r"-DTORCH_EXTENSION_NAME=\S+", "", cflags).split()
    key = hashlib.sha256(("\0".join([cxx, _torch_version()] + flags)).encode()).hexdigest()[:24]
    pch_dir = os.path.join(pch_root, key)
    gch = os.path.join(pch_dir, PCH_NAME + ".gch")
    if os.path.isfile(gch):
        return pch_dir, 0.0
    os.makedirs(pch_dir, exist_ok=True)
    start = time.monotonic()
    with open(os.path.join(pch_root, key + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.isfile(gch):
            with open(os.path.join(pch_dir, PCH_NAME), "w") as f:
                f.write("#include <torch/extension.h>\n")
            tmp = f"{gch}.tmp.{os.getpid()}"
            cmd = [cxx, *flags, "-x", "c++-header", os.path.join(pch_dir, PCH_NAME), "-o", tmp]
            subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            os.rename(tmp, gch)
    return pch_dir, time.monotonic() - start


def _add_pch(build_dir: str, pch_root: str, report: dict) -> None:
    """Give main.cpp's compile the precompiled torch header (report says whether)."""
    ninja = os.path.join(build_dir, "build.ninja")
    nv = _ninja_vars(ninja)
    if not pch_root or "cflags" not in nv:
        return
    try:
        pch_dir, secs = ensure_pch(pch_root, nv.get("cxx", "c++"), nv["cflags"])
        report["pch_seconds"] = round(secs, 3)
        _set_ninja_var(ninja, "cflags", f'{nv["cflags"]} -I{pch_dir} -include {PCH_NAME} -Winvalid-pch')
        report["pch"] = True
    except (OSError, subprocess.CalledProcessError) as exc:
        report["pch"] = False
        report["pch_error"] = str(exc)[-500:]


def _read(path: str):
    if not os.path.isfile(path):
        return None
    with open(path) as f:
        return f.read()


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _modes(cu: str | None, report: dict) -> list:
    """Header modes to try, fastest first: split (torch-free device part), lite, full."""
    if cu is None:
        return ["full"]
    modes = []
    try:
        report["split_kernels"] = len(cusplit.split(cu).kernels)
        modes.append("split")
    except cusplit.Unsplittable as exc:
        report["split_skipped"] = str(exc)
    if _TORCH_INCLUDE.search(cu):
        modes.append("lite")
    return modes + ["full"]


def _apply(build_dir: str, mode: str, cu: str | None, main: str | None) -> None:
    """Write cuda.cu and main.cpp for `mode` from their original texts."""
    cu_path, main_path = os.path.join(build_dir, "cuda.cu"), os.path.join(build_dir, "main.cpp")
    for obj in ("main.o", "cuda.cuda.o"):                # a retry must not reuse a stale object
        with contextlib.suppress(FileNotFoundError):
            os.remove(os.path.join(build_dir, obj))
    if mode == "split":
        parts = cusplit.split(cu)
        _write(cu_path, parts.device)
        _write(main_path, f'{parts.host}#line 1 "main.cpp"\n{main}')
        return
    if main is not None:
        _write(main_path, main)
    if cu is not None:
        _write(cu_path, _TORCH_INCLUDE.sub(f'#include "{LITE_NAME}"', cu) if mode == "lite" else cu)
    if mode == "lite":
        _write(os.path.join(build_dir, LITE_NAME), LITE_HEADER)


def _check_symbols(build_dir: str, cu: str | None = None) -> None:
    """Load the built library with every symbol bound now: a split that left a kernel
    stub undefined fails here (RuntimeError -> next mode), not at the GPU's import."""
    import ctypes
    import glob
    for lib in glob.glob(os.path.join(glob.escape(build_dir), "*.so")):
        try:
            ctypes.CDLL(lib, mode=os.RTLD_NOW | os.RTLD_LOCAL)
        except OSError as exc:
            if "undefined symbol" in str(exc):
                raise RuntimeError(f"split build left a symbol undefined: {exc}") from None


_GLOBAL_TYPES = set("ABCDGINRSTVWu")                      # nm types of a global definition
_LOCAL_TYPES = set("bdgrst")                               # ... and of a local one


def _nm(path: str) -> dict:
    """{symbol: set of nm type letters} of an object file."""
    out = subprocess.run(["nm", path], check=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2 and len(parts[-2]) == 1:
            syms.setdefault(parts[-1], set()).add(parts[-2])
    return syms


def _base_name(demangled: str) -> str:
    """`void ns::k<16>(float*)` -> `k`."""
    head, depth, out = demangled.split("(", 1)[0], 0, []
    for c in head:
        depth += {"<": 1, ">": -1}.get(c, 0)
        if depth == 0 and c not in "<>":
            out.append(c)
    words = "".join(out).split()
    return words[-1].split("::")[-1] if words else ""


def check_symbols_nm(build_dir: str, cu: str | None = None) -> None:
    """Torch-free stand-in for `_check_symbols` (RuntimeError -> next mode): a symbol
    main.o needs is broken when cuda.cuda.o defines it only locally (nvcc's internal
    template stubs), or when it names a kernel or kz_tl_* launcher of the split that
    cuda.cuda.o does not define globally."""
    try:
        main = _nm(os.path.join(build_dir, "main.o"))
        dev = _nm(os.path.join(build_dir, "cuda.cuda.o"))
        kernels = set(cusplit.split(cu).kernels) if cu is not None else set()
    except (OSError, subprocess.CalledProcessError, cusplit.Unsplittable) as exc:
        raise RuntimeError(f"split build could not be checked: {exc}") from None
    needed = sorted(s for s, types in main.items() if types & {"U", "w"} and not dev.get(s, set()) & _GLOBAL_TYPES)
    local = [s for s in needed if dev.get(s, set()) & _LOCAL_TYPES]
    names = subprocess.run(["c++filt"], input="\n".join(needed), stdout=subprocess.PIPE,
                           text=True).stdout.splitlines() if needed else []
    missing = [s for s, d in zip(needed, names) if s not in local and
               (_base_name(d) in kernels or _base_name(d).startswith("kz_tl_"))]
    if local or missing:
        raise RuntimeError(f"split build left a symbol undefined: {(local + missing)[0]}")


def run_modes(build_directory: str, pch_root: str, report: dict, run_ninja, check_split):
    """Build the files torch's load_inline layout left in `build_directory` with the PCH
    and the fastest header mode that compiles: `run_ninja()` runs the build (RuntimeError
    on failure), `check_split(dir, cu)` vets a split build. The last mode's error is raised."""
    _add_pch(build_directory, pch_root, report)
    cu = _read(os.path.join(build_directory, "cuda.cu"))
    main = _read(os.path.join(build_directory, "main.cpp"))
    modes = _modes(cu, report) if main is not None else ["full"]
    for i, mode in enumerate(modes):
        _apply(build_directory, mode, cu, main)
        report["header_mode"] = mode
        try:
            result = run_ninja()
            if mode == "split":
                check_split(build_directory, cu)
            return result
        except RuntimeError:
            if i == len(modes) - 1:
                raise
            report.setdefault("fallbacks", []).append(mode)


@contextlib.contextmanager
def accelerated(pch_root: str, report: dict, on_written=None):
    """Within this block, `load_inline` builds go through `run_modes` with torch's ninja
    runner and the ctypes symbol check. `on_written(build_dir)` is called first, while the
    files are still torch's own. `report` receives pch, header_mode, the modes that failed
    (`fallbacks`) and timings."""
    import torch.utils.cpp_extension as ce
    real = ce._run_ninja_build

    def run(build_directory, verbose, error_prefix):
        if on_written is not None:
            on_written(build_directory)
        return run_modes(build_directory, pch_root, report,
                         lambda: real(build_directory, verbose, error_prefix), _check_symbols)

    ce._run_ninja_build = run
    try:
        yield
    finally:
        ce._run_ninja_build = real
