"""Synthetic CUPTI records for the trace-rule tests (kz_worker.trace_rules' record shape)."""

US = 1000  # ns
CALLER = 7  # the caller's (current) stream id


def rec(kind, name, start_us, end_us, stream=CALLER, graph=0):
    return {"kind": kind, "name": name, "stream": stream, "start_ns": start_us * US,
            "end_ns": end_us * US, "graph": graph, "bytes": 0}


def marker(at_us, stream=CALLER):
    return rec("marker", "kz marker", at_us, at_us + 1, stream)


def window(records, label="trial 0", caller=CALLER, dropped=0):
    return {"label": label, "records": records, "caller_stream": caller, "dropped": dropped}
