"""Where a fresh run child's fixed costs go on a GPU host (issue 14: mid-size tasks).

Each variant runs in a fresh interpreter, twice, and prints one JSON line of seconds:
import torch, import triton, mapping the cuDNN sub-libraries (kz_worker.preload), the CUDA
context, the first convolution, the first matmul. Variant `mapped` maps the libraries
before CUDA starts (what a prestarted child does); `plain` does not. With `--pycache DIR`
(kz's bytecode cache, src/worker/bytecode.h), variant `pycache` runs as `mapped` with
PYTHONPYCACHEPREFIX=DIR, and every variant with PYTHONDONTWRITEBYTECODE=1, as kz's children.

Usage: PYTHONPATH=python python3 bench/kernelbench/startup_probe.py [--pycache DIR]
"""
import json
import os
import subprocess
import sys

CHILD = r'''
import json, sys, time
t0 = time.monotonic(); marks = {}
def mark(name):
    global t0
    now = time.monotonic(); marks[name] = round(now - t0, 3); t0 = now
import torch; mark("import_torch")
import triton; mark("import_triton")
import kz_worker.run.op; mark("import_kz_run")
if sys.argv[1] in ("mapped", "pycache"):
    from kz_worker.preload import map_gpu_libraries
    marks["mapped"] = len(map_gpu_libraries()); mark("map_libraries")
torch.empty(1, device="cuda"); torch.cuda.synchronize(); mark("cuda_context")
x = torch.randn(8, 16, 64, 64, device="cuda"); w = torch.randn(32, 16, 3, 3, device="cuda")
torch.nn.functional.conv2d(x, w); torch.cuda.synchronize(); mark("first_conv2d")
torch.nn.functional.conv_transpose3d(torch.randn(2, 8, 8, 8, 8, device="cuda"),
                                     torch.randn(8, 4, 3, 3, 3, device="cuda")); torch.cuda.synchronize(); mark("first_convT3d")
a = torch.randn(1024, 1024, device="cuda"); (a @ a).sum().item(); mark("first_matmul")
print(json.dumps({"variant": sys.argv[1], **marks}))
'''

pycache = sys.argv[sys.argv.index("--pycache") + 1] if "--pycache" in sys.argv else None
variants = ("plain", "mapped") + (("pycache",) if pycache else ())
for variant in variants * 2:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPYCACHEPREFIX"}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if variant == "pycache":
        env["PYTHONPYCACHEPREFIX"] = pycache
    out = subprocess.run([sys.executable, "-c", CHILD, variant], capture_output=True, text=True, env=env)
    print(out.stdout.strip() or out.stderr[-800:], flush=True)
