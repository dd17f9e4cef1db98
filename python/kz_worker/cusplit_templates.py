"""Kernel templates across the split of cusplit.py.

nvcc gives the host stub of every kernel-template instantiation internal linkage (even
an explicit instantiation: `nm` shows `t _Z1kILi16EEvPf`), so the host part cannot call
`k<16>`'s stub as it calls a plain kernel's. Instead, for each instantiation the host
part launches, the device part gets a plain launcher with external linkage,

    void kz_tl_0(KzLaunch kz_l, const float* a, int n) { k<16><<<kz_l.g, kz_l.b, kz_l.s, kz_l.st>>>(a, n); }

whose parameter list is the template's with its parameters substituted, and the host
launch `k<16><<<g, b>>>(x, n)` becomes `kz_tl_0(KzLaunch(g, b), x, n)`: the same
conversions of the arguments to the kernel's parameter types, the same launch.
Template arguments must be literals, builtin types or the source's top-level constants;
anything else (`k<scalar_t>` inside AT_DISPATCH, deduced arguments) raises Unsplittable.
"""

import re
from dataclasses import dataclass

LAUNCH_STRUCT = """struct KzLaunch {  // a launch configuration: grid, block, shared bytes, stream
  dim3 g, b; size_t s; cudaStream_t st;
  KzLaunch(dim3 g_, dim3 b_, size_t s_ = 0, cudaStream_t st_ = 0) : g(g_), b(b_), s(s_), st(st_) {}
};
"""

_BUILTIN = {"int", "unsigned", "long", "short", "char", "bool", "float", "double", "signed",
            "true", "false", "half", "__half", "__nv_bfloat16", "nv_bfloat16", "size_t",
            "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t",
            "uint64_t", "float2", "float4", "int2", "int4", "const"}


class Unsplittable(Exception):
    """Raised through cusplit.Unsplittable (cusplit re-exports the same class)."""


@dataclass
class KernelTemplate:
    tparams: list   # [(name, default text or None)]
    params: str     # the parameter list text, without parentheses


def _split_top(text: str) -> list:
    """`text` split at commas outside (), <>, [] and {}."""
    parts, depth, cur = [], 0, []
    for c in text:
        if c in "(<[{":
            depth += 1
        elif c in ")>]}":
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(cur)); cur = []
        else:
            cur.append(c)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def _balanced(text: str, start: int, open_c: str, close_c: str) -> int:
    """Index just past the bracket that closes text[start] (== open_c)."""
    depth = 0
    for i in range(start, len(text)):
        depth += (text[i] == open_c) - (text[i] == close_c)
        if depth == 0:
            return i + 1
    raise Unsplittable("unbalanced brackets in a kernel template")


def parse(header: str, name: str) -> KernelTemplate:
    """The template and parameter lists of `template <...> __global__ void name(...)`."""
    t = re.search(r"template\s*<", header)
    t_end = _balanced(header, t.end() - 1, "<", ">")
    tparams = []
    for p in _split_top(header[t.end():t_end - 1]):
        decl, _, default = p.partition("=")
        ident = re.search(r"(\w+)\s*$", decl.strip())
        if not ident:
            raise Unsplittable(f"kernel template {name}: unnamed template parameter")
        tparams.append((ident.group(1), default.strip() or None))
    m = re.search(rf"\b{re.escape(name)}\s*\(", header[t_end:])
    open_at = t_end + m.end() - 1
    params = header[open_at + 1:_balanced(header, open_at, "(", ")") - 1]
    return KernelTemplate(tparams, params)


def _arguments(name: str, args: str, tmpl: KernelTemplate, constants: set) -> dict:
    values = _split_top(args[1:-1])
    if len(values) > len(tmpl.tparams):
        raise Unsplittable(f"kernel template {name}{args}: too many template arguments")
    words = set(re.findall(r"[A-Za-z_]\w*", args)) - _BUILTIN - constants
    if words:
        raise Unsplittable(f"kernel template {name}{args} depends on host names: "
                           + ", ".join(sorted(words)))
    out = {}
    for i, (tname, default) in enumerate(tmpl.tparams):
        if i < len(values):
            out[tname] = values[i]
        elif default is not None:
            out[tname] = default
        else:
            raise Unsplittable(f"kernel template {name}{args}: missing template arguments")
    return out


def _launcher(index: int, name: str, args: str, tmpl: KernelTemplate, constants: set) -> tuple:
    """(device definition, host prototype) of launcher kz_tl_<index>."""
    values = _arguments(name, args, tmpl, constants)
    params = tmpl.params
    for tname, value in values.items():
        params = re.sub(rf"\b{re.escape(tname)}\b", lambda _, value=value: f"({value})" if value[0].isdigit() else value, params)
    names = []
    for p in _split_top(params):
        m = re.search(r"(\w+)\s*(\[[^\]]*\])*\s*$", p)
        if "=" in p or not m or m.group(1) in _BUILTIN:
            raise Unsplittable(f"kernel template {name}: unnamed or defaulted parameter {p!r}")
        names.append(m.group(1))
    head = f"void kz_tl_{index}(KzLaunch kz_l{', ' + params if params.strip() else ''})"
    body = f"{{ {name}{args}<<<kz_l.g, kz_l.b, kz_l.s, kz_l.st>>>({', '.join(names)}); }}"
    return f"{head} {body}\n", f"{head};\n"


def rewrite(host_text: str, host_code: str, templates: dict, constants: set) -> tuple:
    """Rewrite the host part's launches of kernel templates into launcher calls.
    Returns (new host text, device definitions, {kernel name: host prototypes})."""
    launches = list(re.finditer(r"([\w:]+)\s*(<[^;{}]*?>)?\s*<<<", host_code))
    chosen, defs, protos, out, pos = {}, [], {}, [], 0
    for m in launches:
        name, args = m.group(1), m.group(2)
        short = name.split("::")[-1]
        if short not in templates:
            continue
        if not args:
            raise Unsplittable(f"kernel template {name} launched with deduced arguments")
        key = (name, re.sub(r"\s+", "", args))
        if key not in chosen:
            chosen[key] = len(chosen)
            d, h = _launcher(chosen[key], name, args, templates[short], constants)
            defs.append(d)
            protos.setdefault(short, []).append(h)
        close = host_code.find(">>>", m.end())
        paren = host_code.find("(", close + 3)
        if close < 0 or paren < 0 or host_code[close + 3:paren].strip():
            raise Unsplittable(f"unrecognised launch of kernel template {name}")
        empty = host_code[paren + 1:].lstrip().startswith(")")
        out.append(host_text[pos:m.start()])
        out.append(f"kz_tl_{chosen[key]}(KzLaunch({host_text[m.end():close]}){'' if empty else ', '}")
        pos = paren + 1
    out.append(host_text[pos:])
    return "".join(out), "".join(defs), protos
