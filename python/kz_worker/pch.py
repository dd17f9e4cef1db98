"""Precompiled torch headers for farm builds (fastbuild.py): one GCC PCH per exact host
flag set under a root directory, built once under a lock, and held (shared lock) by every
build that uses it, so that cache eviction (compile::ExtensionCache::Evict) never removes
one under a compile. Torch-free."""

import fcntl
import hashlib
import os
import re
import subprocess
import sys
import time

PCH_NAME = "kz_torch_ext.h"
SLIM_NAME = "kz_torch_host.h"

# <torch/extension.h> is <torch/all.h> (torch's C++ frontend) + <torch/python.h>; this is
# <torch/types.h> (what torch's cuda.cu layout includes) and torch/python.h's binding
# headers (pybind11 with torch's type casters, wrap_pybind_function, THP* wrappers), without
# the frontend: every declaration here is one <torch/extension.h> makes, from the same file.
SLIM_HEADER = """// Written by KernelZero's build farm: <torch/extension.h> without torch's C++ frontend.
#ifndef KZ_TORCH_HOST_H
#define KZ_TORCH_HOST_H
#include <torch/types.h>
#include <torch/csrc/Device.h>
#include <torch/csrc/Dtype.h>
#include <torch/csrc/DynamicTypes.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/python_headers.h>
#include <torch/csrc/utils/pybind.h>
#include <torch/csrc/utils/python_numbers.h>
#include <torch/csrc/utils/python_tuples.h>
#include <iterator>
#include <string>
#include <utility>
#endif
"""
_PCH_TEXT = {PCH_NAME: "#include <torch/extension.h>\n", SLIM_NAME: SLIM_HEADER}
FRONTEND_LIST = "frontend.txt"   # in a slim PCH's directory: headers only the full one has


def _torch_version() -> str:
    """torch.__version__, read from torch/version.py unless torch is already imported."""
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "__version__"):
        return str(torch.__version__)
    from .probe import probe
    return probe()["torch"] or ""


def _pch_flags(cflags: str) -> list:
    return re.sub(r"-DTORCH_EXTENSION_NAME=\S+", "", cflags).split()


def _deps(cxx: str, flags: list, header: str) -> set:
    """Real paths of every file `header` includes (g++ -M, preprocessing only, ~1 s)."""
    out = subprocess.run([cxx, *flags, "-M", "-x", "c++", header], check=True, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True).stdout
    words = out.replace("\\\n", " ").split()
    return {os.path.realpath(w) for w in words[1:] if not w.endswith(":")}


def _write_frontend_list(pch_dir: str, cxx: str, flags: list) -> None:
    """Write FRONTEND_LIST next to a slim PCH: the headers <torch/extension.h> includes and
    the slim header does not. A source including one of them is built against the full PCH
    (against the slim one, GCC would parse that header from text). Best effort."""
    full = os.path.join(pch_dir, "kz_full_closure.h")
    try:
        _write(full, _PCH_TEXT[PCH_NAME])
        only = {p for p in _deps(cxx, flags, full) - _deps(cxx, flags, os.path.join(pch_dir, SLIM_NAME))
                if "/torch/include/" in p}    # torch's own headers (pybind11's too), not <queue>
        tmp = f"{os.path.join(pch_dir, FRONTEND_LIST)}.tmp.{os.getpid()}"
        _write(tmp, "".join(f"{p}\n" for p in sorted(only)))
        os.rename(tmp, os.path.join(pch_dir, FRONTEND_LIST))
    except (OSError, subprocess.CalledProcessError):
        pass


_HELD_LOCKS = {}   # PCH key -> its lock file, held shared until this process exits (ensure_pch)


def ensure_pch(pch_root: str, cxx: str, cflags: str, header: str = PCH_NAME) -> tuple[str, float]:
    """Directory holding a PCH of `header` (PCH_NAME: <torch/extension.h>, SLIM_NAME:
    SLIM_HEADER) for exactly these flags (built once, under an exclusive lock, written to a
    temp file and renamed). Returns (dir, seconds spent).

    The caller holds `<pch_root>/<key>.lock` shared from here until it exits, and touches
    the directory: cache eviction (compile::ExtensionCache::Evict) removes a PCH directory
    only when it can take that lock exclusively, least recently used first."""
    flags = _pch_flags(cflags)
    fields = [cxx, _torch_version()] + flags
    if header != PCH_NAME:                    # (the full PCH keeps the key it always had)
        fields = [header, _PCH_TEXT[header]] + fields
    key = hashlib.sha256(("\0".join(fields)).encode()).hexdigest()[:24]
    pch_dir = os.path.join(pch_root, key)
    gch = os.path.join(pch_dir, header + ".gch")
    failed = os.path.join(pch_dir, header + ".failed")
    os.makedirs(pch_root, exist_ok=True)
    lock = _HELD_LOCKS.get(os.path.join(pch_root, key))
    if lock is None:                          # one open file per key: converting it never
        lock = open(os.path.join(pch_root, key + ".lock"), "a")   # waits on ourselves
        fcntl.flock(lock, fcntl.LOCK_SH)
        _HELD_LOCKS[os.path.join(pch_root, key)] = lock
    if os.path.isfile(gch):
        os.utime(pch_dir)
        return pch_dir, 0.0
    if os.path.isfile(failed):                # the slim header does not compile here
        raise OSError(f"{header} did not compile with these flags: {_read(failed)}")
    start = time.monotonic()
    fcntl.flock(lock, fcntl.LOCK_EX)          # a conversion drops the shared lock first
    try:
        if not os.path.isfile(gch) and not os.path.isfile(failed):
            os.makedirs(pch_dir, exist_ok=True)
            with open(os.path.join(pch_dir, header), "w") as f:
                f.write(_PCH_TEXT[header])
            tmp = f"{gch}.tmp.{os.getpid()}"
            cmd = [cxx, *flags, "-x", "c++-header", os.path.join(pch_dir, header), "-o", tmp]
            done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if done.returncode == 1 and header != PCH_NAME and "error" in done.stdout:
                _write(failed, done.stdout[-2000:])   # a compile error, not a killed compiler
            done.check_returncode()
            if header == SLIM_NAME:
                _write_frontend_list(pch_dir, cxx, flags)
            os.rename(tmp, gch)
    finally:
        fcntl.flock(lock, fcntl.LOCK_SH)
    if os.path.isfile(failed):
        raise OSError(f"{header} did not compile with these flags: {_read(failed)}")
    return pch_dir, time.monotonic() - start


def _read(path: str):
    if not os.path.isfile(path):
        return None
    with open(path) as f:
        return f.read()


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)
