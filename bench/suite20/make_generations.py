"""Writes the generations of the 20-task suite (bench/suite20/suite) as kz bench JSONL.

    python3 bench/suite20/make_generations.py OUT.jsonl [--check]

10 scored samples per task (200), sample-major order (sample 0 of every task, then sample 1,
...) so that a run killed midway has every task partly verified. Every sample is made from
templates below; the mix per task is fixed (RECIPES) and its order shuffled with a seeded
RNG, so the file is the same byte for byte on every run.

Labels (what each sample is meant to be; the expected status on a GPU host / on a CPU host):

| label | what | GPU | CPU |
|---|---|---|---|
| ok, ok2 | correct Triton kernel (two configurations) | correct | correct |
| slow3 | correct Triton kernel launched 3 times per call (extra passes) | correct | correct |
| tiny | correct Triton kernel with tiny blocks | correct | correct |
| cuda | correct CUDA load_inline kernel | correct | not_run |
| wrong_scale | Triton kernel whose result is * 1.001 | incorrect | incorrect |
| wrong_bias | Triton kernel whose result is + 0.01 | incorrect | incorrect |
| cuda_wrong | CUDA kernel whose result is * 1.001 | incorrect | not_run |
| raise | forward raises RuntimeError after the kernel | runtime_error | runtime_error |
| badlaunch | kernel launched without one of its arguments (TypeError) | runtime_error | runtime_error |
| oob | Triton kernel storing 2**40 elements past its output (illegal address; SIGSEGV on the CPU) | runtime_error | runtime_error |
| syntax | Python syntax error | compile_error | compile_error |
| no_model_new | the class is named ModelFast | compile_error | compile_error |
| cuda_cerr | CUDA source that does not compile | compile_error | compile_error |
| torch_fallback | a Triton kernel is defined, but forward computes with PyTorch | rejected | rejected |
| empty | empty code: bad input empty_code, scored incorrect, no verdict | (incorrect) | (incorrect) |
| not_utf8 | code with a byte that is not UTF-8: bad input not_utf8, scored | (incorrect) | (incorrect) |

Besides the 200 scored lines the file has 3 lines that are not scored (bad inputs
unknown_task, duplicate_sample, malformed_line), so kz bench reports total 203, bad_input 5,
and writes 198 verdicts.

OUT.labels.json (beside OUT) maps "L1_1/0" to {"label", "expect_gpu", "expect_cpu"}.
--check: every generated candidate that is meant to parse parses (ast.parse), the syntax
samples do not, and, when torch imports, every task's Model runs on the CPU.
"""
import ast
import json
import pathlib
import random
import sys

HERE = pathlib.Path(__file__).resolve().parent
SUITE = HERE / "suite"
sys.path.insert(0, str(HERE))
from templates import CUDA, TRITON  # noqa: E402  (the code templates)

# ---------------------------------------------------------------------------------------
# Task specifications. kind: ew (elementwise over same-shape inputs), row (one program /
# block per row, output a row or one value per row), mm (matmul), tadd (x + y.T).
# scalars: (name, python type) constructor arguments, kept on self and passed to the kernel.
# ---------------------------------------------------------------------------------------
GELU_TL = "0.5 * {v} * (1.0 + tl.math.erf({v} * 0.7071067811865476))"
NORM_TL = [
    "mean = tl.sum(h, axis=0) / n_cols",
    "c = tl.where(mask, h - mean, 0.0)",
    "var = tl.sum(c * c, axis=0) / n_cols",
    "out = c / tl.sqrt(var + eps)",
]
NORM_CU = [
    "float s = 0.f;",
    "for (int j = threadIdx.x; j < n_cols; j += blockDim.x) s += H(j);",
    "float mean = block_sum(s, sh) / n_cols;",
    "float q = 0.f;",
    "for (int j = threadIdx.x; j < n_cols; j += blockDim.x) { float c = H(j) - mean; q += c * c; }",
    "float inv = 1.0f / sqrtf(block_sum(q, sh) / n_cols + eps);",
    "for (int j = threadIdx.x; j < n_cols; j += blockDim.x) outr[j] = FIX((H(j) - mean) * inv);",
]

TASKS = {
    # ---- level 1 ----
    "L1_1": dict(kind="ew", name="relu", inputs=["x"], body=["out = tl.maximum(x, 0.0)"],
                 cu="float r = fmaxf(x[i], 0.0f);", torch="torch.relu(x)"),
    "L1_2": dict(kind="ew", name="gelu", inputs=["x"], body=["out = " + GELU_TL.format(v="x")],
                 cu="float v = x[i]; float r = 0.5f * v * (1.0f + erff(v * 0.70710678f));",
                 torch="0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))"),
    "L1_3": dict(kind="row", name="softmax", inputs=["x"], other="-float(\"inf\")", out="row",
                 body=["z = x - tl.max(x, axis=0)", "e = tl.exp(z)", "out = e / tl.sum(e, axis=0)"],
                 cu=["float m = -INFINITY;",
                     "for (int j = threadIdx.x; j < n_cols; j += blockDim.x) m = fmaxf(m, xr[j]);",
                     "m = block_max(m, sh);",
                     "float s = 0.f;",
                     "for (int j = threadIdx.x; j < n_cols; j += blockDim.x) s += expf(xr[j] - m);",
                     "float inv = 1.0f / block_sum(s, sh);",
                     "for (int j = threadIdx.x; j < n_cols; j += blockDim.x) outr[j] = FIX(expf(xr[j] - m) * inv);"]),
    "L1_4": dict(kind="row", name="row_sum", inputs=["x"], other="0.0", out="scalar",
                 body=["out = tl.sum(x, axis=0)"],
                 cu=["float s = 0.f;",
                     "for (int j = threadIdx.x; j < n_cols; j += blockDim.x) s += xr[j];",
                     "s = block_sum(s, sh);",
                     "if (threadIdx.x == 0) out[row] = FIX(s);"]),
    "L1_5": dict(kind="ew", name="scale_add", inputs=["x", "y"], scalars=[("alpha", "float")],
                 body=["out = x * alpha + y"], cu="float r = x[i] * alpha + y[i];"),
    "L1_6": dict(kind="row", name="row_normalize", inputs=["x"], other="0.0", out="row",
                 scalars=[("eps", "float")], body=["h = x"] + NORM_TL,
                 cu=["#define H(j) xr[j]"] + NORM_CU + ["#undef H"]),
    "L1_7": dict(kind="mm", name="matmul", relu=False),
    "L1_8": dict(kind="tadd", name="transpose_add"),
    "L1_9": dict(kind="ew", name="sigmoid", inputs=["x"], body=["out = tl.sigmoid(x)"],
                 cu="float r = 1.0f / (1.0f + expf(-x[i]));", torch="torch.sigmoid(x)"),
    "L1_10": dict(kind="ew", name="tanh", inputs=["x"],
                  body=["e = tl.exp(-2.0 * tl.abs(x))", "t = (1.0 - e) / (1.0 + e)",
                        "out = tl.where(x >= 0, t, -t)"],
                  cu="float r = tanhf(x[i]);", torch="torch.tanh(x)"),
    "L1_11": dict(kind="ew", name="clamp", inputs=["x"], scalars=[("lo", "float"), ("hi", "float")],
                  body=["out = tl.minimum(tl.maximum(x, lo), hi)"],
                  cu="float r = fminf(fmaxf(x[i], lo), hi);", torch="torch.clamp(x, self.lo, self.hi)"),
    "L1_12": dict(kind="row", name="row_mean", inputs=["x"], other="0.0", out="scalar",
                  body=["out = tl.sum(x, axis=0) / n_cols"],
                  cu=["float s = 0.f;",
                      "for (int j = threadIdx.x; j < n_cols; j += blockDim.x) s += xr[j];",
                      "s = block_sum(s, sh);",
                      "if (threadIdx.x == 0) out[row] = FIX(s / n_cols);"]),
    # ---- level 2 ----
    "L2_1": dict(kind="mm", name="matmul_relu", relu=True),
    "L2_2": dict(kind="ew", name="add_mul_relu", inputs=["x", "y", "z"],
                 body=["out = tl.maximum((x + y) * z, 0.0)"],
                 cu="float r = fmaxf((x[i] + y[i]) * z[i], 0.0f);", torch="torch.relu((x + y) * z)"),
    "L2_3": dict(kind="row", name="scaled_softmax", inputs=["x"], other="-float(\"inf\")", out="row",
                 scalars=[("scale", "float")],
                 body=["s = x * scale", "z = s - tl.max(s, axis=0)", "e = tl.exp(z)",
                       "out = e / tl.sum(e, axis=0)"],
                 cu=["float m = -INFINITY;",
                     "for (int j = threadIdx.x; j < n_cols; j += blockDim.x) m = fmaxf(m, xr[j] * scale);",
                     "m = block_max(m, sh);",
                     "float s = 0.f;",
                     "for (int j = threadIdx.x; j < n_cols; j += blockDim.x) s += expf(xr[j] * scale - m);",
                     "float inv = 1.0f / block_sum(s, sh);",
                     "for (int j = threadIdx.x; j < n_cols; j += blockDim.x) outr[j] = FIX(expf(xr[j] * scale - m) * inv);"]),
    "L2_4": dict(kind="ew", name="bias_gelu", inputs=["x"], bias=True,
                 body=["h = x + b", "out = " + GELU_TL.format(v="h")],
                 cu="float v = x[i] + bias[i % n_cols]; float r = 0.5f * v * (1.0f + erff(v * 0.70710678f));"),
    "L2_5": dict(kind="row", name="center_square", inputs=["x"], other="0.0", out="row",
                 body=["mean = tl.sum(x, axis=0) / n_cols", "c = x - mean", "out = c * c"],
                 cu=["float s = 0.f;",
                     "for (int j = threadIdx.x; j < n_cols; j += blockDim.x) s += xr[j];",
                     "float mean = block_sum(s, sh) / n_cols;",
                     "for (int j = threadIdx.x; j < n_cols; j += blockDim.x) { float c = xr[j] - mean; outr[j] = FIX(c * c); }"]),
    "L2_6": dict(kind="ew", name="swish_scale", inputs=["x"], scalars=[("scale", "float")],
                 body=["out = x * tl.sigmoid(x) * scale"],
                 cu="float v = x[i]; float r = v / (1.0f + expf(-v)) * scale;",
                 torch="x * torch.sigmoid(x) * self.scale"),
    "L2_7": dict(kind="row", name="residual_normalize", inputs=["x", "y"], other="0.0", out="row",
                 scalars=[("eps", "float")], body=["h = x + y"] + NORM_TL,
                 cu=["#define H(j) (xr[j] + yr[j])"] + NORM_CU + ["#undef H"]),
    "L2_8": dict(kind="row", name="logsumexp_rows", inputs=["x"], other="-float(\"inf\")", out="scalar",
                 body=["m = tl.max(x, axis=0)", "out = m + tl.log(tl.sum(tl.exp(x - m), axis=0))"],
                 cu=["float m = -INFINITY;",
                     "for (int j = threadIdx.x; j < n_cols; j += blockDim.x) m = fmaxf(m, xr[j]);",
                     "m = block_max(m, sh);",
                     "float s = 0.f;",
                     "for (int j = threadIdx.x; j < n_cols; j += blockDim.x) s += expf(xr[j] - m);",
                     "s = block_sum(s, sh);",
                     "if (threadIdx.x == 0) out[row] = FIX(m + logf(s));"]),
}

# The 10 samples of each task (order shuffled per task below). Correct counts on a GPU:
# L1: 10 0 7 5 9 3 6 4 8 2 1 6; L2: 5 9 7 4 8 3 6 2 (on a CPU host the CUDA ones are not_run).
# CUDA: 25 samples, 22 distinct sources (17 correct, 3 of them used twice with the same bytes,
# 3 wrong, 2 that do not compile), at most 2 CUDA samples per task.
RECIPES = {
    "L1_1": ["ok", "ok2", "slow3", "tiny", "cuda", "ok", "ok2", "slow3", "tiny", "cuda"],
    "L1_2": ["wrong_scale", "wrong_bias", "raise", "badlaunch", "syntax", "no_model_new",
             "torch_fallback", "cuda_wrong", "cuda_cerr", "wrong_scale"],
    "L1_3": ["ok", "ok2", "slow3", "ok", "cuda", "ok2", "slow3", "wrong_scale", "raise", "syntax"],
    "L1_4": ["empty", "ok", "ok2", "slow3", "cuda", "ok", "wrong_bias", "badlaunch", "no_model_new", "wrong_scale"],
    "L1_5": ["ok", "ok2", "slow3", "tiny", "cuda", "ok", "ok2", "tiny", "slow3", "wrong_scale"],
    "L1_6": ["ok", "slow3", "cuda", "wrong_scale", "wrong_bias", "raise", "badlaunch", "syntax",
             "no_model_new", "cuda_cerr"],
    "L1_7": ["ok", "ok2", "tiny", "slow3", "cuda", "ok", "wrong_scale", "wrong_bias", "raise", "badlaunch"],
    "L1_8": ["ok", "ok2", "tiny", "cuda", "wrong_scale", "wrong_bias", "raise", "oob", "syntax", "no_model_new"],
    "L1_9": ["ok", "ok2", "slow3", "tiny", "cuda", "ok", "slow3", "ok2", "torch_fallback", "wrong_bias"],
    "L1_10": ["ok", "slow3", "wrong_scale", "wrong_bias", "raise", "badlaunch", "torch_fallback", "cuda_wrong",
              "syntax", "no_model_new"],
    "L1_11": ["tiny", "wrong_scale", "wrong_bias", "raise", "badlaunch", "syntax", "no_model_new",
              "torch_fallback", "wrong_scale", "oob"],
    "L1_12": ["ok", "ok2", "slow3", "cuda", "ok", "ok2", "wrong_scale", "wrong_bias", "raise", "badlaunch"],
    "L2_1": ["ok", "ok2", "tiny", "cuda", "ok", "wrong_scale", "wrong_bias", "raise", "syntax", "no_model_new"],
    "L2_2": ["ok", "ok2", "slow3", "tiny", "cuda", "ok", "ok2", "slow3", "cuda", "torch_fallback"],
    "L2_3": ["ok", "ok2", "slow3", "cuda", "ok", "ok2", "slow3", "wrong_scale", "badlaunch", "raise"],
    "L2_4": ["ok", "ok2", "tiny", "cuda", "wrong_scale", "wrong_bias", "cuda_wrong", "raise", "syntax", "badlaunch"],
    "L2_5": ["ok", "ok2", "slow3", "cuda", "ok", "ok2", "slow3", "cuda", "wrong_bias", "no_model_new"],
    "L2_6": ["ok", "tiny", "cuda", "wrong_scale", "wrong_bias", "raise", "torch_fallback", "not_utf8",
             "badlaunch", "syntax"],
    "L2_7": ["ok", "ok2", "slow3", "cuda", "ok", "slow3", "wrong_scale", "raise", "badlaunch", "no_model_new"],
    "L2_8": ["ok", "cuda", "wrong_scale", "wrong_bias", "raise", "oob", "syntax", "no_model_new",
             "wrong_scale", "raise"],
}

EXPECT = {  # label -> (GPU status, CPU status)
    "ok": ("correct", "correct"), "ok2": ("correct", "correct"), "slow3": ("correct", "correct"),
    "tiny": ("correct", "correct"), "cuda": ("correct", "not_run"),
    "wrong_scale": ("incorrect", "incorrect"), "wrong_bias": ("incorrect", "incorrect"),
    "cuda_wrong": ("incorrect", "not_run"), "raise": ("runtime_error", "runtime_error"),
    "badlaunch": ("runtime_error", "runtime_error"), "oob": ("runtime_error", "runtime_error"),
    "syntax": ("compile_error", "compile_error"),
    "no_model_new": ("compile_error", "compile_error"), "cuda_cerr": ("compile_error", "compile_error"),
    "torch_fallback": ("rejected", "rejected"), "empty": ("bad_input", "bad_input"),
    "not_utf8": ("bad_input", "bad_input"),
}



def candidate(tid, label):
    """(code, backend) of one sample; backend None leaves detection to kz."""
    spec = TASKS[tid]
    if label in ("cuda", "cuda_wrong", "cuda_cerr"):
        return CUDA[spec["kind"]](tid, spec, label), "cuda"
    if label == "empty":
        return "   \n", "triton"
    base = "ok" if label in ("wrong_scale", "wrong_bias", "raise", "badlaunch", "syntax", "no_model_new",
                             "torch_fallback", "not_utf8") else label
    code = TRITON[spec["kind"]](tid, spec, label if label not in ("syntax", "no_model_new", "not_utf8") else base)
    if label == "syntax":  # an unclosed call in forward
        code = code.replace("out = torch.empty_like(", "out = torch.empty_like((", 1) \
            .replace("out = x.new_empty(", "out = x.new_empty((", 1).replace("out = a.new_empty(", "out = a.new_empty((", 1)
    elif label == "no_model_new":
        code = code.replace("class ModelNew(", "class ModelFast(")
    return code, ("triton" if label not in ("syntax",) else None)


NOT_UTF8_MARK = "@@NOT_UTF8@@"


def generate():
    """([(task, sample, code, backend, tokens, label)], extra_lines) in file order."""
    per_task = {}
    for tid, labels in RECIPES.items():
        assert len(labels) == 10, tid
        order = list(labels)
        rng = random.Random("suite20:" + tid)
        if tid not in ("L1_4",):  # L1_4 keeps its empty code at sample 0 (fast_p over sample 0)
            rng.shuffle(order)
        rows = []
        for s, label in enumerate(order):
            code, backend = candidate(tid, label)
            if label == "not_utf8":
                code = "# " + NOT_UTF8_MARK + "\n" + code
            tokens = rng.randrange(300, 4000)
            if (tid, s) in (("L1_9", 3), ("L2_2", 6)):
                tokens = None  # the model did not report tokens for these two
            rows.append((tid, s, code, backend, tokens, label))
        per_task[tid] = rows
    out = []
    for s in range(10):
        for tid in RECIPES:
            out.append(per_task[tid][s])
    return out


def task_field(tid, i):
    if i % 7 == 3:  # some lines use the {"level", "problem"} form
        level, problem = tid[1:].split("_")
        return {"level": int(level), "problem": int(problem)}
    return tid


def write(path):
    rows = generate()
    lines, labels = [], {}
    for i, (tid, s, code, backend, tokens, label) in enumerate(rows):
        obj = {"task": task_field(tid, i), "sample": s, "code": code}
        if tokens is not None:
            obj["output_tokens"] = tokens
        if backend:
            obj["backend"] = backend
        line = json.dumps(obj).encode()
        if label == "not_utf8":
            line = line.replace(NOT_UTF8_MARK.encode(), b"caf\xe9 \xff")
        lines.append(line)
        g, c = EXPECT[label]
        labels[f"{tid}/{s}"] = {"label": label, "expect_gpu": g, "expect_cpu": c}
        if i == 57:  # unscored: a task that is not in the suite
            lines.append(json.dumps({"task": "L3_1", "sample": 0, "code": code, "output_tokens": 100}).encode())
        if i == 101:  # unscored: a second L1_1 sample 0 (the first is kept)
            lines.append(json.dumps({"task": "L1_1", "sample": 0, "code": candidate("L1_1", "wrong_scale")[0],
                                     "output_tokens": 50}).encode())
        if i == 150:  # unscored: a torn JSON line
            lines.append(b'{"task": "L2_1", "sample": 3, "code": "import torch')
    path = pathlib.Path(path)
    path.write_bytes(b"\n".join(lines) + b"\n")
    lpath = path.with_name(path.name.rsplit(".", 1)[0] + ".labels.json")
    lpath.write_text(json.dumps(labels, indent=1, sort_keys=True) + "\n")
    return rows, labels, lpath


def summary(rows):
    by = {}
    for tid, s, code, backend, tokens, label in rows:
        by.setdefault(tid, []).append(label)
    print(f"{'task':6} {'c_gpu':>5} {'c_cpu':>5}  labels (sample order)")
    cuda_sources = set()
    for tid, labels in by.items():
        cg = sum(EXPECT[l][0] == "correct" for l in labels)
        cc = sum(EXPECT[l][1] == "correct" for l in labels)
        print(f"{tid:6} {cg:5} {cc:5}  {' '.join(labels)}")
    for tid, s, code, backend, tokens, label in rows:
        if backend == "cuda":
            cuda_sources.add(code)
    print(f"{len(rows)} scored samples; {len(cuda_sources)} distinct CUDA sources")


def check(rows):
    bad = 0
    for tid, s, code, backend, tokens, label in rows:
        if label in ("empty",):
            continue
        try:
            ast.parse(code)
            parsed = True
        except SyntaxError:
            parsed = False
        if parsed != (label != "syntax"):
            print(f"check: {tid}/{s} ({label}) parses={parsed}")
            bad += 1
    try:
        import torch  # noqa: F401
    except ImportError:
        print("check: torch not importable: tasks not run")
        return bad
    import importlib.util
    for f in sorted(SUITE.glob("level*/*.py")):
        spec = importlib.util.spec_from_file_location("t_" + f.stem, f)
        m = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(m)
        model = m.Model(*m.get_init_inputs())
        out = model(*m.get_inputs())
        mib = sum(t.numel() * t.element_size() for t in m.get_inputs()) / 2**20
        print(f"check: task {f.parent.name}/{f.name}: output {tuple(out.shape)}, inputs {mib:.1f} MiB")
    return bad


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        sys.exit(__doc__)
    rows, labels, lpath = write(args[0])
    summary(rows)
    print(f"wrote {args[0]} and {lpath}")
    if "--check" in sys.argv and check(rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
