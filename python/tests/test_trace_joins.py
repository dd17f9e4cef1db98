"""trace.side_stream judged from CUPTI's dependency records (kz_worker.trace_rules joins):
event records, stream waits, host synchronisations and stream flags; synthetic records,
no GPU needed. Correlation ids follow API-call order; the marker is issued right after
forward returns. The H200 case: the markers were queued behind the side kernel on a
shared hardware queue, so the unjoined kernel never looked late."""

from kz_worker import trace_rules
from trace_records import CALLER, US, marker, rec, window  # noqa: F401

SIDE, OTHER = 21, 22
MATMUL = "matmul_kernel(float const*, float const*, float*, int, int, int)"


def analyze(windows):
    return trace_rules.analyze(windows, {"matmul_kernel"}, "strict", 0.5)


def rules(stage):
    return [f["rule"] for f in stage["findings"]]


def work(name, corr, stream=SIDE, graph=0, start_us=10, end_us=500):
    return {**rec("kernel", name, start_us, end_us, stream, graph), "correlation": corr}


def ev_record(event, corr, stream=SIDE, sync_id=0):
    return {"kind": "event_record", "name": "event record", "stream": stream, "event": event,
            "sync_id": sync_id, "correlation": corr}


def wait(event, corr, stream=CALLER, sync_id=0):
    return {"kind": "stream_wait", "name": "stream wait event", "stream": stream,
            "event": event, "sync_id": sync_id, "correlation": corr}


def host_sync(kind, corr, stream=0xFFFFFFFF, event=0xFFFFFFFF):
    return {"kind": kind, "name": kind, "stream": stream, "event": event,
            "sync_id": 0xFFFFFFFF, "correlation": corr}


def created(stream, flags):
    return {"kind": "stream", "name": "stream", "stream": stream, "flags": flags,
            "correlation": 1}


def joined_window(records, marker_corr=100, deps="", **kw):
    """Everything ends before the marker starts: only the joins can reject."""
    w = window(records + [{**marker(600), "correlation": marker_corr}], **kw)
    return {**w, "dependencies": deps, "legacy_stream": kw.get("caller", CALLER)}


def side_rules(*records, **kw):
    stage = analyze([joined_window(list(records), **kw)])
    assert stage["join_check"] == trace_rules.JOINS
    return rules(stage)


def test_unjoined_side_stream_is_rejected_from_the_dependency_records():
    stage = analyze([joined_window([work(MATMUL, 3)])])
    assert rules(stage) == ["trace.side_stream"] and stage["join_check"] == "dependency records"
    assert stage["calls"][0]["late"] == []  # the timing signal saw nothing (H200)
    assert stage["calls"][0]["unjoined"] == [{"stream": SIDE, "name": MATMUL, "launches": 1}]
    assert trace_rules.failure_reason(stage).startswith(
        f"trace.side_stream: trial 0: {MATMUL} on stream 21 was never joined to the caller's "
        "stream 7: no event recorded on stream 21 after its last launch")


def test_side_stream_waiting_for_the_caller_is_not_a_join():
    # matmul_side_stream_cuda.py: inputs_ready recorded on the caller, waited for on side.
    assert side_rules(ev_record(1, 2, stream=CALLER), wait(1, 3, stream=SIDE),
                      work(MATMUL, 4)) == ["trace.side_stream"]


def test_event_recorded_on_the_side_stream_and_waited_for_is_a_join():
    assert side_rules(work(MATMUL, 3), ev_record(9, 4), wait(9, 5)) == []
    # torch's current_stream().wait_stream(side) is the same pair of records
    assert side_rules(work(MATMUL, 3), work(MATMUL, 4), ev_record(9, 6), wait(9, 7)) == []


def test_join_through_an_intermediate_stream():
    chain = [work(MATMUL, 3), ev_record(9, 4), wait(9, 5, stream=OTHER),
             work(MATMUL, 6, stream=OTHER), ev_record(10, 7, stream=OTHER), wait(10, 8)]
    assert side_rules(*chain) == []
    # OTHER's event recorded before OTHER waited for SIDE: the caller does not wait for SIDE
    early = [work(MATMUL, 3), ev_record(10, 4, stream=OTHER), ev_record(9, 5),
             wait(9, 6, stream=OTHER), wait(10, 7)]
    stage = analyze([joined_window(early)])
    assert [u["stream"] for u in stage["calls"][0]["unjoined"]] == [SIDE]


def test_wait_on_the_wrong_event_is_not_a_join():
    assert side_rules(work(MATMUL, 3), ev_record(9, 4), ev_record(8, 5, stream=OTHER),
                      wait(8, 6)) == ["trace.side_stream"]


def test_event_recorded_before_the_last_launch_is_not_a_join():
    assert side_rules(work(MATMUL, 3), ev_record(9, 4), wait(9, 5),
                      work(MATMUL, 6)) == ["trace.side_stream"]
    # re-recorded after the last launch but waited for before it: still not a join
    assert side_rules(work(MATMUL, 3), ev_record(9, 4), wait(9, 5), work(MATMUL, 6),
                      ev_record(9, 7)) == ["trace.side_stream"]


def test_wait_issued_after_the_marker_is_not_a_join():
    assert side_rules(work(MATMUL, 3), ev_record(9, 4), wait(9, 101)) == ["trace.side_stream"]


def test_sync_id_links_a_wait_to_its_record():
    # The event's later record (sync id 2, on OTHER) is not the one the wait named.
    assert side_rules(work(MATMUL, 3), ev_record(9, 4, sync_id=1),
                      ev_record(9, 5, stream=OTHER, sync_id=2), wait(9, 6, sync_id=1)) == []
    assert side_rules(work(MATMUL, 3), ev_record(9, 4, sync_id=1),
                      ev_record(9, 5, stream=OTHER, sync_id=2),
                      wait(9, 6, sync_id=2)) == ["trace.side_stream"]


def test_graph_kernels_on_the_caller_stream_need_no_join():
    graph = [work(MATMUL, 3, stream=CALLER, graph=3), work(MATMUL, 3, stream=30, graph=3)]
    assert side_rules(*graph) == []
    assert side_rules(work(MATMUL, 3, stream=30, graph=4)) == ["trace.side_stream"]


def test_two_side_streams_honest_pattern():
    # matmul_two_streams_cuda.py: `ready` on the caller, both sides wait for it; each side
    # records `done` (one event object, re-created at the same id) that the caller waits for.
    records = [ev_record(1, 2, stream=CALLER), wait(1, 3, stream=SIDE), work(MATMUL, 4),
               ev_record(5, 5), wait(5, 6), wait(1, 7, stream=OTHER),
               work(MATMUL, 8, stream=OTHER), ev_record(5, 9, stream=OTHER), wait(5, 10)]
    assert side_rules(*records) == []
    assert side_rules(*records[:-1]) == ["trace.side_stream"]  # the second join missing


def test_host_synchronisation_before_return_is_a_join():
    assert side_rules(work(MATMUL, 3), host_sync("context_sync", 4)) == []
    assert side_rules(work(MATMUL, 3), host_sync("stream_sync", 4, stream=SIDE)) == []
    assert side_rules(work(MATMUL, 3), ev_record(9, 4),
                      host_sync("event_sync", 5, event=9)) == []
    # the tracer's own device sync comes after the marker
    assert side_rules(work(MATMUL, 3), host_sync("context_sync", 101)) == ["trace.side_stream"]
    assert side_rules(work(MATMUL, 3), host_sync("stream_sync", 4, stream=OTHER)) == \
        ["trace.side_stream"]


def test_blocking_streams_are_ordered_by_the_legacy_stream():
    assert side_rules(created(SIDE, 1), work(MATMUL, 3)) == []  # blocking, caller legacy
    assert side_rules(created(SIDE, 2), work(MATMUL, 3)) == ["trace.side_stream"]
    stage = analyze([{**joined_window([created(SIDE, 1), work(MATMUL, 3)]), "legacy_stream": 1}])
    assert rules(stage) == ["trace.side_stream"]  # the caller is not the legacy stream


def test_caller_stream_work_and_the_markers_need_nothing():
    copy = {**rec("memcpy", "memcpy HtoD", 590, 591), "bytes": 4, "correlation": 99}
    assert side_rules(work(MATMUL, 3, stream=CALLER), copy) == []


def test_without_dependency_records_the_timing_rule_decides():
    why = "cuptiActivityEnable(CUDA_EVENT) failed: CUPTI_ERROR_NOT_COMPATIBLE (14)"
    stage = analyze([joined_window([work(MATMUL, 3)], deps=why)])
    assert stage["status"] == "pass" and stage["join_check"] == f"timing only: {why}"
    assert stage["calls"][0]["unjoined"] is None
    late = analyze([joined_window([work(MATMUL, 3, end_us=900)], deps=why)])
    assert rules(late) == ["trace.side_stream"]
    assert "ended 300.0 µs after forward returned" in late["findings"][0]["message"]
    plain = analyze([window([marker(5)])])  # windows that never had them
    assert plain["join_check"] == "timing only: dependency records not collected"


def test_dropped_records_fall_back_to_timing():
    stage = analyze([joined_window([work(MATMUL, 3)], dropped=2)])
    assert stage["status"] == "pass"
    assert stage["join_check"] == "timing only: records were dropped"


def test_both_signals_give_one_finding_naming_the_overlap():
    stage = analyze([joined_window([work(MATMUL, 3, end_us=900)])])
    assert len(stage["findings"]) == 1
    message = stage["findings"][0]["message"]
    assert "was never joined" in message and message.endswith("it ended 300.0 µs after "
                                                              "forward returned")


def test_records_no_api_call_issued_are_not_judged():
    internal = {**rec("memcpy", "memcpy HtoD", 1, 2, stream=40), "correlation": 0}
    assert side_rules(work(MATMUL, 3, stream=CALLER), internal) == []
