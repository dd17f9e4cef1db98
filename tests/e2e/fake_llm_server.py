"""A scripted OpenAI-compatible server for tests/e2e/generate_cli.sh (stdlib only).

Answers POST /v1/chat/completions with a fenced Triton kernel from tests/bench_suite/kernels
chosen by the task named in the prompt (or, for kz optimize's prompt, the ReLU task's
source in it) and the request's seed: seed % 3 == 0 the correct
kernel, 1 a wrong one (ReLU) or the correct one (Row_sum), 2 a reply without code. A
Proposer prompt ("APIs: ...") gets a module (class Model) using the first API, or no code
when seed % 3 == 2. Every request is appended to REQUEST_LOG as "<task> <seed>" (the API
set's first API for a Proposer prompt). Writes its port to PORT_FILE. With HOLD_FILE given,
the request with seed HOLD_SEED is answered only once HOLD_FILE exists. A conversation (a
refined turn of kz bench --turns: more than one message) is answered with the correct kernel
whatever the seed, and logged as "<task> <seed> turn<k> <what the feedback said>".
Usage: fake_llm_server.py PORT_FILE REQUEST_LOG [DELAY_S [HOLD_SEED HOLD_FILE]]
"""
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

KERNELS = os.path.join(os.path.dirname(__file__), "..", "bench_suite", "kernels")
PORT_FILE, LOG = sys.argv[1], sys.argv[2]
DELAY = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
HOLD_SEED, HOLD_FILE = (int(sys.argv[4]), sys.argv[5]) if len(sys.argv) > 5 else (None, None)
MODULE = """Here is the module:
```python
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return {api}(x)

def get_inputs():
    return [torch.randn(16, 16)]

def get_init_inputs():
    return []
```
"""


def kernel(name):
    with open(os.path.join(KERNELS, name)) as f:
        return f.read()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompt = body["messages"][0]["content"]
        task = "1_ReLU" if "(1_ReLU)" in prompt or "return torch.relu(x)" in prompt else "1_Row_sum"
        api = prompt.split("APIs: ", 1)[1].split("\n")[0].split(",")[0] if "APIs: " in prompt else None
        seed = body.get("seed", 0)
        turn = (len(body["messages"]) + 1) // 2
        said = ""
        if turn > 1:
            feedback = body["messages"][-1]["content"]
            said = " incorrect" if "it is not correct" in feedback else " no_code" if "no code the verifier" in feedback else " other"
            said += " mismatch" if "mismatch: output" in feedback else ""
        with open(LOG, "a") as f:
            f.write(f"{api or task} {seed}" + (f" turn{turn}{said}" if turn > 1 else "") + "\n")
        time.sleep(DELAY)
        while HOLD_FILE and seed == HOLD_SEED and not os.path.exists(HOLD_FILE):
            time.sleep(0.05)
        if turn > 1:  # a refined turn: the repair
            text = "Fixed:\n```python\n" + kernel("relu_ok.py" if task == "1_ReLU" else "row_sum_ok.py") + "```\n"
        elif seed % 3 == 2:
            text = "I would use a Triton kernel here."
        elif api:
            text = MODULE.format(api=api)
        elif task == "1_ReLU":
            text = "```python\n" + kernel("relu_ok.py" if seed % 3 == 0 else "relu_wrong.py") + "```\n"
        else:
            text = "Here:\n```python\n" + kernel("row_sum_ok.py") + "```\n"
        reply = {"model": body["model"], "choices": [{"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": text}}],
                 "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": 100 + seed}}
        data = json.dumps(reply).encode()
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a cancelled request)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(PORT_FILE + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(PORT_FILE + ".tmp", PORT_FILE)
server.serve_forever()
