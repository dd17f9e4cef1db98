"""Op `build_facts`: what kz's C++ build driver (src/compile/build_driver.cc) needs from torch
to build a `load_inline` call without importing it: the build.ninja torch 2.11 writes for
the call's flags (include paths, compile and link flags, CUDA arch flags, the ABI flag),
with the extension name and build directory as placeholders, and the main.cpp / cuda.cu
torch writes for a probe call, so that the driver can check its own rendering of the
load_inline layout (binding boilerplate included) against torch's, byte for byte.

Request: `{"call": {with_cuda, extra_cflags, extra_cuda_cflags, extra_ldflags,
extra_include_paths, "cuda": bool}, "build_dir": DIR}` (a scratch directory).
Result: `{"ok": true, "ninja": template, "probe": {"name", "functions", "main_cpp",
"cuda_cu"}}`; `{"ok": false, "reason": ...}` when torch's file does not fit the template
(C++ then builds the call with torch's own load_inline, op `build`). The driver caches the
answer on disk, keyed by everything that shapes it (src/compile/build_facts.cc).
"""

import os
import re

NAME, DIR = "@KZ_NAME@", "@KZ_DIR@"
PROBE_NAME = "kz_facts_probe"
PROBE_FUNCTIONS = ["kz_probe_fn"]


class _Captured(Exception):
    """Raised from torch's ninja step once the files are written: nothing is compiled."""


def _ninja_dir(build_dir: str) -> str:
    return os.path.abspath(build_dir).replace(" ", "$ ")    # as torch escapes source paths


def make_template(text: str, build_dir: str):
    """(template, name) from a build.ninja torch wrote in `build_dir`, or (None, reason)."""
    m = re.search(r"^default (\S+)\.so$", text, re.M)
    if m is None or "@KZ_" in text:
        return None, "unexpected build.ninja"
    name, ndir = m.group(1), _ninja_dir(build_dir)
    out = re.sub(rf"-DTORCH_EXTENSION_NAME={re.escape(name)}(?=\s)", f"-DTORCH_EXTENSION_NAME={NAME}", text)
    out = re.sub(rf"^(build ){re.escape(name)}(\.so: link )", rf"\g<1>{NAME}\g<2>", out, flags=re.M)
    out = re.sub(rf"^default {re.escape(name)}\.so$", f"default {NAME}.so", out, flags=re.M)
    out = re.sub(rf"^(build \S+: \w+ ){re.escape(ndir)}/", lambda mm: f"{mm.group(1)}{DIR}/", out, flags=re.M)
    rendered = out.replace(NAME, name).replace(DIR, ndir)
    if ndir in out or rendered != text:
        return None, "build.ninja depends on its directory or name elsewhere"
    return out, name


def _read(path: str):
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return None


def build_facts_op(request: dict) -> dict:
    from ..protocol import ProtocolError
    call, build_dir = request.get("call"), request.get("build_dir")
    if not isinstance(call, dict) or not isinstance(build_dir, str):
        raise ProtocolError("build_facts: expected a call object and a build_dir")
    import torch.utils.cpp_extension as ce

    from .inline import REAL_LOAD_INLINE
    fields = {k: call[k] for k in ("with_cuda", "extra_cflags", "extra_cuda_cflags", "extra_ldflags",
                                   "extra_include_paths") if call.get(k) is not None}
    fields.update(name=PROBE_NAME, cpp_sources=[""], functions=list(PROBE_FUNCTIONS),
                  cuda_sources=[""] if call.get("cuda") else None)
    os.makedirs(build_dir, exist_ok=True)
    real = ce._run_ninja_build

    def capture(directory, verbose, error_prefix):
        raise _Captured(directory)
    ce._run_ninja_build = capture
    try:
        REAL_LOAD_INLINE(**fields, build_directory=build_dir, verbose=False)
        return {"type": "result", "ok": False, "reason": "torch did not run ninja"}
    except _Captured:
        pass
    finally:
        ce._run_ninja_build = real
    template, why = make_template(_read(os.path.join(build_dir, "build.ninja")) or "", build_dir)
    if template is None:
        return {"type": "result", "ok": False, "reason": why}
    probe = {"name": PROBE_NAME, "functions": PROBE_FUNCTIONS,
             "main_cpp": _read(os.path.join(build_dir, "main.cpp")), "cuda_cu": _read(os.path.join(build_dir, "cuda.cu"))}
    return {"type": "result", "ok": True, "ninja": template, "probe": probe}
