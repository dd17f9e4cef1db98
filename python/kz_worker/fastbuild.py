"""Faster builds of `load_inline` extensions with the same output (docs/compile-farm.md;
the precompiled headers themselves: pch.py).

Torch's own `load_inline` writes `main.cpp`, `cuda.cu` and `build.ninja`; `accelerated()`
hooks its ninja step and, before ninja runs:

- host (`host_header`): main.cpp (with, in split mode, cuda.cu's host part) is compiled
  against a GCC precompiled header, built once per exact flag set under `pch_root` (GCC
  checks a PCH against the flags and ignores an unusable one: a mismatch costs time, never
  correctness; `-Winvalid-pch` says so in the log). First against `kz_torch_host.h`
  (`slim`): `<torch/types.h>`, the header torch's own cuda.cu layout includes, and the
  Python binding headers of `<torch/python.h>`, i.e. `<torch/extension.h>` without torch's
  C++ frontend (`<torch/all.h>`: nn, optim, data, serialize, jit, ...), whose inline
  functions GCC would otherwise instantiate and emit again in every build (~2.5 s of ~5 s).
  A main.cpp that fails to compile against it, or whose sources include a header of the
  frontend, is built against `<torch/extension.h>` (`torch`), as is the last mode always;
- device, fastest first (`header_mode`):
  `split`: cuda.cu is cut into a torch-free device part (nvcc, ~0.7 s) and a host part
  appended to main.cpp (g++ with the PCH); see cusplit.py;
  `lite`: cuda.cu is compiled against `kz_torch_lite.h` instead of `<torch/types.h>` /
  `<torch/extension.h>` (the Tensor class, factory ops, the `torch::` names and dtype
  constants: a subset of the same declarations);
  `full`: torch's own files. A mode that fails to compile or link falls back to the next
  (an object whose source and flags did not change is kept), so a source that needs more
  than a mode offers costs time, never correctness;
- link: with `ld.lld` (else `ld.gold`) when installed, else (or if that fails) the default.

`run_modes` is that sequence for any ninja runner: torch's (`accelerated`) or the
torch-free one of ninja_template.py (split_symbols.py checks a split build).
This module imports torch only inside `accelerated`.
"""

import contextlib
import hashlib
import os
import re
import shutil
import subprocess
import tempfile

from . import cusplit, split_symbols
from .pch import (  # noqa: F401
    FRONTEND_LIST,
    PCH_NAME,
    SLIM_HEADER,
    SLIM_NAME,
    _deps,
    _pch_flags,
    _read,
    _write,
    _write_frontend_list,
    ensure_pch,
)

LITE_NAME = "kz_torch_lite.h"
_TORCH_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]torch/(types|extension)\.h[>"]\s*$', re.M)
_INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
_FAILED = re.compile(r"^FAILED: (?:\[code=\d+\] )?(.*?)\s*$", re.M)   # ninja 1.11 / 1.12+
_NVCC_ERROR = re.compile(r'^"?[^\s"]*cuda\.cu"?\(\d+\): error: (.*)$', re.M)
# nvcc errors that no header can cure (syntax, type mismatches between the candidate's own
# names): a split build's device part failing only with these fails in every mode.
_HEADER_INDEPENDENT = re.compile(
    r"^(expected an? |expected a \S+$|unrecognized token|missing closing quote|"
    r"a value of type .* cannot be (used to initialize an entity|assigned to an entity) of type|"
    r"expression must be a modifiable lvalue|expression must have (integral|arithmetic|pointer) type)")

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


class _Host:
    """The host compile's header (slim, else torch's) and its PCH flags, per build."""

    def __init__(self, build_dir: str, pch_root: str, report: dict):
        self.ninja = os.path.join(build_dir, "build.ninja")
        nv = _ninja_vars(self.ninja)
        self.cflags, self.cxx = nv.get("cflags"), nv.get("cxx", "c++")
        self.pch_root, self.report, self.flags = pch_root, report, {}
        report["pch_seconds"] = 0.0

    def pch_flags(self, header: str):
        """cflags additions for the PCH of `header` ("" = none), built if need be."""
        if header not in self.flags:
            self.flags[header] = ""
            if self.pch_root and self.cflags is not None:
                try:
                    pch_dir, secs = ensure_pch(self.pch_root, self.cxx, self.cflags, header)
                    self.report["pch_seconds"] = round(self.report["pch_seconds"] + secs, 3)
                    self.flags[header] = f"-I{pch_dir} -include {header} -Winvalid-pch"
                except (OSError, subprocess.CalledProcessError) as exc:
                    self.report["pch_error"] = str(exc)[-500:]
        return self.flags[header]

    def slim_refused(self, texts: list):
        if self.pch_root and self.cflags is not None and not self.pch_flags(SLIM_NAME):
            return f"no precompiled {SLIM_NAME}: {self.report.get('pch_error', '')[-200:]}"
        return self._frontend(texts)

    def _frontend(self, texts: list):
        """Why the slim header must not be used for sources `texts`, or None: their torch
        includes (those SLIM_HEADER replaces aside) pull in a header of torch's frontend,
        which the full PCH holds and GCC would parse from text against the slim one
        (`<torch/torch.h>` is <torch/all.h>). Found with `g++ -M` once per set of includes
        and flag set; the answer is kept next to the slim PCH."""
        flags = self.pch_flags(SLIM_NAME)
        pch_dir = flags.split()[0][2:] if flags else ""
        listed = _read(os.path.join(pch_dir, FRONTEND_LIST)) if pch_dir else None
        names = sorted({name for text in texts for _, name in _INCLUDE.findall(_TORCH_INCLUDE.sub("", text or ""))
                        if name.startswith(("torch/", "ATen/", "c10/", "caffe2/", "pybind11/"))})
        if not listed or not names:
            return None
        path = os.path.join(pch_dir, "includes", hashlib.sha256("\n".join(names).encode()).hexdigest()[:24])
        found = _read(path)
        if found is None:
            with tempfile.TemporaryDirectory() as tmp:
                probe = os.path.join(tmp, "includes.h")
                _write(probe, "".join(f"#include <{n}>\n" for n in names))
                try:
                    hits = sorted(_deps(self.cxx, _pch_flags(self.cflags), probe) & set(listed.splitlines()))
                except (OSError, subprocess.CalledProcessError):
                    return None                   # a missing header fails either way
            found = hits[0] if hits else ""
            with contextlib.suppress(OSError):
                os.makedirs(os.path.dirname(path), exist_ok=True)
                _write(f"{path}.tmp.{os.getpid()}", found)
                os.rename(f"{path}.tmp.{os.getpid()}", path)
        if not found:
            return None
        return f"its includes ({', '.join(names)}) pull in torch's C++ frontend ({found.split('/include/')[-1]})"

    def use(self, header: str) -> bool:
        """Point the host compile at `header`'s PCH; True when its flags changed."""
        if self.cflags is None:
            return False
        flags = self.pch_flags(header)
        cflags = f"{self.cflags} {flags}" if flags else self.cflags
        self.report["pch"] = bool(flags)
        if _ninja_vars(self.ninja).get("cflags") == cflags:
            return False
        _set_ninja_var(self.ninja, "cflags", cflags)
        return True


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)


def _apply(build_dir: str, mode: str, cu: str | None, main: str | None, host: str = "torch",
           slim_file: bool = False) -> None:
    """Write cuda.cu and main.cpp for `mode` (and the host header `host`: "slim" or
    "torch") from their original texts. A file whose text changes loses its object, so a
    retry never links a stale one and reuses one that is still right; `slim_file` writes
    SLIM_HEADER into the build directory (no PCH of it)."""
    texts = {}
    if mode == "split":
        parts = cusplit.split(cu)
        texts["cuda.cu"] = parts.device
        texts["main.cpp"] = f'{parts.host}#line 1 "main.cpp"\n{main}'
    else:
        texts["main.cpp"] = main
        if cu is not None:
            texts["cuda.cu"] = _TORCH_INCLUDE.sub(f'#include "{LITE_NAME}"', cu) if mode == "lite" else cu
    if host == "slim" and texts["main.cpp"] is not None:
        texts["main.cpp"] = _TORCH_INCLUDE.sub(f'#include "{SLIM_NAME}"', texts["main.cpp"])
    for name, obj in (("main.cpp", "main.o"), ("cuda.cu", "cuda.cuda.o")):
        path = os.path.join(build_dir, name)
        if texts.get(name) is not None and _read(path) != texts[name]:
            _remove(os.path.join(build_dir, obj))
            _write(path, texts[name])
    if mode == "lite":
        _write(os.path.join(build_dir, LITE_NAME), LITE_HEADER)
    if slim_file:
        _write(os.path.join(build_dir, SLIM_NAME), SLIM_HEADER)
    else:
        _remove(os.path.join(build_dir, SLIM_NAME))   # -include would take it before the PCH


def _failed_outputs(message: str) -> set:
    """The outputs ninja names as failed in a build error ("FAILED: main.o")."""
    return {out for line in _FAILED.findall(message) for out in line.split()}


def _header_independent(message: str) -> bool:
    """True when the device part's nvcc errors are all of a kind no header can cure."""
    errors = _NVCC_ERROR.findall(message)
    return bool(errors) and all(_HEADER_INDEPENDENT.match(e) for e in errors)


def _fast_link(build_dir: str, report: dict) -> None:
    """Link with ld.lld (else ld.gold) when installed: ~0.1 s instead of ~0.35 s with
    ld.bfd; a link that fails with it runs again as torch wrote it."""
    ld = next((n for n in ("lld", "gold") if shutil.which(f"ld.{n}")), None)
    ninja = os.path.join(build_dir, "build.ninja")
    text = _read(ninja)
    plain = "  command = $cxx $in $ldflags -o $out\n"
    if ld is None or text is None or f"rule link\n{plain}" not in text:
        return
    fast = f"  command = $cxx $in $ldflags -fuse-ld={ld} -o $out 2>/dev/null || $cxx $in $ldflags -o $out\n"
    _write(ninja, text.replace(f"rule link\n{plain}", f"rule link\n{fast}", 1))
    report["linker"] = ld


def run_modes(build_directory: str, pch_root: str, report: dict, run_ninja, check_split):
    """Build the files torch's load_inline layout left in `build_directory` with a PCH and
    the fastest header modes that compile: `run_ninja()` runs the build (RuntimeError on
    failure), `check_split(dir, cu)` vets a split build. Each device mode is tried with the
    slim host header first, unless that already failed (then torch's), and the last one
    with torch's own files; the last attempt's error is raised."""
    _fast_link(build_directory, report)
    host = _Host(build_directory, pch_root, report)
    cu = _read(os.path.join(build_directory, "cuda.cu"))
    main = _read(os.path.join(build_directory, "main.cpp"))
    modes = _modes(cu, report) if main is not None else ["full"]
    refused = "no main.cpp" if main is None else host.slim_refused([main, cu])
    if refused:
        report["slim_skipped"] = refused
    slim = not refused
    i = 0
    while True:
        mode, last = modes[i], i == len(modes) - 1
        header = "slim" if slim and not last else "torch"
        flags_changed = host.use(SLIM_NAME if header == "slim" else PCH_NAME)
        if flags_changed:
            _remove(os.path.join(build_directory, "main.o"))
        _apply(build_directory, mode, cu, main, header, slim_file=header == "slim" and not report.get("pch"))
        report["header_mode"], report["host_header"] = mode, header
        try:
            result = run_ninja()
            if mode == "split":
                check_split(build_directory, cu)
            return result
        except RuntimeError as exc:
            failed = _failed_outputs(str(exc))
            report.setdefault("fallbacks", []).append(mode if header == "torch" else f"{mode}+slim")
            if mode == "split" and failed == {"cuda.cuda.o"} and _header_independent(str(exc)):
                report["fallbacks_skipped"] = "the device part's errors do not depend on headers"
                raise                             # lite and full would fail the same way
            if header == "slim" and "main.o" in failed:
                slim = False                      # the host part needs more: torch's header
                if "cuda.cuda.o" not in failed:
                    continue                      # same mode again; its device object is kept
            if last:
                raise
            i += 1


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
                         lambda: real(build_directory, verbose, error_prefix), split_symbols.check_symbols)

    ce._run_ninja_build = run
    try:
        yield
    finally:
        ce._run_ninja_build = real
