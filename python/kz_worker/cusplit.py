"""Split a `load_inline` cuda.cu into a torch-free device part and a host part.

Almost all of a cold `cuda.cu` compile is nvcc parsing torch's headers three times
(docs/compile-farm.md). Kernels themselves need no torch: they take raw pointers. So the
source is cut at its top-level declarations into

- the **device part** (compiled by nvcc, without any torch header): kernels, `__device__`
  code, torch-free host functions, types, macros and constants;
- the **host part** (appended to `main.cpp`, compiled by g++ with the precompiled torch
  header): everything that names torch, plus prototypes of the kernels and functions the
  device part defines. Kernel launches `k<<<g, b, s, st>>>(args)` become what nvcc's own
  front end emits: `(__cudaPushCallConfiguration(g, b, s, st)) ? (void)0 : k(args)`,
  a call of the kernel's host stub, which the device part's object defines.

Both parts carry `#line N "cuda.cu"` directives, so diagnostics keep cuda.cu's numbering.
Kernel templates are split too when every launch names its template arguments with
literals, builtin types or the source's own top-level constants (`k<16><<<...>>>`): the
device part then takes the address of each such instantiation, so its stub is emitted
there, and the host part declares the template. Arguments that depend on the host code
(`k<scalar_t>` inside AT_DISPATCH) or are deduced cannot be placed and refuse the split.

The split is conservative: whatever it cannot place safely (such kernel templates, torch types
in device code, mutable non-static globals, out-of-class member definitions, static or
inline functions with static locals, which would be duplicated) makes `split()` return a
reason instead, and the caller builds the whole file the usual way. A split that then
fails to compile or link also falls back, so a wrong guess costs time, never behaviour.
"""

import re
from dataclasses import dataclass, field

from . import cusplit_templates

DEVICE_PRELUDE = """// Written by KernelZero's build farm: the torch-free device part of cuda.cu.
// Standard headers that torch's headers would otherwise have pulled in.
#include <cstddef>
#include <cstdint>
#include <cfloat>
#include <climits>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>
#include <cuda_runtime.h>
"""
# torch's headers also pull in cuda_fp16.h and cuda_bf16.h (c10's Half and BFloat16): ~0.2 s
# of nvcc's ~0.85 s for a small device part, so they are included only for a source that
# names something of theirs (a type or intrinsic mentioning half/bfloat16, `__h*`, `h2*`,
# `hexp`-style math). A source that uses them without such a name fails to compile split
# and is built by the next header mode: time, not behaviour.
HALF_PRELUDE = "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"
_HALF_NAMES = re.compile(r"half|bfloat|bf16|fp16|\b__nv_\w|\b__h\w|\bh2\w|"
                         r"\bh(exp|log|sqrt|rsqrt|rcp|sin|cos|tanh|ceil|floor|trunc|rint)\w*\s*\(")

HOST_PRELUDE = """// Written by KernelZero's build farm: the host part of cuda.cu (kernels are
// defined in cuda.cu's device part; launches call their host stubs, as nvcc emits them).
#include <cuda_runtime.h>
extern "C" unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim = 1,
                                                size_t sharedMem = 0, struct CUstream_st* stream = 0);
""" + cusplit_templates.LAUNCH_STRUCT

_TORCH_INCLUDE = re.compile(r'#\s*include\s*[<"](torch|ATen|c10|pybind11|caffe2)/')
_TORCH_WORDS = re.compile(r"\b(torch|c10|Tensor|pybind11|(TORCH|AT|C10|PYBIND11)_\w+)\b|\b(at|py)::")
_DEVICE_ONLY = re.compile(r"\b(__device__|__constant__|__shared__|__managed__)\b")
_KERNEL_ATTRS = re.compile(r"\b__global__\b|\b(__launch_bounds__|__maxnreg__|__cluster_dims__)\s*\(")
_TYPE_DECL = re.compile(r"^\s*(template\s*<.*>\s*)?(typedef|using|struct|class|union|enum|static_assert)\b", re.S)
_CONTAINER = re.compile(r"^\s*((inline\s+)?namespace\b[\w\s:]*|extern\s*\"C(\+\+)?\")\s*$")


# The source has a construct the split does not place safely (the message says which).
Unsplittable = cusplit_templates.Unsplittable


@dataclass
class Item:
    start: int
    end: int
    text: str            # the item's source text
    code: str            # the same with comments and literals blanked (same length)
    body: int = -1       # offset in `text` of the depth-0 '{', or -1
    inner: list = field(default_factory=list)  # items of a namespace / extern "C" block


def _blank(src: str) -> str:
    """`src` with comments, string and character literals replaced by spaces (newlines kept)."""
    out, i, n = list(src), 0, len(src)
    def wipe(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            wipe(i, j); i = j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            wipe(i, j); i = j
        elif c == 'R' and src.startswith('R"', i) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', src[i:])
            if not m:
                i += 1; continue
            j = src.find(")" + m.group(1) + '"', i)
            j = n if j < 0 else j + len(m.group(1)) + 2
            wipe(i + 1, j); i = j
        elif c == '"' or (c == "'" and not (i and (src[i - 1].isalnum() or src[i - 1] == "_"))):
            j = i + 1
            while j < n and src[j] != c and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            wipe(i + 1, min(j, n)); i = j + 1
        else:
            i += 1
    return "".join(out)


def _items(src: str, code: str, start: int, end: int) -> list:
    """Top-level items of src[start:end]: preprocessor lines, declarations ending in ';',
    and definitions ending at their closing brace; namespace blocks are parsed inside."""
    items, i, begin, depth, brace = [], start, None, 0, -1
    while i < end:
        c = code[i]
        if begin is None:
            if c.isspace():
                i += 1; continue
            if c == "#":
                j = i
                while True:
                    j = code.find("\n", j)
                    if j < 0 or j >= end:
                        j = end; break
                    if code[j - 1] != "\\":
                        break
                    j += 1
                items.append(Item(i, j, src[i:j], code[i:j])); i = j
                continue
            begin, brace = i, -1
        if c == "{":
            if depth == 0 and brace < 0:
                brace = i
            depth += 1
        elif c == "}":
            depth -= 1
            if depth < 0:
                raise Unsplittable("unbalanced braces")
            if depth == 0 and not _continues_to_semicolon(code[begin:brace]):
                items.append(_item(src, code, begin, i + 1, brace)); begin = None
        elif c == ";" and depth == 0:
            items.append(_item(src, code, begin, i + 1, brace)); begin = None
        i += 1
    if begin is not None and code[begin:end].strip():
        raise Unsplittable("source ends inside a declaration")
    return items


def _continues_to_semicolon(header: str) -> bool:
    """After the closing brace of `header {...}`, does the declaration go on to a ';'?
    (classes, enums, initialisers — not functions or namespaces)."""
    bare = re.sub(r"\([^()]*\)", "()", header)                 # parameter lists out
    bare = re.sub(r"^\s*template\s*<.*?>(?=\s*(struct|class|union|__|[A-Za-z_]))", "", bare, flags=re.S)
    return bool(re.search(r"\b(struct|class|union|enum)\b", bare) or re.search(r"=\s*$", bare)) \
        and not _CONTAINER.match(header)


def _item(src, code, begin, end, brace) -> Item:
    item = Item(begin, end, src[begin:end], code[begin:end], brace - begin if brace >= 0 else -1)
    if brace >= 0 and _CONTAINER.match(code[begin:brace]):
        item.inner = _items(src, code, brace + 1, end - 1)
    return item


@dataclass
class Split:
    device: str
    host: str
    kernels: list


def _launch_rewrite(text: str, code: str) -> str:
    """`k<<<cfg>>>(` -> `(__cudaPushCallConfiguration(cfg)) ? (void)0 : k(` (nvcc's form)."""
    out, pos = [], 0
    for m in re.finditer(r"<<<", code):
        if m.start() < pos:
            continue
        close = code.find(">>>", m.end())
        if close < 0:
            raise Unsplittable("unterminated <<< >>> launch")
        k = m.start()
        while k > 0 and code[k - 1].isspace():
            k -= 1
        if k > 0 and code[k - 1] == ">":                 # template arguments k<T>
            depth = 0
            while k > 0:
                k -= 1
                depth += {">": 1, "<": -1}.get(code[k], 0)
                if depth == 0:
                    break
        while k > 0 and (code[k - 1].isalnum() or code[k - 1] in "_:"):
            k -= 1
        out.append(text[pos:k])
        out.append(f"(__cudaPushCallConfiguration({text[m.end():close]})) ? (void)0 : ")
        out.append(text[k:m.start()])
        pos = close + 3
    out.append(text[pos:])
    return "".join(out)


def _prototype(item: Item) -> str:
    """A host declaration of a kernel or function defined in the device part."""
    header = item.text[:item.body] if item.body >= 0 else item.text.rstrip().rstrip(";")
    header = re.sub(r"\b__global__\b", "", header)
    for attr in ("__launch_bounds__", "__maxnreg__", "__cluster_dims__"):
        while (m := re.search(rf"\b{attr}\s*\(", header)):
            depth, j = 1, m.end()
            while j < len(header) and depth:
                depth += {"(": 1, ")": -1}.get(header[j], 0); j += 1
            header = header[:m.start()] + header[j:]
    return re.sub(r"[ \t]{2,}", " ", header.strip()) + ";"


def _declarator_name(header: str) -> str:
    """The (possibly qualified) name declared by a function header `... name(params)`."""
    m = re.search(r"([\w:~]+)\s*\((?:[^()]|\([^()]*\))*\)\s*(const\b|noexcept\b|->[^{]*)?\s*$", header.strip())
    return m.group(1) if m else ""


def _place(item: Item, kernels: list, templates: dict) -> tuple:
    """(device text, host text) for one top-level item; raises Unsplittable."""
    text, code = item.text, item.code
    if code.lstrip().startswith("#"):
        return ("", text) if _TORCH_INCLUDE.search(code) else (text, text)
    header = code[:item.body] if item.body >= 0 else code
    torchy = bool(_TORCH_WORDS.search(code))
    if _KERNEL_ATTRS.search(header) and "__global__" in header:
        if torchy:
            raise Unsplittable("kernel uses torch/ATen types")
        name = _declarator_name(header)
        if "::" in name or re.search(r"\bstatic\b", header):
            raise Unsplittable(f"kernel {name} is static or qualified")
        kernels.append(name)
        if re.match(r"\s*template\b", header):     # launched through kz_tl_* launchers
            templates[name] = cusplit_templates.parse(item.text[:item.body] if item.body >= 0 else text, name)
            return text, f"/*KZ_TEMPLATE {name}*/\n"
        return text, _prototype(item)
    if _DEVICE_ONLY.search(header) and "__host__" not in header:
        if torchy:
            raise Unsplittable("device code uses torch/ATen types")
        return text, ""
    if torchy:
        return "", text
    if _TYPE_DECL.match(header) or (item.body < 0 and re.search(r"\b(extern|constexpr)\b", header)):
        return text, text
    if item.body < 0:
        if "(" in header and "=" not in header:          # a function prototype
            return text, text
        if re.match(r"\s*(static\s+)?(const|constexpr)\b", header):
            return text, text
        if re.match(r"\s*static\b", header):
            return "", text                               # host-side mutable state
        raise Unsplittable("mutable global variable with external linkage")
    return _place_function(item, header, code)


def _place_function(item: Item, header: str, code: str) -> tuple:
    name = _declarator_name(header)
    if not name:
        raise Unsplittable("unrecognised top-level definition")
    if "::" in name:
        raise Unsplittable(f"out-of-class definition {name}")
    if re.match(r"\s*template\b", header):
        return item.text, item.text
    if re.search(r"\b(static|inline|constexpr|__forceinline__)\b", header):
        if re.search(r"\bstatic\b", code[item.body:]):
            raise Unsplittable(f"{name} has static locals and would be duplicated")
        return item.text, item.text
    return item.text, _prototype(item)                 # defined once, in the device part


def _constants(code: str) -> set:
    """Names of the source's top-level macros and constexpr/const integral constants."""
    names = set(re.findall(r"^\s*#\s*define\s+(\w+)", code, re.M))
    names |= set(re.findall(r"^\s*(?:static\s+)?(?:constexpr|const)\s+[\w:]+\s+(\w+)\s*=", code, re.M))
    return names


def _emit(items: list, src: str, kernels: list, templates: dict, device: list, host: list) -> None:
    for item in items:
        line = src.count("\n", 0, item.start) + 1
        if item.inner:
            opening = item.text[:item.body + 1]
            device.append(f'#line {line} "cuda.cu"\n{opening}\n'); host.append(f'#line {line} "cuda.cu"\n{opening}\n')
            _emit(item.inner, src, kernels, templates, device, host)
            device.append("}\n"); host.append("}\n")
            continue
        d, h = _place(item, kernels, templates)
        if d:
            device.append(f'#line {line} "cuda.cu"\n{d}\n')
        if h:
            host.append(f'#line {line} "cuda.cu"\n{h}\n')


def split(cuda_cu: str) -> Split:
    """Split the text of cuda.cu (as torch wrote it). Raises Unsplittable with a reason."""
    code = _blank(cuda_cu)
    if "__global__" not in code:
        raise Unsplittable("no __global__ kernel")
    items = _items(cuda_cu, code, 0, len(cuda_cu))
    prelude = DEVICE_PRELUDE + (HALF_PRELUDE if _HALF_NAMES.search(cuda_cu) else "") + cusplit_templates.LAUNCH_STRUCT
    kernels, templates, device, host = [], {}, [prelude], [HOST_PRELUDE]
    _emit(items, cuda_cu, kernels, templates, device, host)
    host_text = "".join(host)
    if templates:
        host_text, launchers, protos = cusplit_templates.rewrite(
            host_text, _blank(host_text), templates, _constants(code))
        device.append("// Launchers of the kernel-template instantiations the host part uses.\n" + launchers)
        for name in templates:
            host_text = host_text.replace(f"/*KZ_TEMPLATE {name}*/\n", "".join(protos.get(name, [])))
    host_text = _launch_rewrite(host_text, _blank(host_text))
    if "<<<" in _blank(host_text):
        raise Unsplittable("a kernel launch could not be rewritten")
    return Split("".join(device), host_text, kernels)


def cusplit_op(request: dict) -> dict:
    """Op `cusplit` (called by kz's C++ build driver, src/compile/build_driver.cc):
    `{"source": <cuda.cu text>}` -> `{"ok": true, "split": {"device", "host", "kernels"}}`,
    or `{"ok": true, "split": null, "reason": why}` when it cannot be split safely."""
    source = request.get("source")
    if not isinstance(source, str):
        from .protocol import ProtocolError
        raise ProtocolError("source: expected a string")
    try:
        parts = split(source)
    except Unsplittable as exc:
        return {"type": "result", "ok": True, "split": None, "reason": str(exc)}
    return {"type": "result", "ok": True,
            "split": {"device": parts.device, "host": parts.host, "kernels": parts.kernels}}
