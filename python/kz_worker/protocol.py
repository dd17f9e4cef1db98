"""Length-prefixed JSON frames over the supervisor's file descriptor.

A frame is a 4-byte big-endian unsigned length N (N <= 16 MiB) followed by N bytes of
UTF-8 JSON holding one object (docs/worker-protocol.md, "Framing"). Non-finite floats
are not valid JSON, so they are sent as null.
"""

import fcntl
import json
import math
import os
import secrets
import struct

PROTOCOL_VERSION = 1
MAX_FRAME = 16 * 1024 * 1024
FD_ENV = "KZ_PROTOCOL_FD"


class ProtocolError(Exception):
    """The peer sent something that is not a valid frame (or closed mid-frame)."""


class ChannelClosed(ProtocolError):
    """The peer closed the channel (end of input) before a whole frame came."""


class FrameTooLarge(ProtocolError):
    """A frame's length is over MAX_FRAME: the stream cannot be resynchronised."""


def _json_safe(value):
    """Return `value` with every NaN/Inf float replaced by None, recursively."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    return value


def encode_frame(obj: dict) -> bytes:
    """Encode one object as a frame; raises ProtocolError if it exceeds MAX_FRAME."""
    body = json.dumps(_json_safe(obj), allow_nan=False, default=str).encode("utf-8")
    if len(body) > MAX_FRAME:
        raise ProtocolError(f"frame of {len(body)} bytes exceeds {MAX_FRAME}")
    return struct.pack(">I", len(body)) + body


def _read_exact(fd: int, n: int) -> bytes:
    chunks, left = [], n
    while left:
        chunk = os.read(fd, left)
        if not chunk:
            raise ChannelClosed(f"connection closed with {left} of {n} bytes unread")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


class Channel:
    """The frame channel on one file descriptor (a socketpair end or a pipe), or on a pair:
    frames read from `fd` and written to `write_fd` (the trainer backend's stdin/stdout)."""

    def __init__(self, fd: int, write_fd: int | None = None):
        self.fd = fd
        self.write_fd = fd if write_fd is None else write_fd
        self.token = None  # the session token of the request; echoed in every frame

    @classmethod
    def from_env(cls) -> "Channel":
        """Open the channel named by KZ_PROTOCOL_FD, then hide it from candidate code:
        the variable is removed from the environment and the socket moved from fd 3 to a
        random high, close-on-exec descriptor (so compilers and other subprocesses never
        hold it, and a candidate writing to fd 3 reaches nothing of ours)."""
        fd = int(os.environ.pop(FD_ENV))
        hidden = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, secrets.randbelow(700) + 200)
        os.close(fd)
        return cls(hidden)

    def read(self) -> dict:
        """Read one frame and return its JSON object; raises ProtocolError."""
        (length,) = struct.unpack(">I", _read_exact(self.fd, 4))
        if length > MAX_FRAME:
            raise FrameTooLarge(f"frame length {length} exceeds {MAX_FRAME}")
        try:
            obj = json.loads(_read_exact(self.fd, length).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ProtocolError(f"frame is not UTF-8 JSON: {exc}") from exc
        if not isinstance(obj, dict):
            raise ProtocolError("frame is not a JSON object")
        return obj

    def write(self, obj: dict) -> None:
        """Write one frame, completely (retrying partial writes). Every frame carries the
        request's session token: the supervisor drops frames without it."""
        if self.token is not None:
            obj = {**obj, "token": self.token}
        view = memoryview(encode_frame(obj))
        while view:
            view = view[os.write(self.write_fd, view):]

    def gate(self, want: str, nbytes: int = 0) -> None:
        """Ask the supervisor's GPU gate (docs/throughput.md) for `want` ("shared",
        "exclusive") and block until it answers `{"type": "gate", "granted": true}`; "release"
        gives back the hold and does not wait. Only the supervisor writes to this channel."""
        self.write({"type": "gate", "want": want, "bytes": int(nbytes)})
        if want == "release":
            return
        reply = self.read()
        if reply.get("type") != "gate" or reply.get("granted") is not True:
            raise ProtocolError(f"expected a gate grant, got {str(reply)[:200]}")

    def judge(self, stage: str, facts: dict) -> tuple:
        """Send a stage's facts to the supervisor's judge (docs/worker-protocol.md, "judge")
        and block until it answers: (verdict "pass" | "reject" | "invalid", reason)."""
        self.write({"type": "judge", "stage": stage, "facts": facts})
        reply = self.read()
        if reply.get("type") != "judge" or reply.get("verdict") not in ("pass", "reject", "invalid"):
            raise ProtocolError(f"expected a judgement, got {str(reply)[:200]}")
        return reply["verdict"], reply.get("reason")

    def event(self, stage: str, data: dict) -> None:
        """Send an `event` frame for a finished stage."""
        self.write({"type": "event", "stage": stage, "data": data})
