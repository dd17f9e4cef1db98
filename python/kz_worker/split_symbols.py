"""The checks that a split build (cusplit.py) left no kernel stub undefined; a failure
raises RuntimeError, which makes fastbuild.run_modes fall back to the next mode.

`check_symbols` loads the library (needs the torch libraries it links: the torch build
path); `check_symbols_nm` reads the objects with nm (the torch-free build path)."""

import os
import subprocess

from . import cusplit


def check_symbols(build_dir: str, cu: str | None = None) -> None:
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
    """Torch-free stand-in for `check_symbols` (RuntimeError -> next mode): a symbol
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
