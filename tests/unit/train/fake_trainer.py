"""A fake trainer backend for the C++ client's tests (tests/unit/train/trainer_backend_test.cc).

Speaks the trainer protocol (frames from kz_worker.protocol) on stdin/stdout without torch.
KZ_FAKE_MODE picks a misbehaviour, done once per KZ_FAKE_STATE file (so a restarted fake
behaves): crash_on_train_step (exits 3 mid-step after writing to stderr), hang_on_train_step
(sleeps), malformed_on_generate (a frame that is not JSON), wrong_id_on_score, bad_length_on_sft
(a frame header over the size limit), exit_at_start, old_protocol (hello says protocol 0).
"""

import os
import struct
import sys
import time

from kz_worker.protocol import Channel, ChannelClosed

MODE = os.environ.get("KZ_FAKE_MODE", "")
STATE = os.environ.get("KZ_FAKE_STATE", "")


def misbehave(op: str) -> bool:
    """True when MODE names this op and the misbehaviour has not happened yet."""
    if not MODE.endswith("_on_" + op):
        return False
    if STATE:
        if os.path.exists(STATE):
            return False
        open(STATE, "w").close()
    return True


def main() -> int:
    if MODE == "exit_at_start":
        print("fake: refusing to start", file=sys.stderr, flush=True)
        return 4
    channel = Channel(0, 1)
    loaded = None
    while True:
        try:
            req = channel.read()
        except ChannelClosed:
            return 0
        op, rid = req.get("op"), req.get("id")
        head = {"type": "result", "id": rid, "op": op, "ok": True}
        if op == "hello":
            channel.write({**head, "protocol": 0 if MODE == "old_protocol" else 1, "backend": "fake",
                           "device": "cpu", "pid": os.getpid(), "versions": {"torch": None}})
        elif op == "load":
            if not os.path.exists(req["model"]) and not req["model"].startswith("fake:"):
                channel.write({**head, "ok": False, "error": {"kind": "load_error",
                                                              "message": f"model path {req['model']} does not exist"}})
                continue
            loaded = req["model"]
            channel.write({**head, "model": loaded, "format": "fake", "parameters": 10, "steps": 0})
        elif op == "generate":
            if misbehave("generate"):
                os.write(1, struct.pack(">I", 5) + b"{oops")
                continue
            n = req.get("n", 1)
            samples = [{"prompt_index": i // n, "text": f"t{i}", "token_ids": [1, 2], "logprobs": [-0.5, -0.25],
                        "finish_reason": "length"} for i in range(len(req["prompts"]) * n)]
            channel.write({**head, "samples": samples, "prompt_ids": [[7]] * len(req["prompts"]),
                           "tokens": 2 * len(samples)})
        elif op == "score":
            if misbehave("score"):
                channel.write({**head, "id": -5})
                continue
            channel.write({**head, "logprobs": [[-1.0] * len(s["completion_ids"]) for s in req["samples"]],
                           "model": loaded})
        elif op == "train_step":
            if misbehave("train_step"):
                if MODE.startswith("crash"):
                    print("fake: CUDA error: an illegal memory access", file=sys.stderr, flush=True)
                    os._exit(3)
                time.sleep(3600)
            channel.write({**head, "loss": None if req.get("lr") == -1 else 0.5, "grad_norm": 1.5,
                           "clip_fraction": 0.25, "tokens": sum(len(s["completion_ids"]) for s in req["samples"]),
                           "samples": len(req["samples"]), "step": 1,
                           "timings": {"total_s": 1.0, "model_s": 0.9, "overhead_s": 0.1}})
        elif op == "sft":
            if misbehave("sft"):
                os.write(1, struct.pack(">I", 0x7fffffff))
                continue
            channel.write({**head, "loss": 2.0, "grad_norm": 1.0, "tokens": 3, "samples": 1, "step": 2})
        elif op == "save":
            channel.write({**head, "path": req["path"], "bytes": 1, "steps": 2})
        elif op == "shutdown":
            channel.write(head)
            return 0
        else:
            channel.write({**head, "ok": False, "error": {"kind": "protocol", "message": f"unknown op {op!r}"}})


if __name__ == "__main__":
    sys.exit(main())
