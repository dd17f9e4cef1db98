"""Host-side warm-up of a run child started ahead of its sample (`KZ_PRELOAD=1`).

torch links cuDNN's front library, which opens its engine and operator libraries (hundreds
of MiB) only at the first convolution; mapping them here, before the sample arrives, moves
that cost off the sample's critical path. Only `dlopen`: nothing is initialised on the GPU.
"""

import ctypes
import glob
import os

_FAMILIES = ("libcudnn", "libcublasLt", "libcublas")


def _loaded_library_dirs() -> set:
    """Directories of the GPU libraries this process has already mapped (/proc/self/maps)."""
    dirs = set()
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.rsplit(" ", 1)[-1].strip()
                if os.path.basename(path).startswith(_FAMILIES):
                    dirs.add(os.path.dirname(path))
    except OSError:
        pass
    return dirs


def map_gpu_libraries() -> list:
    """dlopen every cuDNN sub-library beside the cuDNN torch loaded; return their names.
    A library that fails to open is skipped (torch meets the same error later, itself)."""
    opened = []
    for folder in sorted(_loaded_library_dirs()):
        for path in sorted(glob.glob(os.path.join(folder, "libcudnn_*.so*"))):
            try:
                ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
                opened.append(os.path.basename(path))
            except OSError:
                continue
    return opened
