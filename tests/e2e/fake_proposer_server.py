"""A scripted OpenAI-compatible Proposer for tests/e2e/propose_cli.sh (stdlib only).

Reads the API set from the prompt's "APIs: a, b" line and answers with a KernelBench-format
module applying each API in turn (torch.nn.ReLU, torch.sum, torch.mul, ...), scaled by a
constant from the set id (so modules of different sets differ). By the request's seed:
seed % 3 == 0 or 1 the module (1 repeats 0: a duplicate), 2 a reply without code. Every
request is appended to REQUEST_LOG as "<set id> <seed>". A prompt without an "APIs:" line is
the Coder's (tests/e2e/propose_coder.sh): seed % 2 == 0 a ModelNew that returns its input
(never correct), 1 a reply without code; logged as "coder <seed>". Writes its port to
PORT_FILE.
Usage: fake_proposer_server.py PORT_FILE REQUEST_LOG
"""
import json
import os
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT_FILE, LOG = sys.argv[1], sys.argv[2]
OPS = {"torch.nn.ReLU": "torch.relu(y)", "torch.sum": "torch.sum(y, dim=-1, keepdim=True) + y",
       "torch.mul": "torch.mul(y, 0.5) + y"}


def module(apis, scale):
    body = "\n".join(f"        y = {OPS[a]}" for a in apis)
    return (f"import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    def forward(self, x):\n"
            f"        y = x * {scale}\n{body}\n        return y\n\n\ndef get_inputs():\n"
            f"    return [torch.randn(32, 64)]\n\n\ndef get_init_inputs():\n    return []\n")


CODER = ("import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
         "    def forward(self, x):\n        return x\n")


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompt = body["messages"][0]["content"]
        seed = body.get("seed", 0)
        found = re.search(r"^APIs: (.*)$", prompt, re.M)
        if not found:
            return self.coder(body, prompt, seed)
        apis = found.group(1).split(", ")
        scale = 1 + sum(map(ord, ",".join(apis))) % 97 / 100
        with open(LOG, "a") as f:
            f.write(f"{','.join(apis)} {seed}\n")
        text = "No idea." if seed % 3 == 2 else "```python\n" + module(apis, scale) + "```\n"
        reply = {"model": body["model"], "choices": [{"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": text}}],
                 "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": 50}}
        self.send(reply)

    def coder(self, body, prompt, seed):
        with open(LOG, "a") as f:
            f.write(f"coder {seed}\n")
        text = "No idea." if seed % 2 else "```python\n" + CODER + "```\n"
        self.send({"model": body["model"], "choices": [{"index": 0, "finish_reason": "stop",
                   "message": {"role": "assistant", "content": text}}],
                   "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": 20}})

    def send(self, reply):
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(PORT_FILE + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(PORT_FILE + ".tmp", PORT_FILE)
server.serve_forever()
