#!/usr/bin/env python3
"""Load generator for `kz serve` (issue 5: 64 concurrent clients, 2,000 small jobs).

Starts a real `kz serve --cpu` on a free loopback port with a temporary --db and
--cache-dir, then has N clients (threads spread over a few processes, each with one
keep-alive HTTP/1.1 connection) POST /v1/verify (no ?wait) for every job, and reports
submit latency percentiles, accepted submits per second, counts by HTTP status and
errors. Standard library only.

  python3 bench/serve/load.py --kz build/bin/kz                # realistic: the worker runs jobs
  python3 bench/serve/load.py --kz build/bin/kz --no-run       # the worker paused (submit path only)
  python3 bench/serve/load.py --kz build/bin/kz --unique 500   # 2,000 submits of 500 distinct samples

Exit status: 0 when every reply was 202 or 429 (and p99 < --p99-ms, if given), else 1.
"""
import argparse
import http.client
import json
import multiprocessing as mp
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def bodies(n, unique, task_path, cand_path):
    """n request bodies over `unique` distinct candidates (a comment makes each distinct)."""
    task = open(task_path).read()
    cand = open(cand_path).read()
    out = []
    for i in range(n):
        body = {"task": task, "candidate": cand + "\n# load sample %d\n" % (i % unique), "backend": "triton"}
        out.append(json.dumps(body).encode())
    return out


class Conn:
    """One keep-alive HTTP/1.1 connection on a raw socket: the requests are prebuilt bytes
    and a reply is read by its Content-Length, so the client spends little CPU per request
    (http.client's header parsing costs more than the server's whole submit path, and the
    clients share the machine's cores with the server)."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def post(self, request):
        """Sends one prebuilt request; returns (status, body, keep_alive)."""
        self.sock.sendall(request)
        while b"\r\n\r\n" not in self.buf:
            self._recv()
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        status = int(head[9:12])
        length, keep_alive = 0, True
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"connection" and value.strip().lower() == b"close":
                keep_alive = False
        while len(self.buf) < length:
            self._recv()
        body, self.buf = self.buf[:length], self.buf[length:]
        return status, body, keep_alive

    def _recv(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("connection closed by the server")
        self.buf += chunk

    def close(self):
        self.sock.close()


def http_request(port, body):
    head = ("POST /v1/verify HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
            "Content-Length: %d\r\n\r\n" % (port, len(body)))
    return head.encode() + body


def client_proc(port, work, results, start_evt, threads):
    """One process: `threads` clients, each on its own keep-alive connection."""
    lat, codes, errors = [], {}, []
    lock = threading.Lock()
    it = iter([http_request(port, b) for b in work])

    def one():
        conn = Conn(port)
        while True:
            with lock:
                req = next(it, None)
            if req is None:
                break
            t0 = time.perf_counter()
            try:
                status, payload, keep_alive = conn.post(req)
                dt = time.perf_counter() - t0
                if not keep_alive:  # the server's per-connection request limit
                    conn.close()
                    conn = Conn(port)
                with lock:
                    lat.append(dt)
                    codes[status] = codes.get(status, 0) + 1
                    if status not in (202, 429):
                        errors.append("%d %s" % (status, payload[:200]))
            except Exception as e:  # noqa: BLE001 -- every failure is reported
                with lock:
                    errors.append(repr(e))
                conn.close()
                conn = Conn(port)
        conn.close()

    start_evt.wait()
    ts = [threading.Thread(target=one) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    results.put((lat, codes, errors))


def start_server(args, tmp, port):
    cmd = [args.kz, "serve", "--cpu", "--host", "127.0.0.1", "--port", str(port),
           "--db", os.path.join(tmp, "jobs.db"), "--cache-dir", os.path.join(tmp, "cache"),
           "--max-queue", str(args.max_queue)]
    if args.no_run:
        cmd.append("--no-run")
    cmd += args.serve_arg
    log = open(os.path.join(tmp, "server.log"), "w")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    for _ in range(120):
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", "/healthz")
            if c.getresponse().status == 200:
                return proc
        except OSError:
            pass
        if proc.poll() is not None:
            break
        time.sleep(0.25)
    proc.kill()
    sys.exit("kz serve did not come up:\n" + open(os.path.join(tmp, "server.log")).read()[-2000:])


def server_cpu_s(pid):
    """user+sys CPU seconds of process `pid` so far (Linux /proc), 0 elsewhere."""
    try:
        fields = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0


def pct(sorted_vals, p):
    if not sorted_vals:
        return float("nan")
    k = min(len(sorted_vals) - 1, max(0, int(round(p / 100.0 * len(sorted_vals) + 0.5)) - 1))
    return sorted_vals[k]


def run(args, port):
    work = bodies(args.jobs, args.unique or args.jobs, args.task, args.candidate)
    procs_n = max(1, min(args.procs, args.clients))
    per = [args.clients // procs_n + (1 if i < args.clients % procs_n else 0) for i in range(procs_n)]
    results, start_evt = mp.Queue(), mp.Event()
    # Job i goes to process i % procs_n: each process gets its share in submission order.
    procs = [mp.Process(target=client_proc, args=(port, work[i::procs_n], results, start_evt, per[i]))
             for i in range(procs_n)]
    for p in procs:
        p.start()
    time.sleep(0.5)  # let the processes import and reach the start line
    t0 = time.perf_counter()
    start_evt.set()
    lat, codes, errors = [], {}, []
    for _ in procs:
        l, c, e = results.get()
        lat += l
        errors += e
        for k, v in c.items():
            codes[k] = codes.get(k, 0) + v
    wall = time.perf_counter() - t0
    for p in procs:
        p.join()
    return sorted(lat), codes, errors, wall


def report(args, lat, codes, errors, wall):
    ms = lambda v: "%.1f" % (v * 1000)
    accepted = codes.get(202, 0)
    print("kz serve load: %d clients (%d processes), %d submits, %s distinct, worker %s" % (
        args.clients, args.procs, args.jobs, args.unique or args.jobs, "paused (--no-run)" if args.no_run else "running"))
    print("  latency ms: p50 %s  p90 %s  p99 %s  max %s" % (
        ms(pct(lat, 50)), ms(pct(lat, 90)), ms(pct(lat, 99)), ms(lat[-1] if lat else float("nan"))))
    print("  wall %.2f s; throughput %.0f accepted submits/s (%.0f replies/s)" % (wall, accepted / wall, len(lat) / wall))
    print("  status: " + ", ".join("%d: %d" % kv for kv in sorted(codes.items())))
    print("  errors: %d" % len(errors))
    for e in errors[:10]:
        print("    " + e)
    ok = not errors and set(codes) <= {202, 429}
    if args.p99_ms is not None and lat and pct(lat, 99) * 1000 >= args.p99_ms:
        print("  p99 %.1f ms is over the target of %.0f ms" % (pct(lat, 99) * 1000, args.p99_ms))
        ok = False
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kz", default=os.path.join(ROOT, "build/bin/kz"))
    ap.add_argument("--clients", type=int, default=64)
    ap.add_argument("--procs", type=int, default=4, help="client processes (the GIL: threads are split over these)")
    ap.add_argument("--jobs", type=int, default=2000)
    ap.add_argument("--unique", type=int, default=0, help="distinct samples (default: every job distinct)")
    ap.add_argument("--max-queue", type=int, default=4096)
    ap.add_argument("--no-run", action="store_true", help="start kz serve with --no-run (the worker paused)")
    ap.add_argument("--p99-ms", type=float, default=None, help="fail if p99 latency is at or over this")
    ap.add_argument("--task", default=os.path.join(ROOT, "examples/tasks/relu.py"))
    ap.add_argument("--candidate", default=os.path.join(ROOT, "examples/candidates/relu_triton_ok.py"))
    ap.add_argument("--serve-arg", action="append", default=[],
                    help="extra kz serve argument (repeatable), e.g. --serve-arg=--no-prestart")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory (server.log, jobs.db)")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="kz-load-")
    port = free_port()
    server = start_server(args, tmp, port)
    try:
        cpu0 = server_cpu_s(server.pid)
        lat, codes, errors, wall = run(args, port)
        print("  kz serve CPU during the run: %.2f s (user+sys, all its threads)" % (server_cpu_s(server.pid) - cpu0))
    finally:
        server.send_signal(signal.SIGTERM)  # drains: waits for the running job only
        try:
            server.wait(timeout=180)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    ok = report(args, lat, codes, errors, wall)
    if args.keep:
        print("  kept " + tmp)
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
