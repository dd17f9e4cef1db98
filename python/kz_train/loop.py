"""The request loop of the trainer backend (docs/train-protocol.md).

Frames are the worker protocol's (kz_worker.protocol: 4-byte big-endian length, UTF-8 JSON
object, at most 16 MiB), read from stdin and written to the process's original stdout.
Before anything else runs, fd 1 is pointed at stderr, so whatever a library prints goes to
stderr and can never corrupt a frame. Every request gets exactly one `result` frame:
`{"type": "result", "id", "op", "ok": true, ...}` or `{"ok": false, "error": {"kind",
"message"}}`. A malformed frame, an unknown op or protocol, a bad field, a missing model or
an exception of the model code all get an error frame and the process stays usable; only a
frame length over the limit (the stream cannot be resynchronised) ends it, with exit 2,
after its error frame. End of input ends it with exit 0. Torch is imported on first use.
"""

import os
import sys

from kz_worker.__main__ import exit_with_parent
from kz_worker.failure import describe, traceback_tail
from kz_worker.protocol import PROTOCOL_VERSION, Channel, ChannelClosed, FrameTooLarge, ProtocolError

from .errors import OpError

OPS = ("hello", "load", "generate", "score", "train_step", "sft", "save", "shutdown")
BACKEND = "kz_train"


def _quiet_libraries() -> None:
    """Progress bars and advisory logs of the HF libraries go to stderr at most."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # no model is ever downloaded
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def _versions() -> dict:
    from importlib import metadata
    out = {}
    for name in ("torch", "transformers", "peft", "accelerate", "gguf", "safetensors"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def hello_op(_request: dict) -> dict:
    import platform

    import torch
    cuda = torch.cuda.is_available()
    return {"protocol": PROTOCOL_VERSION, "backend": BACKEND, "pid": os.getpid(),
            "python": platform.python_version(), "versions": _versions(),
            "device": "cuda" if cuda else "cpu",
            "device_name": torch.cuda.get_device_name(0) if cuda else platform.processor() or "cpu",
            "cuda_devices": torch.cuda.device_count() if cuda else 0,
            "threads": torch.get_num_threads()}


class Server:
    """Dispatches requests to the policy (created on the first op that needs one)."""

    def __init__(self):
        self.policy = None

    def _policy(self):
        if self.policy is None:
            from .policy import Policy
            self.policy = Policy()
        return self.policy

    def handle(self, request: dict) -> dict:
        """One request → its result frame; never raises an Exception."""
        op = request.get("op")
        head = {"type": "result", "id": request.get("id"), "op": op}
        try:
            if request.get("protocol") != PROTOCOL_VERSION:
                raise OpError("protocol", f"unsupported protocol {request.get('protocol')!r} "
                                          f"(this backend speaks {PROTOCOL_VERSION})")
            if op not in OPS:
                raise OpError("protocol", f"unknown op {op!r}; ops: {', '.join(OPS)}")
            if op == "hello":
                body = hello_op(request)
            elif op == "shutdown":
                body = {}
            else:
                body = getattr(self._policy(), op)(request)
            return {**head, "ok": True, **body}
        except OpError as exc:
            return {**head, "ok": False, "error": {"kind": exc.kind, "message": str(exc)}}
        except MemoryError as exc:
            return {**head, "ok": False, "error": {"kind": "out_of_memory", "message": describe(exc)}}
        except (Exception, SystemExit) as exc:
            kind = "out_of_memory" if type(exc).__name__ == "OutOfMemoryError" else "internal"
            return {**head, "ok": False, "error": {"kind": kind, "message": describe(exc),
                                                   "traceback": traceback_tail(exc)}}


def serve(channel: Channel) -> int:
    """Answer requests until `shutdown` or end of input; returns the exit code."""
    server = Server()
    while True:
        try:
            request = channel.read()
        except ChannelClosed:
            return 0
        except FrameTooLarge as exc:
            channel.write({"type": "result", "id": None, "op": None, "ok": False,
                           "error": {"kind": "protocol", "message": f"{exc}; closing"}})
            return 2
        except ProtocolError as exc:
            channel.write({"type": "result", "id": None, "op": None, "ok": False,
                           "error": {"kind": "protocol", "message": str(exc)}})
            continue
        reply = server.handle(request)
        try:
            channel.write(reply)
        except ProtocolError as exc:  # a reply over the frame limit
            channel.write({"type": "result", "id": reply.get("id"), "op": reply.get("op"), "ok": False,
                           "error": {"kind": "too_large", "message": f"{exc}; ask for less per request"}})
        if request.get("op") == "shutdown" and reply.get("ok"):
            return 0


def main() -> None:
    _quiet_libraries()
    frames_out = os.dup(1)
    os.dup2(2, 1)  # stray prints of any library land on stderr, never in the frame stream
    sys.stdout = sys.stderr
    exit_with_parent()
    code = serve(Channel(0, frames_out))
    sys.stderr.flush()
    os._exit(code)  # no interpreter teardown (CUDA contexts, tokenizer threads)
