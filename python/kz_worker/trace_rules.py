"""The launch-trace rules over plain records (docs/trace.md); pure, no torch or GPU.

A *window* is one traced candidate call: {"label": "trial 0", "records": [...],
"caller_stream": id or None, "dropped": n, "legacy_stream": id or None, "dependencies":
"" when the dependency records were collected, else why not (absent: not collected)}.
A record is {"kind", "name", "stream", "start_ns", "end_ns", "graph", "bytes",
"correlation"}; kind is "kernel" | "memset" | "memcpy" | "marker" (the memset the tracer
enqueued on the caller's stream right after forward returned), or a dependency record:
"event_record" (+ "event", "sync_id"), "stream_wait" / "event_sync" / "stream_sync" /
"context_sync" / "sync" (+ "event", "sync_id"; "stream" is the waiting stream), "stream"
(a stream's creation "flags"). Correlation ids follow API-call order. `analyze` returns
the verdict's `stages.trace` object; `failure_reason` the rejection reason (rule id
first) or None.

Rules (each window is one call):
- trace.no_candidate_kernel: a call ran none of the candidate's kernels.
- trace.side_stream, two independent signals (either one rejects):
  * joins (when the dependency records were collected, and nothing was dropped): every
    stream S other than the caller's that ran GPU work in the window must be joined to
    the caller's stream before the marker: an event recorded on S after S's last launch
    (by correlation id) that the caller's stream waited for (cudaStreamWaitEvent; also
    through other streams, each waiting after the record it was joined by), or a host
    synchronisation (context, stream S, or that event) before the marker. Kernels of a
    graph that also ran on the caller's stream need no join; neither do blocking streams
    when the caller's stream is the legacy default stream (and vice versa). A wait on S
    for the caller's event (inputs ready) joins nothing.
  * timing: GPU work that ends more than LATE_SLACK_NS after the caller's stream was
    done: the start of the 4-byte host-to-device copy the tracer enqueued on it right
    after forward returned (the marker memset's start is the fallback). This misses
    unjoined work when the marker is queued behind it on a shared hardware queue (seen
    on the H200), but it never gives false positives; it is the only signal on a CUPTI
    without the dependency kinds (stage "join_check": "timing only: <why>").
- trace.foreign_compute (policy strict): in some call the candidate's kernels carry
  less than `min_share` of candidate + foreign compute kernel time. Under policy
  kernelbench foreign compute is only reported. Memory records (memset, memcpy,
  PyTorch fill/copy kernels) are reported, never counted.
A window with dropped records is not judged for no_candidate_kernel nor for joins (it
may be incomplete).
"""

import bisect

from .trace_names import classify

LATE_SLACK_NS = 2_000  # cross-engine timestamp slack; unjoined work overlaps far more
MAX_LISTED = 24        # kernel groups listed per call
RULE_ORDER = ("trace.no_candidate_kernel", "trace.side_stream", "trace.foreign_compute")
WORK_KINDS = ("kernel", "memset", "memcpy")
DEPENDENCY_KINDS = ("event_record", "stream_wait", "event_sync", "stream_sync",
                    "context_sync", "sync", "stream")
BLOCKING_STREAM = 1  # CUPTI_ACTIVITY_STREAM_CREATE_FLAG_DEFAULT: synced with the legacy stream
_NO_ID = (None, 0, 0xFFFFFFFF, (1 << 64) - 1)  # no cudaEventSyncId
_LAST = 1 << 62  # a correlation id after every real one
JOINS = "dependency records"


def _us(ns) -> float:
    return round(ns / 1000.0, 3)


def _duration(r: dict) -> int:
    start, end = r.get("start_ns", 0), r.get("end_ns", 0)
    return end - start if start and end > start else 0


def _marker(window: dict):
    """The last marker on the caller's stream (any stream if it is unknown). Fallback
    when none was recognised (its memset value reported differently): the last 4-byte
    memset on the known caller stream; nothing is enqueued there after the marker."""
    caller = window.get("caller_stream")
    marks = [r for r in window["records"] if r.get("kind") == "marker"
             and (caller is None or r.get("stream") == caller)]
    if not marks and caller is not None:
        marks = [r for r in window["records"] if r.get("kind") == "memset"
                 and r.get("bytes") == 4 and r.get("stream") == caller]
    return max(marks, key=lambda r: r.get("start_ns", 0)) if marks else None


def _copy_marker(window: dict, marker):
    """The 4-byte host-to-device copy the tracer enqueued on the marker's stream just
    before the marker (the last such copy before it in API order), or None."""
    if marker is None:
        return None
    copies = [r for r in window["records"] if r.get("kind") == "memcpy" and r.get("bytes") == 4
              and "HtoD" in r.get("name", "") and r.get("stream") == marker.get("stream")
              and r.get("correlation", 0) < marker.get("correlation", 1 << 62)]
    return max(copies, key=lambda r: r.get("correlation", 0)) if copies else None


def _corr(r, default=0) -> int:
    c = r.get("correlation") if r is not None else None
    return default if c is None else c


class _Joins:
    """Which streams the caller's stream waited for before the marker (correlation
    `limit`), from one window's dependency records (module doc)."""

    def __init__(self, window: dict, caller, limit: int):
        recs = window["records"]
        self.caller, self.legacy, self.memo = caller, window.get("legacy_stream"), {}
        self.events = sorted((r for r in recs if r.get("kind") == "event_record"), key=_corr)
        self.waits = [r for r in recs if r.get("kind") == "stream_wait" and _corr(r) < limit]
        self.syncs = [r for r in recs if r.get("kind") in ("event_sync", "stream_sync",
                                                            "context_sync") and _corr(r) < limit]
        self.flags = {r.get("stream"): (r.get("flags") or 0) & 0xFFFF
                      for r in recs if r.get("kind") == "stream"}
        self.by_sync_id = {r.get("sync_id"): r for r in self.events
                           if r.get("sync_id") not in _NO_ID}
        self.by_event = {}  # event id -> (its records, their correlation ids), API order
        for r in self.events:
            recs, keys = self.by_event.setdefault(r.get("event"), ([], []))
            recs.append(r)
            keys.append(_corr(r))

    def recorded(self, op: dict):
        """The event record a wait / event synchronize waited for: the one with its
        cudaEventSyncId, else its event's last record issued before it (CUDA's rule)."""
        hit = self.by_sync_id.get(op.get("sync_id")) if op.get("sync_id") not in _NO_ID else None
        if hit is not None:
            return hit
        records, keys = self.by_event.get(op.get("event"), ([], []))
        k = bisect.bisect_left(keys, _corr(op))
        return records[k - 1] if k else None

    def _implicit(self, stream) -> bool:
        """Ordered by the legacy default stream: a blocking stream and the legacy one."""
        def blocking(s):
            return self.flags.get(s) == BLOCKING_STREAM
        return self.legacy is not None and (
            (self.caller == self.legacy and blocking(stream)) or
            (stream == self.legacy and blocking(self.caller)))

    def joined(self, stream, after: int) -> bool:
        """Whether what was enqueued on `stream` up to correlation `after` is finished
        before the caller stream's next operation (the marker)."""
        if stream == self.caller or self._implicit(stream):
            return True
        key = (stream, after)
        if key not in self.memo:
            self.memo[key] = False  # guard; correlations grow along a chain anyway
            self.memo[key] = self._host_synced(stream, after) or self._waited(stream, after)
        return self.memo[key]

    def _host_synced(self, stream, after: int) -> bool:
        for s in self.syncs:
            if _corr(s) <= after:
                continue
            if s["kind"] == "context_sync" or (s["kind"] == "stream_sync" and
                                              s.get("stream") == stream):
                return True
            rec = self.recorded(s) if s["kind"] == "event_sync" else None
            if rec is not None and rec.get("stream") == stream and _corr(rec) > after:
                return True
        return False

    def _waited(self, stream, after: int) -> bool:
        for w in self.waits:
            rec = self.recorded(w)
            if rec is None or rec.get("stream") != stream or _corr(rec) <= after:
                continue
            if w.get("stream") != stream and self.joined(w.get("stream"), _corr(w)):
                return True
        return False


def join_check(window: dict) -> str:
    """JOINS when the window's joins can be judged from dependency records, else
    "timing only: <why>"."""
    why = window.get("dependencies", "dependency records not collected")
    if why:
        return f"timing only: {why}"
    if window.get("dropped"):
        return "timing only: records were dropped"
    return JOINS


def unjoined(window: dict, caller, anchors) -> list:
    """Streams other than `caller` whose work was not joined to it before the marker
    (`anchors`: the tracer's marker records, excluded; so are records no API call issued,
    correlation id 0): [{"stream", "name" (its last kernel, else its last record),
    "launches"}]."""
    limit = min([_corr(a, _LAST) for a in anchors if a is not None] or [_LAST])
    work = [r for r in window["records"] if r.get("kind") in WORK_KINDS and _corr(r)
            and not any(r is a for a in anchors)]  # correlation 0: no API call (driver-internal)
    caller_graphs = {r.get("graph") for r in work if r.get("graph") and r.get("stream") == caller}
    by_stream = {}
    for r in work:
        if r.get("stream") != caller and not (r.get("graph") and r.get("graph") in caller_graphs):
            by_stream.setdefault(r.get("stream"), []).append(r)
    joins, out = _Joins(window, caller, limit), []
    for stream, recs in sorted(by_stream.items(), key=lambda kv: str(kv[0])):
        last = max(recs, key=_corr)
        if joins.joined(stream, _corr(last)):
            continue
        kernels = [r for r in recs if r.get("kind") == "kernel"]
        named = max(kernels, key=_corr) if kernels else last
        out.append({"stream": stream, "name": named.get("name", "?")[:300],
                    "launches": len(recs)})
    return out


def _groups(classified) -> list:
    """Records grouped by (name, stream, class, graph or not): count and total µs,
    longest first, at most MAX_LISTED."""
    groups = {}
    for cls, r in classified:
        key = (r.get("name", "?")[:300], r.get("stream"), cls, bool(r.get("graph")))
        g = groups.setdefault(key, {"name": key[0], "stream": key[1], "class": cls,
                                    "graph": key[3], "count": 0, "ns": 0})
        g["count"] += 1
        g["ns"] += _duration(r)
    out = sorted(groups.values(), key=lambda g: -g["ns"])[:MAX_LISTED]
    return [{**{k: v for k, v in g.items() if k != "ns"}, "us": _us(g["ns"])} for g in out]


def _late(classified, done, caller) -> list:
    """Records (not the tracer's) that end more than LATE_SLACK_NS after `done`."""
    late = []
    for cls, r in classified if done is not None else ():
        after = r.get("end_ns", 0) - done
        if cls != "marker" and r.get("end_ns", 0) and after > LATE_SLACK_NS:
            late.append({"name": r.get("name", "?")[:300], "stream": r.get("stream"),
                         "class": cls, "after_return_us": _us(after),
                         "caller_stream": r.get("stream") == caller})
    return late


def summarize_call(window: dict, names) -> dict:
    """Per-call summary: time by class, share, late work, unjoined streams (None when
    not judged from dependency records), grouped kernels."""
    marker = _marker(window)
    copy = _copy_marker(window, marker)
    classified = [("marker" if r is marker or r is copy else classify(r, names), r)
                  for r in window["records"] if r.get("kind") not in DEPENDENCY_KINDS]
    ns = {"candidate": 0, "foreign": 0, "memory": 0}
    for cls, r in classified:
        if cls in ns:
            ns[cls] += _duration(r)
    caller = window.get("caller_stream")
    if caller is None and marker is not None:
        caller = marker.get("stream")
    anchor = copy or marker  # when the caller's stream was done (see the module doc)
    late = _late(classified, anchor.get("start_ns", 0) if anchor else None, caller)
    judged = join_check(window) == JOINS and caller is not None
    compute = ns["candidate"] + ns["foreign"]
    return {"call": window["label"], "caller_stream": caller, "marker": marker is not None,
            "candidate_kernels": sum(1 for cls, _ in classified if cls == "candidate"),
            "candidate_us": _us(ns["candidate"]), "foreign_us": _us(ns["foreign"]),
            "memory_us": _us(ns["memory"]),
            "share": round(ns["candidate"] / compute, 4) if compute else None,
            "dropped": window.get("dropped", 0), "late": late,
            "unjoined": unjoined(window, caller, (marker, copy)) if judged else None,
            "kernels": _groups([(c, r) for c, r in classified if c != "marker"])}


def _ran(call: dict) -> str:
    groups = call["kernels"]
    if not groups:
        return "no GPU work at all"
    return "it ran " + ", ".join(f"{g['name'][:80]} ×{g['count']}" for g in groups[:4])


def _late_message(call: dict) -> str:
    w = max(call["late"], key=lambda x: x["after_return_us"])
    if w["caller_stream"]:
        return (f"{call['call']}: {w['name'][:120]} was launched on the caller's stream after "
                f"forward returned (ended {w['after_return_us']:.1f} µs after it returned)")
    return (f"{call['call']}: {w['name'][:120]} on stream {w['stream']} ended "
            f"{w['after_return_us']:.1f} µs after forward returned; the caller's stream "
            f"{call['caller_stream']} was not made to wait for it")


def _unjoined_message(call: dict) -> str:
    u = call["unjoined"][0]
    late = [w["after_return_us"] for w in call["late"] if w["stream"] == u["stream"]]
    text = (f"{call['call']}: {u['name'][:120]} on stream {u['stream']} was never joined to "
            f"the caller's stream {call['caller_stream']}: no event recorded on stream "
            f"{u['stream']} after its last launch was waited for by the caller's stream "
            f"(directly or through other streams) or synchronised on before forward returned")
    if late:
        text += f"; it ended {max(late):.1f} µs after forward returned"
    others = [str(x["stream"]) for x in call["unjoined"][1:]]
    return text + (f" (also stream {', '.join(others)})" if others else "")


def _findings(calls: list, names, policy: str, min_share: float) -> tuple:
    """(findings that reject, reported-only messages)."""
    findings, reported = [], []
    listed = ", ".join(sorted(names)[:8]) or "none found"
    for c in calls:
        if c["candidate_kernels"] == 0 and not c["dropped"]:
            findings.append({"rule": "trace.no_candidate_kernel", "call": c["call"], "message":
                             f"{c['call']}: none of the candidate's kernels ({listed}) ran; "
                             f"{_ran(c)}"})
        if c["unjoined"] or c["late"]:
            findings.append({"rule": "trace.side_stream", "call": c["call"], "message":
                             _unjoined_message(c) if c["unjoined"] else _late_message(c)})
        if c["share"] is not None and c["foreign_us"] > 0:
            text = (f"{c['call']}: PyTorch/vendor kernels carry {1 - c['share']:.0%} of "
                    f"the kernel time ({c['foreign_us']:.1f} of "
                    f"{c['foreign_us'] + c['candidate_us']:.1f} µs)")
            if policy == "strict" and c["share"] < min_share:
                findings.append({"rule": "trace.foreign_compute", "call": c["call"],
                                 "message": f"{text}; the candidate's own kernels must carry "
                                            f">= {min_share:.0%}"})
            else:
                reported.append(text)
    return findings, reported


def analyze(windows: list, names, policy: str = "strict", min_share: float = 0.5) -> dict:
    """The `stages.trace` object for the traced calls `windows`; status "reject" when a
    rule fires (findings ordered by RULE_ORDER, then call)."""
    calls = [summarize_call(w, names) for w in windows]
    findings, reported = _findings(calls, names, policy, min_share)
    findings.sort(key=lambda f: RULE_ORDER.index(f["rule"]))
    shares = [c["share"] for c in calls if c["share"] is not None]
    checks = [join_check(w) for w in windows]
    return {"status": "reject" if findings else "pass", "policy": policy,
            "join_check": next((j for j in checks if j != JOINS), JOINS if checks else None),
            "min_candidate_share": min_share, "candidate_kernel_names": sorted(names)[:64],
            "worst_share": min(shares) if shares else None,
            "rule": findings[0]["rule"] if findings else None,
            "findings": findings, "reported": reported, "calls": calls}


def failure_reason(stage: dict):
    """"<rule>: <message>" of the first finding (plus the other rules' ids), or None."""
    findings = stage.get("findings") or []
    if not findings:
        return None
    first = findings[0]
    others = sorted({f["rule"] for f in findings} - {first["rule"]},
                    key=RULE_ORDER.index)
    also = f" (also {', '.join(others)})" if others else ""
    return f"{first['rule']}: {first['message']}{also}"
