"""The validate op's forked children (docs/curriculum.md "Validation"): facts of a good
module; a hang is killed at the deadline, with the forks it made; os._exit and a crash are
reported as the child's end; gigabytes of printing cost nothing; the op itself survives all."""

import os
import socket
import textwrap
import time

from kz_worker.task.validate import validate_op

TAIL = "\n\ndef get_inputs():\n    return [torch.randn(32, 64)]\n\n\ndef get_init_inputs():\n    return []\n"


class _Channel:
    def __init__(self):
        self.a, self.b = socket.socketpair()
        self.fd = self.b.fileno()
        self.events = []

    def event(self, stage, data):
        self.events.append((stage, data))


def _module(tmp_path, name, forward, head="import torch\n"):
    body = textwrap.indent(textwrap.dedent(forward).strip(), " " * 8)
    text = f"{head}\n\nclass Model(torch.nn.Module):\n    def forward(self, x):\n{body}\n" + TAIL
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    return str(path)


def test_children_limits(tmp_path):
    marker = tmp_path / "grandchild_alive"
    paths = [
        _module(tmp_path, "good", "return torch.relu(x) + x"),
        _module(tmp_path, "hang", f"""
            if os.fork() == 0:
                time.sleep(3)
                open({str(marker)!r}, "w").write("alive")
                os._exit(0)
            while True:
                pass""", head="import os\nimport time\nimport torch\n"),
        _module(tmp_path, "exits", "os._exit(7)", head="import os\nimport torch\n"),
        _module(tmp_path, "prints", "for _ in range(2000):\n    print('x' * 1000000)\nreturn x * 2"),
    ]
    channel = _Channel()
    start = time.monotonic()
    result = validate_op({"modules": [{"path": p} for p in paths], "options": {"timeout_s": 2}}, channel)
    by_name = {os.path.basename(m["path"]): m for m in result["modules"]}
    good = by_name["good.py"]
    assert good["end"] == "result" and good["finite"] and good["weak_task"] is None
    assert good["reference"]["deterministic"] and good["reference"]["input_sensitive"]
    assert good["fp64"]["rel_l2"] < 1e-6 and good["footprint"]["total_bytes"] == 2 * 32 * 64 * 4
    assert by_name["hang.py"]["end"] == "timeout" and 2 <= by_name["hang.py"]["seconds"] < 4
    assert by_name["exits.py"]["end"] == "crashed" and by_name["exits.py"]["exit"] == "exit 7"
    assert by_name["prints.py"]["end"] == "result" and by_name["prints.py"]["finite"]
    assert [s for s, _ in channel.events] == ["module"] * 4
    time.sleep(max(0.0, start + 6 - time.monotonic()))
    assert not marker.exists()  # the hanging module's fork died with its group


def test_memory_limit(tmp_path):
    path = _module(tmp_path, "blowup", "return x.repeat(1, 2 ** 21).sum(dim=1)")
    result = validate_op({"modules": [{"path": path}], "options": {"memory_bytes": 256 << 20}}, _Channel())
    facts = result["modules"][0]
    assert facts["end"] == "result" and "allocate" in facts["run_error"], facts


def test_child_dies_with_its_parent(tmp_path):
    """A hanging module's child is killed when the validate parent is (the supervisor kills
    the parent's group; the child leads its own group, so PR_SET_PDEATHSIG must do it)."""
    import signal
    import subprocess
    import sys
    path = _module(tmp_path, "hang", "while True:\n    pass")
    pidfile = tmp_path / "pids"
    code = f"""
import os, socket, sys
sys.path.insert(0, {os.getcwd()!r})
import kz_worker.task.validate as v
real_fork = os.fork
def fork():
    pid = real_fork()
    if pid:  # written whole, then renamed: the test never reads a half-written file
        open({str(pidfile)!r} + ".tmp", "w").write(str(pid))
        os.rename({str(pidfile)!r} + ".tmp", {str(pidfile)!r})
    return pid
os.fork = fork
a, b = socket.socketpair()
class C:
    fd = b.fileno()
    def event(self, *args): pass
v.validate_op({{"modules": [{{"path": {path!r}}}], "options": {{"timeout_s": 60}}}}, C())
"""
    parent = subprocess.Popen([sys.executable, "-c", code])
    deadline = time.monotonic() + 60
    while not pidfile.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert pidfile.exists(), "validate never forked a child"
    child = int(pidfile.read_text())
    time.sleep(0.5)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    for _ in range(50):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(child, signal.SIGKILL)
    raise AssertionError("the child outlived its parent")
