"""Build a `load_inline` call without importing torch, from a saved build.ninja template.

A torch build (op `build` with `accelerate`) saves the build.ninja torch wrote, with the
extension name and the build directory replaced by placeholders, as
`<pch_root>/../ninja/<key>.json`. The key covers everything else that shapes the file:
torch's version and install directory, Python's version and include directory, the
environment variables torch 2.11's `cpp_extension` reads for flags and paths (`ENV`),
where nvcc is when CUDA_HOME / CUDA_PATH are unset, and the call's with_cuda, extra flags,
include paths and which sources exist. A later build of the same key writes main.cpp and
cuda.cu by torch 2.11's `load_inline` layout (`sources`), build.ninja from the template,
and runs `ninja -v` as `_run_ninja_build` does (same command, environment, MAX_JOBS and
error text). Nothing here imports torch.

A template is saved only when this module's rendering of all three files equals what torch
wrote for that call, byte for byte; a call this module does not reproduce (see
`NotReproduced`) neither saves nor uses one.
"""

import hashlib
import importlib.util
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import sysconfig

from .probe import probe

FORMAT = 1
LAYOUT = "torch-2.11-load_inline"   # the main.cpp / cuda.cu layout `sources` reproduces
NAME, DIR = "@KZ_NAME@", "@KZ_DIR@"
# Environment variables torch 2.11's cpp_extension reads that can change build.ninja
# (MAX_JOBS only changes ninja's command line; TORCH_EXTENSIONS_DIR only the default dir).
ENV = ("CXX", "CC", "CUDA_HOME", "CUDA_PATH", "PYTORCH_NVCC", "TORCH_CUDA_ARCH_LIST",
       "CUDA_INC_PATH", "CUDNN_HOME", "CUDNN_PATH", "TORCH_EXTENSION_SKIP_NVCC_GEN_DEPENDENCIES",
       "TORCH_DONT_CHECK_COMPILER_ABI", "ROCM_HOME", "ROCM_PATH", "PYTORCH_ROCM_ARCH",
       "TORCH_XPU_ARCH_LIST", "WINDOWS_CUDA_HOME")
_PLACEHOLDER = re.compile(r"@KZ_(NAME|DIR)@")


class NotReproduced(Exception):
    """The call (or the environment) is one this module does not reproduce: use torch."""


def _strings(value, what: str, allow_none=True, allow_str=True) -> list:
    if value is None and allow_none:
        return []
    if isinstance(value, str) and allow_str:   # (torch iterates a string of flags by character)
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise NotReproduced(f"{what}: expected a string or a list of strings")


def _functions(value):
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list) and all(isinstance(f, str) for f in value):
        return {f: f for f in value}
    if isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
        return value
    raise NotReproduced("functions: expected a string, a list of strings or an object")


def sources(fields: dict) -> tuple:
    """(main.cpp, cuda.cu or None) exactly as torch 2.11's `load_inline` writes them with
    its defaults (with_pytorch_error_handling, implicit headers)."""
    cpp = ["#include <torch/extension.h>"] + _strings(fields.get("cpp_sources"), "cpp_sources", False)
    functions = _functions(fields.get("functions"))
    if functions is not None:
        cpp.append("PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {")
        cpp += [f'm.def("{f}", torch::wrap_pybind_function({f}), "{doc}");' for f, doc in functions.items()]
        cpp.append("}")
    cuda = _strings(fields.get("cuda_sources") or None, "cuda_sources")
    if not cuda:
        return "\n".join(cpp), None
    cuda = ["#include <torch/types.h>", "#include <cuda.h>", "#include <cuda_runtime.h>"] + cuda
    return "\n".join(cpp), "\n".join(cuda)


def _torch_dir():
    spec = importlib.util.find_spec("torch")
    return os.path.dirname(spec.origin) if spec is not None and spec.origin else None


def key_inputs(fields: dict) -> dict:
    """Everything but the name and build directory that shapes build.ninja."""
    with_cuda = fields.get("with_cuda")
    if with_cuda not in (None, True, False):
        raise NotReproduced("with_cuda: expected null, true or false")
    has_cu = bool(_strings(fields.get("cuda_sources") or None, "cuda_sources"))
    with_cuda = has_cu if with_cuda is None else with_cuda
    env = {k: os.environ.get(k) for k in ENV}
    if with_cuda and env["TORCH_CUDA_ARCH_LIST"] in (None, "", "native"):
        raise NotReproduced("TORCH_CUDA_ARCH_LIST unset: torch picks archs from the visible GPUs")
    nvcc = None if env["CUDA_HOME"] or env["CUDA_PATH"] else shutil.which("nvcc")
    home = env["CUDA_HOME"] or env["CUDA_PATH"] or (os.path.dirname(os.path.dirname(nvcc)) if nvcc
                                                     else "/usr/local/cuda")
    flags = {k: _strings(fields.get(k) or None, k, allow_str=False)
             for k in ("extra_cflags", "extra_cuda_cflags", "extra_ldflags")}
    includes = [os.path.abspath(p.strip()) for p in
                _strings(fields.get("extra_include_paths") or None, "extra_include_paths", allow_str=False)]
    return {"format": FORMAT, "layout": LAYOUT, "torch": probe()["torch"], "torch_dir": _torch_dir(),
            "python": platform.python_version(), "platform": sys.platform,
            "python_include": sysconfig.get_path("include", scheme="posix_prefix"),
            "env": env, "nvcc_on_path": nvcc,
            "cuda_dirs": [os.path.exists(os.path.join(home, d)) for d in ("", "lib64", "lib")],
            "with_cuda": with_cuda, "cuda_source": has_cu, **flags, "extra_include_paths": includes}


def key(inputs: dict) -> str:
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:32]


def template_path(pch_root: str, inputs: dict) -> str:
    """`<pch_root>/../ninja/<key>.json` (next to the PCH directory)."""
    return os.path.join(os.path.dirname(os.path.normpath(pch_root)), "ninja", key(inputs) + ".json")


def _ninja_dir(build_dir: str) -> str:
    return os.path.abspath(build_dir).replace(" ", "$ ")    # as torch escapes source paths


def render(template: str, name: str, build_dir: str) -> str:
    """The build.ninja of extension `name` in `build_dir`, from a template."""
    values = {"NAME": name, "DIR": _ninja_dir(build_dir)}
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


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
    if ndir in out or render(out, name, build_dir) != text:
        return None, "build.ninja depends on its directory or name elsewhere"
    return out, name


def _write_atomic(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def save(pch_root: str, fields: dict, build_dir: str, report: dict) -> None:
    """After torch wrote main.cpp, cuda.cu and build.ninja in `build_dir` (before any
    rewrite), save the template if `sources` and `render` reproduce all three exactly.
    `report["template"]` says what happened; never raises for a call it cannot use."""
    try:
        inputs = key_inputs(fields)
        files = [_read(os.path.join(build_dir, n)) for n in ("main.cpp", "cuda.cu", "build.ninja")]
        if tuple(files[:2]) != sources(fields):
            report["template"] = "not saved: main.cpp / cuda.cu differ from the known layout"
            return
        template, name = make_template(files[2] or "", build_dir)
        if template is None:
            report["template"] = f"not saved: {name}"
            return
        path = template_path(pch_root, inputs)
        doc = json.dumps({"inputs": inputs, "ninja": template}, sort_keys=True)
        if _read(path) != doc:
            _write_atomic(path, doc)
        report["template"] = "saved"
    except (NotReproduced, OSError) as exc:
        report["template"] = f"not saved: {exc}"


def _read(path: str):
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return None


def load(pch_root: str, fields: dict):
    """The template for this call's key, or None (none saved, unreadable, key mismatch,
    or a call not reproduced)."""
    if not pch_root or shutil.which("ninja") is None:
        return None
    try:
        inputs = key_inputs(fields)
        doc = json.loads(_read(template_path(pch_root, inputs)) or "null")
    except (NotReproduced, OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("inputs") != inputs or not isinstance(doc.get("ninja"), str):
        return None
    return doc["ninja"]


def write_build(build_dir: str, fields: dict, template: str) -> None:
    """Write main.cpp, cuda.cu (if any) and build.ninja as load_inline would."""
    main, cu = sources(fields)
    files = {"main.cpp": main, "cuda.cu": cu, "build.ninja": render(template, fields["name"], build_dir)}
    for name, text in files.items():
        if text is not None:
            with open(os.path.join(build_dir, name), "w") as f:
                f.write(text)


def run_ninja(build_dir: str, error_prefix: str) -> None:
    """torch 2.11's `_run_ninja_build` (non-verbose, POSIX): `ninja -v [-j MAX_JOBS]` in
    `build_dir`; a failure raises RuntimeError("<prefix>: <output>")."""
    command = ["ninja", "-v"]
    max_jobs = os.environ.get("MAX_JOBS")
    if max_jobs is not None and max_jobs.isdigit():
        command += ["-j", str(int(max_jobs))]
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=build_dir,
                       check=True, env=os.environ.copy())
    except subprocess.CalledProcessError as e:
        message = error_prefix
        if e.output:
            message += f": {e.output.decode()}"
        raise RuntimeError(message) from e
