"""Op `build`: compile one extracted `load_inline` call into a directory with torch's own
`load_inline(**fields, build_directory=build_dir, verbose=False)`.

kz's C++ build driver (src/compile/build_driver.cc) builds accelerated calls without this
op; it runs for plain builds (`kz verify --plain-build`, no PCH root) and for calls the
driver does not reproduce (src/compile/build_facts.h).
Result: `{"ok": true, "library": "<build_dir>/<name>.so", "seconds": s, "build": {}}`,
or `{"ok": false, "error": {"kind": "compile_error", "message": "<compiler output>"}}`.

Importing the built module may fail on a host without a GPU; the build still counts
as ok when the library exists and the failure was not a build error.
"""

import copy
import glob
import os
import time

from ..protocol import ProtocolError

MAX_MESSAGE = 256 * 1024
_BUILD_FAILED = "Error building extension"
# inline.DIGEST_FIELDS (not imported from there: inline imports torch).
DIGEST_FIELDS = ("name", "cpp_sources", "cuda_sources", "functions", "extra_cflags",
                 "extra_cuda_cflags", "extra_ldflags", "extra_include_paths", "with_cuda")


def find_library(build_dir: str, name: str):
    """Path of `<name>.so` (else the first `<name>*.so`) in `build_dir`, or None."""
    exact = os.path.join(build_dir, f"{name}.so")
    if os.path.isfile(exact):
        return exact
    matches = sorted(glob.glob(os.path.join(glob.escape(build_dir), f"{glob.escape(name)}*.so")))
    return matches[0] if matches else None


def _call_fields(request: dict) -> tuple[dict, str]:
    call, build_dir = request.get("call"), request.get("build_dir")
    if not isinstance(call, dict) or not isinstance(call.get("name"), str):
        raise ProtocolError("call: expected an object with a name")
    if not isinstance(build_dir, str):
        raise ProtocolError("build_dir: expected a string")
    return {k: call[k] for k in DIGEST_FIELDS if k in call}, build_dir


def build_op(request: dict, load_inline=None) -> dict:
    """Handle a `build` request and return its result frame (`load_inline` is the
    compiler, torch's unless a test substitutes one)."""
    fields, build_dir = _call_fields(request)
    os.makedirs(build_dir, exist_ok=True)
    if load_inline is None:
        from .inline import REAL_LOAD_INLINE as load_inline
    start = time.monotonic()
    failure = None
    try:
        load_inline(**copy.deepcopy(fields), build_directory=build_dir, verbose=False)   # it inserts into lists
    except Exception as exc:
        failure = exc
    seconds = round(time.monotonic() - start, 3)
    library = find_library(build_dir, fields["name"])
    if library is None or (failure is not None and _BUILD_FAILED in str(failure)):
        message = str(failure) if failure is not None else "no library was produced"
        return {"type": "result", "ok": False,
                "error": {"kind": "compile_error", "message": message[:MAX_MESSAGE]}}
    return {"type": "result", "ok": True, "library": os.path.abspath(library),
            "seconds": seconds, "build": {}}
