"""KernelBench's path for one sample: import the candidate, whose module-level
`load_inline` compiles it (torch's own ninja build, no cache shared with other samples).
Usage: python baseline_build.py CANDIDATE.py   (TORCH_EXTENSIONS_DIR set by the caller)
Prints {"seconds": s} on success; exits 1 on failure."""
import importlib.util
import json
import sys
import time

start = time.monotonic()
spec = importlib.util.spec_from_file_location("bench_candidate", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
print(json.dumps({"seconds": time.monotonic() - start}))
