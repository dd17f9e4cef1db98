"""Op `build`: compile one extracted `load_inline` call into a directory.

Runs the real `load_inline(**fields, build_directory=build_dir, verbose=False)`.
Result: `{"ok": true, "library": "<build_dir>/<name>.so", "seconds": s, "build": report}`,
or `{"ok": false, "error": {"kind": "compile_error", "message": "<compiler output>"}}`.
With `"accelerate": {"pch_root": DIR}` the build goes through `fastbuild` (precompiled
torch header for main.cpp, lighter headers or a split for cuda.cu, same output), and:

- `report["driver"] == "torch"`: torch's load_inline wrote the files and ran ninja; its
  build.ninja is saved as a template (ninja_template.py) for later builds;
- `report["driver"] == "template"`: a template of this call's key existed, so the same
  files were written and `ninja -v` run without importing torch (~2-3 s less per build).
  The module is not imported after the build (`"import_checked": false`); a failure
  carries torch's own "Error building extension '<name>': <output>" message.

Importing the built module may fail on a host without a GPU; the build still counts
as ok when the library exists and the failure was not a build error.
"""

import copy
import glob
import os
import time

from . import ninja_template
from .protocol import ProtocolError

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


def _template_build(fields: dict, build_dir: str, pch_root: str, template: str, report: dict) -> None:
    """The accelerated build without torch: files from the template, then fastbuild's modes
    with the torch-free ninja runner and symbol check (raises RuntimeError as torch would)."""
    from . import fastbuild, split_symbols
    report.update(driver="template", import_checked=False)
    ninja_template.write_build(build_dir, fields, template)
    prefix = f"Error building extension '{fields['name']}'"
    fastbuild.run_modes(build_dir, pch_root, report, lambda: ninja_template.run_ninja(build_dir, prefix),
                        split_symbols.check_symbols_nm)


def _torch_build(fields: dict, build_dir: str, accelerate, load_inline, report: dict) -> None:
    if load_inline is None:
        from .inline import REAL_LOAD_INLINE as load_inline
    fields, original = copy.deepcopy(fields), fields   # load_inline inserts into the lists
    if not isinstance(accelerate, dict):
        load_inline(**fields, build_directory=build_dir, verbose=False)
        return
    from .fastbuild import accelerated
    pch_root = accelerate.get("pch_root") or ""
    report["driver"] = "torch"

    def save(directory):
        if pch_root:
            ninja_template.save(pch_root, original, directory, report)
    with accelerated(pch_root, report, on_written=save):
        load_inline(**fields, build_directory=build_dir, verbose=False)


def build_op(request: dict, load_inline=None) -> dict:
    """Handle a `build` request and return its result frame (`load_inline` is the
    compiler, torch's unless a test substitutes one; a substitute disables templates)."""
    fields, build_dir = _call_fields(request)
    os.makedirs(build_dir, exist_ok=True)
    start = time.monotonic()
    failure = None
    report = {}
    accelerate = request.get("accelerate")
    pch_root = (accelerate.get("pch_root") or "") if isinstance(accelerate, dict) else ""
    template = ninja_template.load(pch_root, fields) if pch_root and load_inline is None else None
    try:
        if template is not None:
            try:
                _template_build(fields, build_dir, pch_root, template, report)
            except Exception as exc:      # not a compile error: torch's path decides
                if _BUILD_FAILED in str(exc):
                    raise
                report = {"template_error": str(exc)[-300:]}
                _torch_build(fields, build_dir, accelerate, load_inline, report)
        else:
            _torch_build(fields, build_dir, accelerate, load_inline, report)
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
