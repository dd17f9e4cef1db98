"""Sends the requests of a kz generate transcript again with the Python `openai` client
(asyncio, the same concurrency), for a side-by-side requests/s against `kz generate` on the
same server (docs/generate.md, "Measured").
Usage: openai_client_compare.py TRANSCRIPT.jsonl BASE_URL CONCURRENCY
Prints one JSON line: requests, wall_s, requests_per_s, completion_tokens, latencies.
"""
import asyncio
import json
import sys
import time

from openai import AsyncOpenAI


async def main(path, base_url, concurrency):
    lines = [json.loads(line) for line in open(path) if line.strip()]
    seen = set()  # the first record of each request id (a transcript appended to by several runs)
    lines = [l for l in lines if not (l["id"] in seen or seen.add(l["id"]))]
    # kz generate's order: by task then sample (the transcript holds completion order).
    def order(l):
        task, sample = l["id"].split("/")
        level, problem = task[1:].split("_")
        return int(level), int(problem), int(sample)
    bodies = [l["request"] for l in sorted(lines, key=order)]
    client = AsyncOpenAI(base_url=base_url, api_key="unused", max_retries=5, timeout=600)
    gate = asyncio.Semaphore(concurrency)
    latencies, tokens = [], 0

    async def one(body):
        nonlocal tokens
        async with gate:
            t0 = time.perf_counter()
            kwargs = {k: v for k, v in body.items() if k not in ("model", "messages", "stream")}
            r = await client.chat.completions.create(model=body["model"], messages=body["messages"], **kwargs)
            latencies.append(time.perf_counter() - t0)
            tokens += r.usage.completion_tokens if r.usage else 0

    t0 = time.perf_counter()
    await asyncio.gather(*(one(b) for b in bodies))
    wall = time.perf_counter() - t0
    print(json.dumps({"requests": len(bodies), "wall_s": round(wall, 3), "requests_per_s": round(len(bodies) / wall, 4),
                      "completion_tokens": tokens, "latencies_s": [round(x, 3) for x in sorted(latencies)]}))


asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
