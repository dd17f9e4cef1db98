"""A minimal Python client of the trainer backend: starts `python -m kz_train` and
exchanges frames over its stdin/stdout (tests, benchmarks; kz's own client is C++,
src/train/). Replies that are not `ok` are returned as they are by call(), raised by ok()."""

import json
import os
import select
import struct
import subprocess
import sys

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class TrainerProcess:
    def __init__(self, env=None, python=sys.executable):
        self.proc = subprocess.Popen([python, "-m", "kz_train"], cwd=PYTHON_DIR, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env={**os.environ, **(env or {})})
        self.next_id = 0

    def send_raw(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send_body(self, body: bytes) -> None:
        self.send_raw(struct.pack(">I", len(body)) + body)

    def _read(self, n: int, timeout: float) -> bytes:
        out = b""
        while len(out) < n:
            ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
            if not ready:
                raise TimeoutError(f"no reply within {timeout} s")
            chunk = os.read(self.proc.stdout.fileno(), n - len(out))
            if not chunk:
                raise EOFError("the backend closed its stdout")
            out += chunk
        return out

    def recv(self, timeout: float = 600.0) -> dict:
        (n,) = struct.unpack(">I", self._read(4, timeout))
        return json.loads(self._read(n, timeout))

    def call(self, op: str, **fields) -> dict:
        self.next_id += 1
        self.send_body(json.dumps({"protocol": 1, "op": op, "id": self.next_id, **fields}).encode())
        reply = self.recv()
        if reply.get("id") != self.next_id or reply.get("op") != op:
            raise RuntimeError(f"reply out of step: {reply}")
        return reply

    def ok(self, op: str, **fields) -> dict:
        reply = self.call(op, **fields)
        if not reply.get("ok"):
            raise RuntimeError(f"{op} failed: {reply.get('error')}")
        return reply

    def close(self) -> int:
        """Shut the backend down (if it still runs) and return its exit code."""
        if self.proc.poll() is None:
            self.call("shutdown")
        code = self.proc.wait(timeout=60)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            stream.close()
        return code

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None and exc[0] is not None:
            self.proc.kill()
        self.close()
