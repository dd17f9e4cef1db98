"""Noisy candidate for tasks/relu.py: floods stdout and stderr, then computes correctly.

At import, and again in the first forward() call, it writes 8 MiB to stdout and
1 MiB to stderr (only the first call, so that timing's many calls stay fast); every
result comes from a correct Triton ReLU kernel. This exercises the supervisor's
pipe draining and bounded output tails (output.stdout_bytes / stderr_bytes count
everything; the tails keep the last 8 KiB, which end with the "... done" lines).
Expected: correct on a GPU (and timed); correct on a CPU host (Triton interpreter).
"""
import sys

import torch
import torch.nn as nn
import triton
import triton.language as tl


def _flood(where: str) -> None:
    # 65536 lines of 128 bytes = 8 MiB to stdout; 8192 lines = 1 MiB to stderr.
    out = "".join(f"{where} stdout {i:08d} ".ljust(127, "x") + "\n" for i in range(65536))
    sys.stdout.write(out + f"cand_prints_megabytes: {where} stdout done\n")
    sys.stdout.flush()
    err = "".join(f"{where} stderr {i:08d} ".ljust(127, "x") + "\n" for i in range(8192))
    sys.stderr.write(err + f"cand_prints_megabytes: {where} stderr done\n")
    sys.stderr.flush()


_flood("import")


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.calls == 0:
            _flood("forward")
        self.calls += 1
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
