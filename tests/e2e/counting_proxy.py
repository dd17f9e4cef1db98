"""A loopback HTTP proxy that counts the requests a server is sent (stdlib only), for
tests/e2e/generate_llm.sh: every POST is appended to LOG as one JSON line {"path", "task",
"seed"} before it is forwarded to UPSTREAM (so a request cut by a kill still counts), and
the upstream's reply is passed back. "task" is the first of TASK_NAMES written in the
prompt as "(NAME)", else null. Writes its port to PORT_FILE.
Usage: counting_proxy.py UPSTREAM_URL PORT_FILE LOG TASK_NAME...
"""
import json
import os
import sys
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

UPSTREAM, PORT_FILE, LOG, NAMES = sys.argv[1].rstrip("/"), sys.argv[2], sys.argv[3], sys.argv[4:]
lock = threading.Lock()


def task_of(body):
    text = json.dumps(body.get("messages") or body.get("prompt") or "")
    return next((n for n in NAMES if f"({n})" in text), None)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        data = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = json.loads(data or b"{}")
        with lock, open(LOG, "a") as f:
            f.write(json.dumps({"path": self.path, "task": task_of(body), "seed": body.get("seed")}) + "\n")
        req = urllib.request.Request(UPSTREAM + self.path, data=data, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=600) as r:
                status, reply = r.status, r.read()
        except urllib.error.HTTPError as e:
            status, reply = e.code, e.read()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client is gone (killed)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
with open(PORT_FILE + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(PORT_FILE + ".tmp", PORT_FILE)
server.serve_forever()
