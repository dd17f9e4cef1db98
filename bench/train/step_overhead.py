"""A trainer step's own overhead: everything of a train_step but the model's forward and
backward, as a fraction of its wall time (docs/training.md, "Overhead").

Starts the built-in backend (python -m kz_train), loads MODEL, and runs WARMUP + STEPS
train_steps of BATCH sequences of TOKENS tokens each (PROMPT of them prompt, the rest
completion; random token ids, advantages +-1, old logprobs from one score call). Prints one
JSON object: the medians of the backend's own timings (total_s, model_s = forward + backward,
optimizer_s, overhead_s = total - model) and of the client's wall time (request written to
reply read: adds framing and the pipe), and overhead fractions of both.

  .venv/bin/python bench/train/step_overhead.py --model .models/SmolLM2-135M-Instruct.Q4_1.gguf
"""

import argparse
import json
import os
import random
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from kz_train.client import TrainerProcess  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=".models/SmolLM2-135M-Instruct.Q4_1.gguf")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--prompt", type=int, default=16)
    ap.add_argument("--micro-batch", type=int, default=0, help="0: the whole batch at once")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    with TrainerProcess() as backend:
        hello = backend.ok("hello")
        load = backend.ok("load", model=os.path.abspath(args.model), device=args.device, optimizer={"lr": 1e-6})
        samples = [{"prompt_ids": [rng.randrange(1000, 20000) for _ in range(args.prompt)],
                    "completion_ids": [rng.randrange(1000, 20000) for _ in range(args.tokens - args.prompt)],
                    "advantage": 1.0 if i % 2 else -1.0} for i in range(args.batch)]
        old = backend.ok("score", samples=samples)["logprobs"]
        for s, lp in zip(samples, old):
            s["old_logprobs"] = lp
        fields = {"samples": samples}
        if args.micro_batch:
            fields["micro_batch_size"] = args.micro_batch
        rows = []
        for i in range(args.warmup + args.steps):
            t0 = time.perf_counter()
            r = backend.ok("train_step", **fields)
            wall = time.perf_counter() - t0
            if i >= args.warmup:
                rows.append({**r["timings"], "wall_s": wall})
    med = {k: statistics.median(row[k] for row in rows)
           for k in ("total_s", "model_s", "optimizer_s", "overhead_s", "wall_s")}
    print(json.dumps({
        "model": args.model, "parameters": load["parameters"], "device": load["device"],
        "threads": hello["threads"], "batch": args.batch, "tokens_per_sequence": args.tokens,
        "completion_tokens": args.batch * (args.tokens - args.prompt), "steps": args.steps,
        "load_average": os.getloadavg()[0], "median": med,
        "overhead_fraction_of_step": med["overhead_s"] / med["total_s"],
        "overhead_fraction_of_wall": (med["wall_s"] - med["model_s"]) / med["wall_s"],
        "steps_raw": rows}, indent=1))


if __name__ == "__main__":
    main()
