"""kz_client (the `kz serve` client and the verl reward adapter): pure unit tests of the code
extraction and reward shaping, the 429 handling against a stub server, and the rest against
a real `kz serve --cpu` on a free loopback port (binary: $KZ_BIN, else build/bin/kz)."""

import http.server
import json
import logging
import os
import socket
import sys
import subprocess
import threading
import time
from pathlib import Path

import pytest

from kz_client import Client, KzError, extract_code, shape_reward, speed_bonus, task_source
from kz_client import verl as kz_verl

ROOT = Path(__file__).resolve().parents[2]
KZ_BIN = os.environ.get("KZ_BIN") or str(ROOT / "build" / "bin" / "kz")
TASK = (ROOT / "examples/tasks/relu.py").read_text()
OK = (ROOT / "examples/candidates/relu_triton_ok.py").read_text()
WRONG = (ROOT / "examples/candidates/relu_triton_wrong.py").read_text()
FAST = {"trials": 1, "timing": False}


def fenced(code, lang="python"):
    return f"Here is my kernel.\n```{lang}\n{code}```\nDone."


def slow_candidate(seconds):
    """relu_triton_ok.py that sleeps `seconds` on its first forward (as serve_batch.sh)."""
    c = OK.replace("import torch\n", "import time\nimport torch\n", 1)
    c = c.replace("class ModelNew", "_SLEPT = []\n\n\nclass ModelNew")
    return c.replace("        x = x.contiguous()\n", "        if not _SLEPT:\n            _SLEPT.append(1)\n"
                     f"            time.sleep({seconds})\n        x = x.contiguous()\n")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- pure unit tests ------------------------------------------------------------------------
def test_extract_code_takes_the_last_python_block():
    text = "```python\nfirst\n```\ntext\n```cpp\nint x;\n```\n```Python\nsecond = 1\n```\ntrailer"
    assert extract_code(text) == "second = 1\n"
    assert extract_code("```py\nx = 1\n```") == "x = 1\n"


@pytest.mark.parametrize("text", ["no code at all", "```\nx = 1\n```", "```python\nx = 1\n",
                                  "```python\n   \n```", None, 3])
def test_extract_code_format_errors(text):
    assert extract_code(text) is None


def test_extract_code_ignores_an_unclosed_last_block():
    assert extract_code("```python\na = 1\n```\n```python\nb = 2  # truncated") == "a = 1\n"


def test_task_source_order():
    assert task_source("SRC", {"task": "OTHER"}) == "SRC"
    assert task_source({"task": "D"}) == "D"
    assert task_source("", {"task": "E"}) == "E"
    assert task_source(None, {"ground_truth": "G"}) == "G"
    assert task_source(None, None) is None and task_source(None, "not a dict") is None


def timed(status, speedup):
    return {"status": status, "stages": {"timing": {"status": "ok", "speedup": speedup}}}


def test_shape_reward():
    assert shape_reward(timed("incorrect", 8.0), enable_speed_bonus=True) == 0.0
    assert shape_reward({"status": "compile_error"}) == 0.0
    assert shape_reward(None) == 0.0
    assert shape_reward(timed("correct", 4.0)) == 1.0  # bonus off by default
    assert shape_reward(timed("correct", 2.0), enable_speed_bonus=True) == pytest.approx(2.0)
    assert shape_reward(timed("correct", 16.0), enable_speed_bonus=True, bonus_cap=3.0) == pytest.approx(4.0)
    assert shape_reward(timed("correct", 0.5), enable_speed_bonus=True) == 1.0  # slower: no penalty
    assert shape_reward({"status": "correct", "stages": {"timing": {"status": "skipped"}}},
                        enable_speed_bonus=True) == 1.0
    assert speed_bonus(None) == 0.0 and speed_bonus(2 ** 0.5) == pytest.approx(0.5)


def test_adapter_needs_a_url(monkeypatch):
    monkeypatch.delenv("KZ_URL", raising=False)
    with pytest.raises(kz_verl.KzConfigError, match="KZ_URL"):
        kz_verl.compute_score("kb", fenced(OK), TASK)


def test_adapter_server_down_scores_zero(monkeypatch, caplog):
    monkeypatch.setenv("KZ_URL", f"http://127.0.0.1:{free_port()}")
    with caplog.at_level(logging.WARNING, logger="kz_client.verl"):
        assert kz_verl.compute_score("kb", fenced(OK), TASK) == 0.0
        assert kz_verl.compute_score_batch(["kb"] * 2, [fenced(OK)] * 2, [TASK] * 2, None) == [0.0, 0.0]
    assert sum("unreachable" in r.getMessage() for r in caplog.records) == 1  # logged once


def test_adapter_format_error_needs_no_server(monkeypatch):
    monkeypatch.setenv("KZ_URL", "http://127.0.0.1:1")
    assert kz_verl.compute_score("kb", "I cannot write this kernel.", TASK) == 0.0


# -- 429 handling against a stub server -----------------------------------------------------
@pytest.fixture
def stub():
    """A stub answering 429 (Retry-After from `state`) `state["busy"]` times, then 202."""
    state = {"busy": 0, "retry_after": "0", "calls": 0, "client": None}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            state["calls"] += 1
            state["client"] = self.headers.get("X-KZ-Client")
            code, body = (429, {"error": "the queue is full"}) if state["busy"] > 0 else \
                (202, {"id": "0123456789abcdef", "status": "queued", "deduplicated": False})
            state["busy"] -= 1
            data = json.dumps(body).encode()
            self.send_response(code)
            if code == 429 and state["retry_after"] is not None:
                self.send_header("Retry-After", state["retry_after"])
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    state["url"] = f"http://127.0.0.1:{server.server_address[1]}"
    yield state
    server.shutdown()
    server.server_close()


def test_429_is_retried_after_retry_after(stub):
    stub.update(busy=1, retry_after="1")
    kz = Client(stub["url"], client_name="unit")
    start = time.monotonic()
    assert kz.verify("t", "c", wait=False)["id"] == "0123456789abcdef"
    assert time.monotonic() - start >= 0.9 and stub["calls"] == 2 and stub["client"] == "unit"


def test_429_retries_are_bounded(stub):
    stub.update(busy=100, retry_after="100")
    kz = Client(stub["url"], max_retries=3, max_backoff=0.01)
    with pytest.raises(KzError) as e:
        kz.verify("t", "c", wait=False)
    assert e.value.status == 429 and "queue is full" in e.value.reason and stub["calls"] == 4


def test_429_without_retry_after_backs_off(stub):
    stub.update(busy=2, retry_after=None)
    kz = Client(stub["url"], max_backoff=0.05)
    assert kz.verify("t", "c", wait=False)["status"] == "queued"
    assert stub["calls"] == 3


# -- a real kz serve --cpu ------------------------------------------------------------------
@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if not os.path.exists(KZ_BIN):
        pytest.skip(f"no kz binary at {KZ_BIN} (build it, or set KZ_BIN)")
    tmp = tmp_path_factory.mktemp("kzserve")
    port = free_port()
    log = open(tmp / "server.log", "wb")
    proc = subprocess.Popen([KZ_BIN, "serve", "--cpu", "--host", "127.0.0.1", "--port", str(port),
                             "--db", str(tmp / "jobs.db"), "--cache-dir", str(tmp / "cache"),
                             "--wait-timeout", "120", "--timeout", "120"],
                            stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    probe = Client(url, timeout=2)
    for _ in range(120):
        try:
            probe.health()
            break
        except KzError:
            assert proc.poll() is None, (tmp / "server.log").read_text()
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("kz serve did not come up:\n" + (tmp / "server.log").read_text())
    yield url
    proc.terminate()
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


def test_health_and_metrics(server):
    kz = Client(server)
    h = kz.health()
    assert h["ok"] is True and h["device"] == "cpu"
    assert "kz_queue_depth" in kz.metrics_text()


def test_verify_wait_returns_the_verdict(server):
    kz = Client(server, client_name="pytest")
    v = kz.verify(TASK, OK, backend="triton", options=FAST)
    assert v["schema"] == "kz.verdict/1" and v["status"] == "correct", v.get("reason")
    v = kz.verify(TASK, WRONG, options=FAST)
    assert v["status"] == "incorrect"


def test_verify_no_wait_then_job(server):
    kz = Client(server, client_name="pytest")
    reply = kz.verify(TASK, OK, options=dict(FAST, seed=7), wait=False)
    job = kz.wait(reply["id"], poll=0.2, timeout=120)
    assert job["state"] == "done" and job["client"] == "pytest" and job["verdict"]["status"] == "correct"
    assert kz.job(reply["id"])["id"] == reply["id"]


def test_batch_and_wait(server):
    kz = Client(server, client_name="batcher")
    samples = [Client.sample(TASK, OK, options=dict(FAST, seed=11)), {"task": TASK},
               Client.sample(TASK, WRONG, options=FAST)]
    entries = kz.submit_batch(samples, priority=1)
    assert isinstance(entries[0], str) and isinstance(entries[2], str)
    assert isinstance(entries[1], KzError) and entries[1].status == 400 and entries[1].index == 1
    assert "candidate" in entries[1].reason
    jobs = kz.wait([entries[0], entries[2]], poll=0.2, timeout=120)
    assert jobs[entries[0]]["verdict"]["status"] == "correct" and jobs[entries[0]]["priority"] == 1
    assert jobs[entries[2]]["verdict"]["status"] == "incorrect"


def test_rewards_of_a_group(server):
    kz = Client(server, client_name="trainer")
    r = kz.rewards(TASK, [OK, WRONG, OK], backend="triton", options=dict(FAST, seed=13),
                   reward={"alpha": 0.5, "baseline": "leave_one_out"}, wait_timeout=240)
    assert [s["status"] for s in r["samples"]] == ["correct", "incorrect", "correct"]
    assert r["gate"] is True and abs(r["accuracy"] - 2 / 3) < 1e-9
    assert [s["reward"] for s in r["samples"]] == [1, 0, 1]
    assert [round(s["advantage"], 9) for s in r["samples"]] == [0.5, -1.0, 0.5]
    with pytest.raises(KzError) as e:
        kz.rewards(TASK, [OK], reward={"beta": -1})
    assert e.value.status == 400 and "beta" in e.value.reason


def test_cancel_queued_and_running(server):
    kz = Client(server, client_name="canceller")
    slow = kz.verify(TASK, slow_candidate(60), options=FAST, wait=False)["id"]
    for _ in range(120):
        if kz.job(slow)["state"] == "running":
            break
        time.sleep(0.25)
    queued = kz.verify(TASK, OK, options=dict(FAST, seed=99), wait=False)["id"]
    with pytest.raises(KzError) as e:
        kz.wait(queued, poll=0.1, timeout=0.5)
    assert e.value.status is None and e.value.payload[queued]["state"] == "queued"
    c = kz.cancel(queued)
    assert c["state"] == "cancelled" and c["cancelled_while"] == "queued"
    assert kz.cancel(slow)["cancelled_while"] == "running"
    with pytest.raises(KzError) as e:
        kz.cancel(queued)
    assert e.value.status == 409 and "only queued or running" in e.value.reason
    assert kz.wait(slow, timeout=10)["state"] == "cancelled"


def test_4xx_raise_kzerror_with_reason(server):
    kz = Client(server)
    with pytest.raises(KzError) as e:
        kz.verify(TASK, OK, backend="opencl")
    assert e.value.status == 400 and "unknown backend" in e.value.reason
    with pytest.raises(KzError) as e:
        kz.verify(TASK, OK, options={"bogus": 1})
    assert e.value.status == 400 and "unknown option" in e.value.reason
    with pytest.raises(KzError) as e:
        kz.job("0123456789abcdef")
    assert e.value.status == 404 and "no job" in e.value.reason
    with pytest.raises(KzError) as e:
        kz.submit_batch([Client.sample(TASK, OK)], priority=5000)
    assert e.value.status == 400 and "priority" in e.value.reason
    assert kz.submit_batch([]) == []  # nothing sent


def test_verl_adapter_single(server, monkeypatch):
    monkeypatch.setenv("KZ_URL", server)
    monkeypatch.setenv("KZ_CLIENT", "verl-test")
    monkeypatch.setenv("KZ_TIMEOUT", "120")
    assert kz_verl.compute_score("kb", fenced(OK), TASK, None, options=FAST) == 1.0
    assert kz_verl.compute_score("kb", fenced(WRONG), "", {"task": TASK}, options=FAST) == 0.0


def test_verl_adapter_batch(server):
    responses = [fenced(OK), fenced(WRONG), "no code", fenced("syntax error (", "py")]
    scores = kz_verl.compute_score_batch(["kb"] * 4, responses, [TASK] * 4, [None] * 4,
                                         url=server, options=dict(FAST, seed=5), poll=0.2)
    assert scores == [1.0, 0.0, 0.0, 0.0]
    assert all(isinstance(s, float) for s in scores)


def test_adapter_loads_by_path_as_verl_does(tmp_path):
    """verl imports custom_reward_function.path with spec_from_file_location, from any cwd
    and without python/ on sys.path."""
    code = ("import importlib.util, sys\n"
            f"spec = importlib.util.spec_from_file_location('custom_module', {str(ROOT / 'python/kz_client/verl.py')!r})\n"
            "m = importlib.util.module_from_spec(spec); sys.modules['custom_module'] = m\n"
            "spec.loader.exec_module(m)\n"
            "print(m.compute_score('kb', 'no code', 'SRC', None, url='http://127.0.0.1:1'))\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "0.0"
