"""Times one task's reference and candidate with triton.testing.do_bench (median).

Usage: python do_bench_one.py TASK.py CANDIDATE.py REPEATS
Prints one JSON object: {"reference_us": [...], "candidate_us": [...]}.
"""
import importlib.util
import json
import sys

import torch
import triton.testing


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    task, cand, repeats = load(sys.argv[1], "bench_task"), load(sys.argv[2], "bench_cand"), int(sys.argv[3])
    torch.manual_seed(42)
    init = task.get_init_inputs()
    ref = task.Model(*init).cuda()
    new = cand.ModelNew(*init).cuda()
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in task.get_inputs()]
    out = {"reference_us": [], "candidate_us": []}
    for _ in range(repeats):
        for key, model in (("reference_us", ref), ("candidate_us", new)):
            ms = triton.testing.do_bench(lambda: model(*inputs), warmup=100, rep=500, return_mode="median")
            out[key].append(ms * 1000.0)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
