"""Op `build`: compile one extracted `load_inline` call into a directory.

Runs the real `load_inline(**fields, build_directory=build_dir, verbose=False)`.
Result: `{"ok": true, "library": "<build_dir>/<name>.so", "seconds": s}`, or
`{"ok": false, "error": {"kind": "compile_error", "message": "<compiler output>"}}`.
With `"accelerate": {"pch_root": DIR}` the build goes through `fastbuild.accelerated`
(precompiled torch header for main.cpp, lighter headers for cuda.cu, same output).
Importing the built module may fail on a host without a GPU; the build still counts
as ok when the library exists and the failure was not a build error.
"""

import glob
import os
import time

from . import inline
from .protocol import ProtocolError

MAX_MESSAGE = 256 * 1024
_BUILD_FAILED = "Error building extension"


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
    return {k: call[k] for k in inline.DIGEST_FIELDS if k in call}, build_dir


def build_op(request: dict, load_inline=inline.REAL_LOAD_INLINE) -> dict:
    """Handle a `build` request and return its result frame (`load_inline` is the
    compiler; tests may substitute it)."""
    fields, build_dir = _call_fields(request)
    os.makedirs(build_dir, exist_ok=True)
    start = time.monotonic()
    failure = None
    report = {}
    accelerate = request.get("accelerate")
    try:
        if isinstance(accelerate, dict):
            from .fastbuild import accelerated
            with accelerated(accelerate.get("pch_root") or "", report):
                load_inline(**fields, build_directory=build_dir, verbose=False)
        else:
            load_inline(**fields, build_directory=build_dir, verbose=False)
    except Exception as exc:
        failure = exc
    seconds = round(time.monotonic() - start, 3)
    library = find_library(build_dir, fields["name"])
    if library is None or (failure is not None and _BUILD_FAILED in str(failure)):
        message = str(failure) if failure is not None else "no library was produced"
        return {"type": "result", "ok": False,
                "error": {"kind": "compile_error", "message": message[:MAX_MESSAGE]}}
    return {"type": "result", "ok": True, "library": os.path.abspath(library),
            "seconds": seconds, "build": report}
