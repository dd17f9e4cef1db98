"""`python -m kz_worker.warm_bytecode MARKER`: fills the bytecode cache named by
PYTHONPYCACHEPREFIX for torch, triton, numpy, sympy and kz_worker (whole packages), and for
every other module that importing them and kz_worker's modules pulls in (the standard
library's among them: a child given the prefix no longer reads the bytecode beside any
source), then writes MARKER (atomically) and removes MARKER.lock. Started by kz
(src/worker/bytecode.h) only when torch's own sources have no bytecode beside them; runs no
task or candidate code. Failures leave no marker, so
children simply go on compiling sources in memory."""
import compileall
import importlib
import os
import pkgutil
import sys
import time


def _package_dirs() -> list:
    dirs = []
    for name in ("torch", "triton", "numpy", "sympy", "mpmath", "kz_worker"):
        try:
            module = importlib.import_module(name)
        except Exception:  # noqa: BLE001 - an absent or broken package is skipped
            continue
        dirs.extend(getattr(module, "__path__", []))
    return dirs


def _import_worker_modules() -> None:
    for name in ("torch.utils.cpp_extension", "triton.language"):  # what builds and runs import
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001
            pass
    import kz_worker
    for info in pkgutil.walk_packages(kz_worker.__path__, "kz_worker."):
        if info.name.endswith(("__main__", "warm_bytecode")):
            continue
        try:
            importlib.import_module(info.name)
        except Exception:  # noqa: BLE001
            pass


def main(marker: str) -> int:
    start = time.monotonic()
    try:
        if not sys.pycache_prefix:
            return 2
        dirs = _package_dirs()
        _import_worker_modules()
        workers = min(8, os.cpu_count() or 1)
        for d in dirs:
            compileall.compile_dir(d, quiet=2, workers=workers)
        tmp = f"{marker}.tmp{os.getpid()}"
        with open(tmp, "w") as f:
            f.write(f"{time.monotonic() - start:.1f} s\n")
        os.replace(tmp, marker)
        return 0
    finally:
        try:
            os.unlink(marker + ".lock")
        except OSError:
            pass


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
