"""A scripted OpenAI-compatible server for tests/e2e/generate_cli.sh (stdlib only).

Answers POST /v1/chat/completions with a fenced Triton kernel from tests/bench_suite/kernels
chosen by the task named in the prompt and the request's seed: seed % 3 == 0 the correct
kernel, 1 a wrong one (ReLU) or the correct one (Row_sum), 2 a reply without code. Every
request is appended to REQUEST_LOG as "<task> <seed>". Writes its port to PORT_FILE.
Usage: fake_llm_server.py PORT_FILE REQUEST_LOG [DELAY_S]
"""
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

KERNELS = os.path.join(os.path.dirname(__file__), "..", "bench_suite", "kernels")
PORT_FILE, LOG = sys.argv[1], sys.argv[2]
DELAY = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0


def kernel(name):
    with open(os.path.join(KERNELS, name)) as f:
        return f.read()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompt = body["messages"][0]["content"]
        task = "1_ReLU" if "(1_ReLU)" in prompt else "1_Row_sum"
        seed = body.get("seed", 0)
        with open(LOG, "a") as f:
            f.write(f"{task} {seed}\n")
        time.sleep(DELAY)
        if seed % 3 == 2:
            text = "I would use a Triton kernel here."
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
