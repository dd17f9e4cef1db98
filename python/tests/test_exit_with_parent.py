"""A worker child whose supervisor dies is killed with its process group (kz_worker.__main__)."""

import os
import subprocess
import sys
import time

PYDIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = """
import os, subprocess, sys, time
from kz_worker.__main__ import exit_with_parent
exit_with_parent(0.2)
grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
print(os.getpid(), grandchild.pid, flush=True)
time.sleep(60)
"""


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:   # a zombie awaiting its reaper is dead
        return f.read().split(")")[-1].split()[0] != "Z"


def test_child_and_its_group_die_with_the_parent():
    # The "parent" starts the child in its own group (as kz does), prints its pids, exits.
    parent = subprocess.run(
        [sys.executable, "-c",
         "import subprocess, sys; p = subprocess.Popen([sys.executable, '-c', sys.argv[1]], "
         "process_group=0, stdout=subprocess.PIPE, text=True); print(p.stdout.readline(), end='')",
         CHILD], env={**os.environ, "PYTHONPATH": PYDIR}, capture_output=True, text=True, timeout=60)
    child, grandchild = map(int, parent.stdout.split())
    deadline = time.time() + 10
    while (alive(child) or alive(grandchild)) and time.time() < deadline:
        time.sleep(0.1)
    assert not alive(child) and not alive(grandchild)


def test_a_child_that_does_not_lead_its_group_watches_nothing():
    out = subprocess.run([sys.executable, "-c",
                          "import threading; from kz_worker.__main__ import exit_with_parent; "
                          "exit_with_parent(); print(threading.active_count())"],
                         env={**os.environ, "PYTHONPATH": PYDIR}, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "1", out.stderr
