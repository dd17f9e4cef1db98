"""check_report.py's self-test: a hand-made run of 2 tasks x 3 samples whose metrics were
worked out on paper, and the checks a report must fail (a value off by 1e-6, a missing key,
a sample verified twice, a wrong --expect-scored). Run as `check_report.py --self-test`."""
import json
import os
import sys
import tempfile

from check_report import PS, all_scopes, build_samples, check_dir, curves, fast_name, same, scope_metrics


def self_test():
    """A hand-made run of 2 tasks x 3 samples with answers worked out on paper."""
    def rec(task, sample, status, speedup, tokens):
        v = {"status": status, "stages": {"timing": {"speedup": speedup}} if speedup is not None else {}}
        return {"task": task, "level": int(task[1]), "sample": sample, "code_xxh": "x", "origin": "g:1",
                "output_tokens": tokens, "status": status, "reason": "", "backend": "triton",
                "speedup": speedup, "verdict": v}
    records = [rec("L1_1", 0, "correct", 2.0, 100), rec("L1_1", 1, "correct", 0.5, 200),
               rec("L1_1", 2, "incorrect", None, None), rec("L2_1", 1, "correct", 1.5, 300),
               rec("L2_1", 2, "correct", 1.0, 400)]
    bad = [{"origin": "g:9", "kind": "empty_code", "message": "", "task": "L2_1", "level": 2, "sample": 0,
            "scored_as_incorrect": True, "output_tokens": 10},
           {"origin": "g:10", "kind": "unknown_task", "message": "", "task": None, "level": 0, "sample": None,
            "scored_as_incorrect": False, "output_tokens": None}]
    checks = []
    tasks, resolved, nb = build_samples(records, bad, checks)
    nv = len(resolved)
    mine = {sc: scope_metrics(g) for sc, g in all_scopes(tasks).items()}
    o, l1, l2 = mine["overall"], mine["level_1"], mine["level_2"]
    # On paper: L1_1 n=3 c=2 (speedups 2.0, 0.5); L2_1 n=3 c=2 (sample 0 empty code; 1.5, 1.0).
    expect = [
        (o["pass@1"], 2 / 3), (o["pass@2"], 1.0), (o["pass@3"], 1.0),
        (l1["fast_1.0@1"], 1 / 3), (l1["fast_1.0@2"], 2 / 3),          # 1 - C(2,2)/C(3,2)
        (l2["fast_1.0@1"], 1 / 3),                                      # 1.0 is not > 1
        (o["fast_1.5@1"], (1 / 3 + 0) / 2),                             # 1.5 is not > 1.5
        (o["fast_0.0@1"], 2 / 3), (o["fast_0.5@1"], (1 / 3 + 2 / 3) / 2), (o["fast_2.0@3"], 0.0),
        (o["fast_p_sample0"]["fast_1.0"], 0.5), (l2["fast_p_sample0"]["fast_0.0"], 0.0),
        (o["geomean_speedup_correct"], 1.5 ** 0.25), (l1["geomean_speedup_correct"], 1.0),
        (o["mean_output_tokens"], (100 + 200 + 10 + 300 + 400) / 5), (l1["mean_output_tokens"], 150.0),
        (o["tasks"], 2), (o["samples"], 6), (o["correct_timed_samples"], 4), (nv, 5), (nb, 1),
    ]
    fails = [(i, a, b) for i, (a, b) in enumerate(expect) if not same(a, b)]
    assert not checks, checks
    assert set(o) == {"tasks", "samples", "fast_p_sample0", "geomean_speedup_correct", "correct_timed_samples",
                      "mean_output_tokens"} | {f"pass@{k}" for k in (1, 2, 3)} | \
        {f"{fast_name(p)}@{k}" for p in PS for k in (1, 2, 3)}, sorted(o)
    assert fast_name(0.0) == "fast_0.0" and fast_name(1.0) == "fast_1.0" and fast_name(0.5) == "fast_0.5"
    results = [("hand-worked values", not fails, f"{len(expect) - len(fails)} of {len(expect)}" +
                (f"; wrong: {fails}" if fails else ""))]

    with tempfile.TemporaryDirectory() as d:
        def write(recs, metrics, torn=b""):
            with open(os.path.join(d, "verdicts.jsonl"), "wb") as f:
                f.write(b"".join(json.dumps(r).encode() + b"\n" for r in recs) + torn)
            rep = {"samples": {"total": 7, "verified": 3, "resumed": 2, "bad_input": 2, "with_verdict": 5,
                               "pending": 0, "statuses": {"correct": 4, "incorrect": 1}},
                   "metrics": metrics, "bad_inputs": bad,
                   "fast_p_curves": {sc: curves(g) for sc, g in all_scopes(tasks).items()}}
            json.dump(rep, open(os.path.join(d, "report.json"), "w"))
        quiet = open(os.devnull, "w")
        def run(**kw):
            old, sys.stdout = sys.stdout, quiet
            try:
                return check_dir(d, **kw)
            finally:
                sys.stdout = old
        write(records, mine)
        results.append(("matching report passes", run(expect_scored=6) == 0, "exit 0"))
        results.append(("--expect-scored mismatch fails", run(expect_scored=7) == 1, "exit 1"))
        write(records, mine, torn=b'{"task": "L1_1", "sam')
        results.append(("torn last line is ignored", run() == 0, "exit 0"))
        off = json.loads(json.dumps(mine))
        off["level_2"]["fast_1.0@2"] += 1e-6
        write(records, off)
        results.append(("a value off by 1e-6 fails", run() == 1, "exit 1"))
        missing = json.loads(json.dumps(mine))
        del missing["overall"]["pass@3"]
        write(records, missing)
        results.append(("a missing key fails", run() == 1, "exit 1"))
        write(records + [records[1]], mine)
        results.append(("a sample verified twice fails", run() == 1, "exit 1"))
        retry = dict(records[1], status="server_error", speedup=None, verdict={"status": "server_error"})
        write([retry] + records, mine)
        chk = []
        build_samples([retry] + records, bad, chk)
        results.append(("server_error then its retry is not 'twice'",
                        run() == 0 and any("retried" in n for n, _, _ in chk), "exit 0"))
    for name, ok, detail in results:
        print(f"{name:44} {'ok' if ok else 'FAIL':5} {detail}")
    failed = any(not ok for _, ok, _ in results)
    print("self-test:", "FAIL" if failed else "OK")
    return 1 if failed else 0
