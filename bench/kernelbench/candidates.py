"""Honest Triton candidates for KernelBench's largest level-1 tasks (bench/kernelbench).

Each entry of KERNELS names a KernelBench level-1 problem by its file name and gives the
kernel family and the per-element (or per-row) expression; `write(out_dir)` writes one
candidate per entry as `<problem file name>` (our own code: fp32, one program per block of
elements or per row, loops over long rows). These are what `run.py` verifies with every
check on, beside KernelBench's own evaluation of the same files.
"""
import os
import sys

ELEMENTWISE = {  # problem file -> (expression of x, constructor signature, body)
    "19_ReLU.py": ("tl.maximum(x, 0.0)", "", ""),
    "20_LeakyReLU.py": ("tl.where(x >= 0, x, x * 0.01)", ", negative_slope: float = 0.01", ""),
    "21_Sigmoid.py": ("1.0 / (1.0 + tl.exp(-x))", "", ""),
    "22_Tanh.py": ("2.0 / (1.0 + tl.exp(-2.0 * x)) - 1.0", "", ""),
    "25_Swish.py": ("x / (1.0 + tl.exp(-x))", "", ""),
    "26_GELU_.py": ("0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))", "", ""),
    "27_SELU_.py": ("1.0507009873554805 * tl.where(x > 0, x, 1.6732632423543772 * (tl.exp(x) - 1.0))", "", ""),
    "28_HardSigmoid.py": ("tl.minimum(tl.maximum(x / 6.0 + 0.5, 0.0), 1.0)", "", ""),
    "29_Softplus.py": ("tl.where(x > 20.0, x, tl.log(1.0 + tl.exp(x)))", "", ""),
    "30_Softsign.py": ("x / (1.0 + tl.abs(x))", "", ""),
    "31_ELU.py": ("tl.where(x > 0, x, 1.0 * (tl.exp(x) - 1.0))", ", alpha: float = 1.0", ""),
    "32_HardTanh.py": ("tl.minimum(tl.maximum(x, -1.0), 1.0)", "", ""),
}

ROWWISE = {  # problem file -> (row statistic kind, output expression of x and the statistics)
    "23_Softmax.py": ("softmax", "tl.exp(x - m) / s"),
    "24_LogSoftmax.py": ("softmax", "x - m - tl.log(s)"),
    "38_L1Norm_.py": ("l1", "x / s"),
    "39_L2Norm_.py": ("l2", "x / s"),
}

HEADER = '''"""Honest Triton kernel for KernelBench level 1 {name} (bench/kernelbench)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl
'''

EW = HEADER + '''

@triton.jit
def _kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, {expr}, mask=mask)


class ModelNew(nn.Module):
    def __init__(self{sig}):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        _kernel[(triton.cdiv(n, 4096),)](x, out, n, BLOCK=4096, num_warps=8)
        return out
'''

STATS = {
    "softmax": '''    m = tl.full((), float("-inf"), tl.float32)
    s = tl.zeros((), tl.float32)
    for start in range(0, n_cols, BLOCK):
        x = tl.load(row + start + cols, mask=start + cols < n_cols, other=float("-inf"))
        m_new = tl.maximum(m, tl.max(x, 0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), 0)
        m = m_new''',
    "l1": '''    m = 0.0
    acc = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n_cols, BLOCK):
        acc += tl.abs(tl.load(row + start + cols, mask=start + cols < n_cols, other=0.0))
    s = tl.sum(acc, 0) / n_cols''',
    "l2": '''    m = 0.0
    acc = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n_cols, BLOCK):
        x = tl.load(row + start + cols, mask=start + cols < n_cols, other=0.0)
        acc += x * x
    s = tl.sqrt(tl.sum(acc, 0))''',
}

ROW = HEADER + '''

@triton.jit
def _kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    base = tl.program_id(0).to(tl.int64) * n_cols
    row, out_row = x_ptr + base, out_ptr + base
    cols = tl.arange(0, BLOCK)
{stats}
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(row + start + cols, mask=mask, other=0.0)
        tl.store(out_row + start + cols, {expr}, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int = 1):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        _kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=4096, num_warps=8)
        return out
'''


def sources() -> dict:
    """{problem file name: candidate source}."""
    out = {}
    for name, (expr, sig, _) in ELEMENTWISE.items():
        out[name] = EW.format(name=name, expr=expr, sig=sig)
    for name, (kind, expr) in ROWWISE.items():
        out[name] = ROW.format(name=name, stats=STATS[kind], expr=expr)
    return out


def write(out_dir: str) -> list:
    """Write every candidate into `out_dir`; return the problem file names."""
    os.makedirs(out_dir, exist_ok=True)
    for name, src in sources().items():
        with open(os.path.join(out_dir, name), "w") as handle:
            handle.write(src)
    return sorted(sources())


if __name__ == "__main__":
    print("\n".join(write(sys.argv[1] if len(sys.argv) > 1 else "candidates")))
