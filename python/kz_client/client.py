"""A small client of `kz serve` (docs/api.md), Python standard library only.

One `Client` may be shared between threads: each thread keeps its own keep-alive
connection. Every non-2xx reply becomes a `KzError` carrying the HTTP status and the
server's reason (its `{"error": ...}`); a 429 is retried, bounded, after its Retry-After.
"""

import http.client
import json
import threading
import time
import urllib.parse

TERMINAL_STATES = ("done", "failed", "cancelled")
# The longest a `?wait=true` request may be held by the server (its --wait-timeout
# defaults to 600 s) plus a margin: the socket timeout of such a request.
WAIT_REQUEST_TIMEOUT = 630.0


class KzError(Exception):
    """A request refused or failed. `status`: the HTTP status (None when the server could
    not be reached or the client gave up waiting); `reason`: the server's `error` text (or
    the client's); `payload`: the decoded reply body, if any; `index`: a batch sample's
    index for per-sample errors of `submit_batch`."""

    def __init__(self, status, reason, payload=None, index=None):
        super().__init__(f"HTTP {status}: {reason}" if status is not None else reason)
        self.status = status
        self.reason = reason
        self.payload = payload
        self.index = index


def _retry_after(headers):
    """Seconds from a Retry-After header (delta-seconds form only), else None."""
    value = headers.get("Retry-After") if headers else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


class Client:
    """Client of one `kz serve` at `base_url` (e.g. "http://127.0.0.1:8470").

    client_name: sent as `X-KZ-Client` (the server's per-client fairness key).
    timeout: socket timeout of one request, seconds (a `?wait=true` request gets at
    least WAIT_REQUEST_TIMEOUT). max_retries/max_backoff: 429 handling; each retry sleeps
    the reply's Retry-After (else 0.5 s doubling), capped at max_backoff.
    """

    def __init__(self, base_url, client_name=None, timeout=60.0, max_retries=6, max_backoff=30.0):
        url = urllib.parse.urlsplit(base_url if "://" in base_url else "http://" + base_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"kz_client: bad server URL {base_url!r} (want http://HOST:PORT)")
        self.base_url = base_url
        self._scheme, self._host = url.scheme, url.hostname
        self._port = url.port or (443 if url.scheme == "https" else 80)
        self._prefix = url.path.rstrip("/")
        self.client_name = client_name
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_backoff = max_backoff
        self._local = threading.local()

    # -- transport ----------------------------------------------------------------------
    def _connection(self, timeout):
        conn = getattr(self._local, "conn", None)
        if conn is None:
            cls = http.client.HTTPSConnection if self._scheme == "https" else http.client.HTTPConnection
            conn = cls(self._host, self._port, timeout=timeout)
            self._local.conn = conn
        conn.timeout = timeout
        if conn.sock is not None:
            conn.sock.settimeout(timeout)
        return conn

    def _drop_connection(self):
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
        self._local.conn = None

    def _send_once(self, method, path, body, timeout):
        """One request; returns (status, headers, raw body). A stale keep-alive
        connection is reopened once (resubmitting is safe: the server deduplicates)."""
        headers = {"Accept": "application/json"}
        if self.client_name:
            headers["X-KZ-Client"] = self.client_name
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        for attempt in (0, 1):
            conn = self._connection(timeout)
            reused = conn.sock is not None
            try:
                conn.request(method, self._prefix + path, body=data, headers=headers)
                resp = conn.getresponse()
                raw = resp.read()
                if resp.getheader("Connection", "").lower() == "close":
                    self._drop_connection()
                return resp.status, resp.headers, raw
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as e:
                self._drop_connection()
                if attempt == 0 and reused:
                    continue
                raise KzError(None, f"kz serve at {self.base_url}: connection lost: {e}") from e
            except (OSError, http.client.HTTPException) as e:
                self._drop_connection()
                raise KzError(None, f"kz serve at {self.base_url} unreachable: {e}") from e

    def _request(self, method, path, body=None, timeout=None, ok=(200, 202), raw=False):
        """Sends with 429 retries; returns (status, headers, decoded body)."""
        timeout = timeout or self.timeout
        for attempt in range(self.max_retries + 1):
            status, headers, data = self._send_once(method, path, body, timeout)
            if status != 429 or attempt == self.max_retries:
                break
            wait = _retry_after(headers)
            wait = 0.5 * 2 ** attempt if wait is None else wait
            time.sleep(min(wait, self.max_backoff))
        if raw and status in ok:
            return status, headers, data.decode("utf-8", "replace")
        try:
            payload = json.loads(data) if data else None
        except ValueError:
            payload = None
        if status not in ok:
            reason = payload.get("error") if isinstance(payload, dict) else None
            raise KzError(status, reason or data.decode("utf-8", "replace")[:500] or "no reason given", payload)
        return status, headers, payload

    # -- API ----------------------------------------------------------------------------
    @staticmethod
    def sample(task, candidate, backend=None, options=None, priority=None):
        """A /v1/verify body (also an element of a /v1/batch's `samples`)."""
        s = {"task": task, "candidate": candidate}
        if backend:
            s["backend"] = backend
        if options:
            s["options"] = dict(options)
        if priority is not None:
            s["priority"] = int(priority)
        return s

    def verify(self, task, candidate, backend=None, options=None, wait=True, priority=0, wait_timeout=None):
        """POST /v1/verify. wait=False: the 202 object `{"id", "status", "deduplicated"}`.
        wait=True: the verdict (docs/verdict.md); when the server's --wait-timeout passes
        first, polls the job (up to wait_timeout s, None: no limit). A failed or cancelled
        job raises KzError."""
        body = self.sample(task, candidate, backend, options, priority)
        if not wait:
            return self._request("POST", "/v1/verify", body)[2]
        timeout = max(self.timeout, WAIT_REQUEST_TIMEOUT)
        status, _, reply = self._request("POST", "/v1/verify?wait=true", body, timeout=timeout)
        if status == 200:
            return reply
        job = reply if reply.get("status") == "cancelled" else self.wait(reply["id"], timeout=wait_timeout)
        return self._verdict_of(job)

    def rewards(self, task, candidates, backend=None, options=None, reward=None, priority=None,
                wait_timeout=None, poll=2.0):
        """POST /v1/rewards (docs/api.md): one group of `candidates` (sources) for `task`;
        returns {"gate", "accuracy", "zero_variance", "reward", "samples": [{"status",
        "speedup", "speed_term", "reward", "advantage", "verdict", ...}]}. `reward`: CA-GRPO
        options (alpha, beta, speedup_cap, eps, baseline). When the server's --wait-timeout
        passes first (202), the same body is sent again every `poll` s (the stored verdicts
        answer it) until done or `wait_timeout` s (None: no limit; then KzError)."""
        body = {"task": task, "samples": [{"candidate": c} for c in candidates]}
        if backend:
            body["backend"] = backend
        if options:
            body["options"] = dict(options)
        if reward:
            body["reward"] = dict(reward)
        if priority is not None:
            body["priority"] = int(priority)
        if self.client_name:
            body["client"] = self.client_name
        deadline = None if wait_timeout is None else time.monotonic() + wait_timeout
        timeout = max(self.timeout, WAIT_REQUEST_TIMEOUT)
        while True:
            status, _, reply = self._request("POST", "/v1/rewards", body, timeout=timeout)
            if status == 200:
                return reply
            if deadline is not None and time.monotonic() >= deadline:
                raise KzError(None, f"rewards not ready after {wait_timeout} s", reply)
            time.sleep(poll)

    @staticmethod
    def _verdict_of(job):
        state = job.get("state", job.get("status"))
        if state == "done" and job.get("verdict") is not None:
            return job["verdict"]
        reason = job.get("error") or f"job {job.get('id')} is {state}"
        raise KzError(500 if state == "failed" else None, reason, job)

    def submit_batch(self, samples, priority=0, chunk=1024):
        """POST /v1/batch (in chunks of at most `chunk` samples, the server's default
        --max-batch). Returns one entry per sample, in order: its job id (str), or a
        KzError (status 400, `index` set) for a sample the server refused."""
        out = []
        for start in range(0, len(samples), chunk):
            part = list(samples[start:start + chunk])
            _, _, reply = self._request("POST", "/v1/batch", {"samples": part, "priority": int(priority)})
            for j in reply["jobs"]:
                index = start + j["index"]
                out.append(j["id"] if "id" in j else KzError(400, j.get("error", "refused"), j, index))
        return out

    def job(self, job_id):
        """GET /v1/jobs/{id}: the job object (state, verdict, timestamps...)."""
        return self._request("GET", f"/v1/jobs/{urllib.parse.quote(job_id)}")[2]

    def cancel(self, job_id):
        """DELETE /v1/jobs/{id}: the cancelled job object; KzError 409 if it already
        ended (done, failed or cancelled), 404 if unknown."""
        return self._request("DELETE", f"/v1/jobs/{urllib.parse.quote(job_id)}")[2]

    def wait(self, ids, poll=0.5, timeout=None):
        """Polls GET /v1/jobs/{id} until each job is done, failed or cancelled. `ids`: one
        id (returns its job object) or a list (returns {id: job object}). After `timeout`
        seconds raises KzError (status None) whose `payload` holds {id: last job object}."""
        single = isinstance(ids, str)
        pending = [ids] if single else list(dict.fromkeys(ids))
        jobs = {}
        deadline = None if timeout is None else time.monotonic() + timeout
        while pending:
            still = []
            for job_id in pending:
                jobs[job_id] = self.job(job_id)
                if jobs[job_id].get("state") not in TERMINAL_STATES:
                    still.append(job_id)
            pending = still
            if pending and deadline is not None and time.monotonic() + poll > deadline:
                raise KzError(None, f"timed out after {timeout} s waiting for {len(pending)} job(s)", jobs)
            if pending:
                time.sleep(poll)
        return jobs[ids] if single else jobs

    def health(self):
        """GET /healthz: {"ok", "queue_depth", "running", "device"}."""
        return self._request("GET", "/healthz")[2]

    def metrics_text(self):
        """GET /metrics: the Prometheus text."""
        return self._request("GET", "/metrics", raw=True)[2]

    def close(self):
        """Closes this thread's connection (others close when their threads end)."""
        self._drop_connection()
