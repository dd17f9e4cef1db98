"""The launch-trace rules over plain records (docs/trace.md); pure, no torch or GPU.

A *window* is one traced candidate call: {"label": "trial 0", "records": [...],
"caller_stream": id or None, "dropped": n}. A record is {"kind": "kernel" | "memset" |
"memcpy" | "marker", "name", "stream", "start_ns", "end_ns", "graph", "bytes"}; the
marker is the memset the tracer enqueued on the caller's stream right after forward
returned. `analyze` returns the verdict's `stages.trace` object; `failure_reason` the
rejection reason (rule id first) or None.

Rules (each window is one call):
- trace.no_candidate_kernel: a call ran none of the candidate's kernels.
- trace.side_stream: GPU work that ends more than LATE_SLACK_NS after the caller's
  stream was done: the start of the 4-byte host-to-device copy the tracer enqueued on
  it right after forward returned (a copy engine runs it, so it does not wait for an SM).
  The marker memset's start is only the fallback: a memset needs an SM, so it can start
  as late as a long kernel's last wave and hide the overlap (seen on the H200: an
  unjoined 4096-block softmax was not caught that way). Work on another stream that
  ends later was not joined to the caller's stream.
- trace.foreign_compute (policy strict): in some call the candidate's kernels carry
  less than `min_share` of candidate + foreign compute kernel time. Under policy
  kernelbench foreign compute is only reported. Memory records (memset, memcpy,
  PyTorch fill/copy kernels) are reported, never counted.
A window with dropped records is not judged for no_candidate_kernel (it may be
incomplete).
"""

from .trace_names import classify

LATE_SLACK_NS = 2_000  # cross-engine timestamp slack; unjoined work overlaps far more
MAX_LISTED = 24        # kernel groups listed per call
RULE_ORDER = ("trace.no_candidate_kernel", "trace.side_stream", "trace.foreign_compute")


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


def summarize_call(window: dict, names) -> dict:
    """Per-call summary: time by class, share, late work, grouped kernels."""
    marker = _marker(window)
    copy = _copy_marker(window, marker)
    classified = [("marker" if r is marker or r is copy else classify(r, names), r)
                  for r in window["records"]]
    ns = {"candidate": 0, "foreign": 0, "memory": 0}
    for cls, r in classified:
        if cls in ns:
            ns[cls] += _duration(r)
    caller = window.get("caller_stream")
    if caller is None and marker is not None:
        caller = marker.get("stream")
    late = []
    anchor = copy or marker  # when the caller's stream was done (see the module doc)
    done = anchor.get("start_ns", 0) if anchor else None
    if done is not None:
        for cls, r in classified:
            after = r.get("end_ns", 0) - done
            if cls != "marker" and r.get("end_ns", 0) and after > LATE_SLACK_NS:
                late.append({"name": r.get("name", "?")[:300], "stream": r.get("stream"),
                             "class": cls, "after_return_us": _us(after),
                             "caller_stream": r.get("stream") == caller})
    compute = ns["candidate"] + ns["foreign"]
    return {"call": window["label"], "caller_stream": caller, "marker": marker is not None,
            "candidate_kernels": sum(1 for cls, _ in classified if cls == "candidate"),
            "candidate_us": _us(ns["candidate"]), "foreign_us": _us(ns["foreign"]),
            "memory_us": _us(ns["memory"]),
            "share": round(ns["candidate"] / compute, 4) if compute else None,
            "dropped": window.get("dropped", 0), "late": late,
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


def _findings(calls: list, names, policy: str, min_share: float) -> tuple:
    """(findings that reject, reported-only messages)."""
    findings, reported = [], []
    listed = ", ".join(sorted(names)[:8]) or "none found"
    for c in calls:
        if c["candidate_kernels"] == 0 and not c["dropped"]:
            findings.append({"rule": "trace.no_candidate_kernel", "call": c["call"], "message":
                             f"{c['call']}: none of the candidate's kernels ({listed}) ran; "
                             f"{_ran(c)}"})
        if c["late"]:
            findings.append({"rule": "trace.side_stream", "call": c["call"],
                             "message": _late_message(c)})
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
    return {"status": "reject" if findings else "pass", "policy": policy,
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
