#!/usr/bin/env python3
"""An RL-like batch for bench/throughput (docs/throughput.md): T teacher tasks
(`kz train teacher`), S samples each, about half correct: even samples are the task's own
verified kernel, odd samples another task's kernel (a wrong op chain or shape: `incorrect`,
or a runtime error). Every sample's text is distinct (a comment with its index), as an RL
group's samples are; identical kernels still share Triton's compile cache, which makes the
batch a little kinder than real RL output (noted in the report).

Usage: make_batch.py PAIRS_JSONL OUT_DIR --samples S
Writes OUT_DIR/candidates/*.py and OUT_DIR/manifest.jsonl (kz verify --manifest format, with
"expect" = "correct" or "not_correct")."""
import argparse
import json
import os

p = argparse.ArgumentParser()
p.add_argument("pairs")
p.add_argument("out")
p.add_argument("--samples", type=int, default=16)
a = p.parse_args()
pairs = [json.loads(l) for l in open(a.pairs) if l.strip()]
os.makedirs(f"{a.out}/candidates", exist_ok=True)
rows = []
for t, pair in enumerate(pairs):
    other = pairs[(t + 1) % len(pairs)]
    for s in range(a.samples):
        source_pair = pair if s % 2 == 0 else other
        text = open(source_pair["candidate"]).read() + f"\n# sample {s} of {pair['id']}\n"
        path = os.path.abspath(f"{a.out}/candidates/{pair['id']}_s{s:02d}.py")
        with open(path, "w") as f:
            f.write(text)
        rows.append({"task": os.path.abspath(pair["task"]), "candidate": path, "backend": "triton",
                     "expect": "correct" if s % 2 == 0 else "not_correct"})
with open(f"{a.out}/manifest.jsonl", "w") as f:
    for r in rows:
        f.write(json.dumps(r) + "\n")
print(f"make_batch: {len(rows)} samples over {len(pairs)} tasks in {a.out}/manifest.jsonl")
