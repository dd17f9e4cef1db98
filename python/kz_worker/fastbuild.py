"""Faster builds of `load_inline` extensions with the same output (docs/compile-farm.md).

Torch's own `load_inline` writes `main.cpp`, `cuda.cu` and `build.ninja`; `accelerated()`
hooks its ninja step and, before ninja runs:

- host: adds a GCC precompiled header of `<torch/extension.h>` to `main.cpp`'s flags,
  built once per exact flag set under `pch_root` (GCC checks a PCH against the flags and
  ignores an unusable one: a mismatch costs time, never correctness; `-Winvalid-pch`
  says so in the log);
- device: compiles `cuda.cu` against `kz_torch_lite.h` instead of `<torch/types.h>` /
  `<torch/extension.h>` (the Tensor class, factory ops, the `torch::` names and dtype
  constants: a subset of the same declarations). Sources that need more fail to compile
  against it and are rebuilt with the original headers (`header_mode: "full"`).
"""

import contextlib
import fcntl
import hashlib
import os
import re
import subprocess
import time

import torch.utils.cpp_extension as ce

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


def ensure_pch(pch_root: str, cxx: str, cflags: str) -> tuple[str, float]:
    """Directory holding a PCH of <torch/extension.h> for exactly these flags (built once,
    under a lock, written to a temp file and renamed). Returns (dir, seconds spent)."""
    flags = re.sub(r"-DTORCH_EXTENSION_NAME=\S+", "", cflags).split()
    key = hashlib.sha256(("\0".join([cxx, ce.torch.__version__] + flags)).encode()).hexdigest()[:24]
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


def _prepare(build_dir: str, pch_root: str, report: dict) -> str | None:
    """Edit the build before ninja runs; returns the original cuda.cu text if it was
    switched to the lite header."""
    ninja = os.path.join(build_dir, "build.ninja")
    nv = _ninja_vars(ninja)
    if pch_root and "cflags" in nv:
        try:
            pch_dir, secs = ensure_pch(pch_root, nv.get("cxx", "c++"), nv["cflags"])
            report["pch_seconds"] = round(secs, 3)
            _set_ninja_var(ninja, "cflags", f'{nv["cflags"]} -I{pch_dir} -include {PCH_NAME} -Winvalid-pch')
            report["pch"] = True
        except (OSError, subprocess.CalledProcessError) as exc:
            report["pch"] = False
            report["pch_error"] = str(exc)[-500:]
    cu = os.path.join(build_dir, "cuda.cu")
    if not os.path.isfile(cu):
        return None
    with open(cu) as f:
        original = f.read()
    lite = _TORCH_INCLUDE.sub(f'#include "{LITE_NAME}"', original)
    if lite == original:
        return None
    with open(os.path.join(build_dir, LITE_NAME), "w") as f:
        f.write(LITE_HEADER)
    with open(cu, "w") as f:
        f.write(lite)
    return original


@contextlib.contextmanager
def accelerated(pch_root: str, report: dict):
    """Within this block, `load_inline` builds use the PCH and the lite header (with the
    fallback described above). `report` receives pch, header_mode and timings."""
    real = ce._run_ninja_build

    def run(build_directory, verbose, error_prefix):
        original = _prepare(build_directory, pch_root, report)
        report["header_mode"] = "lite" if original is not None else "full"
        try:
            return real(build_directory, verbose, error_prefix)
        except RuntimeError:
            if original is None:
                raise
            with open(os.path.join(build_directory, "cuda.cu"), "w") as f:
                f.write(original)
            report["header_mode"] = "full"
            return real(build_directory, verbose, error_prefix)

    ce._run_ninja_build = run
    try:
        yield
    finally:
        ce._run_ninja_build = real
