"""A scripted STAND-IN proposer for the kz optimize demonstration (stdlib only).

This is not a model. It is an OpenAI-compatible server (POST /v1/chat/completions) that
answers every request with one of the hand-written candidates in candidates/<task>/, so
that the search machinery of `kz optimize` (verification, archive, duplicates, budget) can
be shown on a GPU without a model able to write kernels (the only local model,
SmolLM2-135M, cannot).

The task is recognised from the prompt, which holds the task's full source: each task file
in tasks/ carries the marker "kz-demo-task: <name>". The candidate is chosen by the
request's `seed` field (kz optimize sends seed = run seed + iteration), minus the seed base
given with --seed-base (default 0, kz optimize's default --seed), following this schedule:

    iteration 0   better1.py         correct, faster than the seed kernel
    iteration 1   cheat_library.py   planted cheat: a decoy kernel, a torch call does the work
    iteration 2   better2.py         correct, faster again
    iteration 3   cheat_baked.py     planted cheat: the task's shape baked in
    iteration 4   wrong.py           subtly wrong
    iteration 5+  better2.py         again: kz optimize refuses it as a duplicate

The reply is labelled: its text says it comes from the stand-in, and the code's first line
is the comment "# stand-in proposer: <task>/<file>" (kz optimize's duplicate check ignores
comments; summarize.py reads that line back from the run's candidates/<id>.py).
Usage in the reply: prompt_tokens = len(prompt) // 4, completion_tokens = len(text) // 4.
A prompt without a known marker gets a reply with no code (kz optimize records `no_code`).

Usage: standin_server.py PORT_FILE [--log REQUEST_LOG] [--seed-base N]
Writes the port it listens on (127.0.0.1, chosen by the OS) to PORT_FILE (atomically);
with --log, appends one line per request: "<task> <seed> <file>".
"""
import argparse
import json
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
CANDIDATES = os.path.join(HERE, "candidates")
TASKS = ("relu", "scale_shift", "softmax", "row_sum", "gelu_tanh")
SCHEDULE = ("better1.py", "cheat_library.py", "better2.py", "cheat_baked.py", "wrong.py")
AFTER = "better2.py"  # every later iteration: a duplicate of iteration 2


def pick(index: int) -> str:
    """The candidate file for the request `index` iterations after the first."""
    return SCHEDULE[index] if 0 <= index < len(SCHEDULE) else AFTER


def task_of(prompt: str):
    for name in TASKS:
        if f"kz-demo-task: {name}" in prompt:
            return name
    return None


def reply_text(task, index: int):
    if task is None:
        return None, "Stand-in proposer: no demo task marker in the prompt, so no code."
    name = pick(index)
    with open(os.path.join(CANDIDATES, task, name)) as f:
        code = f.read()
    text = (f"Stand-in proposer (scripted, not a model): candidates/{task}/{name}\n"
            f"```python\n# stand-in proposer: {task}/{name}\n{code.rstrip()}\n```\n")
    return name, text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("port_file")
    ap.add_argument("--log", default=None)
    ap.add_argument("--seed-base", type=int, default=0)
    args = ap.parse_args()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *unused):
            pass

        def do_POST(self):
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self.send_error(404)
                return
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
            seed = int(body.get("seed", 0) or 0)
            task = task_of(prompt)
            name, text = reply_text(task, seed - args.seed_base)
            if args.log:
                with open(args.log, "a") as f:
                    f.write(f"{task or '-'} {seed} {name or '-'}\n")
            reply = {"id": f"standin-{seed}", "object": "chat.completion",
                     "model": body.get("model", "standin"),
                     "choices": [{"index": 0, "finish_reason": "stop",
                                  "message": {"role": "assistant", "content": text}}],
                     "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": len(text) // 4,
                               "total_tokens": len(prompt) // 4 + len(text) // 4}}
            data = json.dumps(reply).encode()
            try:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(args.port_file + ".tmp", args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
