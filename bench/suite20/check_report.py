"""Hand computation of a kz bench run's metrics from its stored verdicts, compared with its report.

    python3 bench/suite20/check_report.py OUT_DIR [--expect-scored N] [--labels FILE] [--quiet]
    python3 bench/suite20/check_report.py --self-test

Standard library only; nothing of kz is imported. Reads OUT_DIR/verdicts.jsonl (one record
per verified sample) and, from OUT_DIR/report.json, only `bad_inputs` (the scored ones are
incorrect samples of their task) before comparing. Definitions (docs/bench-metrics.md,
docs/bench.md):

- the samples of a task: its verdict records plus its scored bad inputs; n = their number;
  a sample is correct when its verdict status is "correct"; its speedup is
  verdict.stages.timing.speedup (absent: not timed); scopes: "overall" (every task) and
  "level_<L>" (the tasks of level L); each metric is a mean over the tasks of the scope;
- pass@k = mean over tasks with n >= k of 1 - C(n-c, k) / C(n, k), exact binomials, for
  every k from 1 to the smallest n of the scope;
- fast_<p>@k the same with c = samples correct with speedup > p (strictly), p in
  {0, 0.5, 0.8, 1, 1.5, 2};
- fast_p_sample0.fast_<p> = share of tasks whose sample 0 is correct with speedup > p;
- geomean_speedup_correct = exp(mean(log speedup)) over correct timed samples (null if none),
  correct_timed_samples their number;
- mean_output_tokens = mean over samples with a numeric output_tokens (null if none);
- fast_p_curves: per scope, k in {1, 5, 10} with k <= the smallest n, p = i * 0.05, i = 0..50.

Checks, each a row of the table; exit 1 if any fails:
- "no sample verified twice": every (task, sample) at most once in verdicts.jsonl (a
  server_error record followed by the sample's retry is allowed and reported; the later
  record counts), no sample both verified and a scored bad input;
- the number of verdicts == samples.total - samples.bad_input of the report (every admitted
  generation has exactly one verdict), and with --expect-scored N: verdicts + scored bad
  inputs == N;
- report.samples: with_verdict, statuses, bad_input == len(bad_inputs), pending == 0,
  verified + resumed == with_verdict;
- every metric of every scope of report.json equals the hand value (abs tol 1e-9; nulls
  equal), and both have the same keys and scopes; fast_p_curves likewise;
- each record's top-level "speedup" equals its verdict's stages.timing.speedup.
--labels FILE (make_generations.py's OUT.labels.json): also prints how the statuses compare
with the labels' expectations (information only, never a failure).
"""
import json
import math
import os
import sys
from fractions import Fraction

PS = [0.0, 0.5, 0.8, 1.0, 1.5, 2.0]
TOL = 1e-9


def fast_name(p):
    s = "%g" % p
    if "." not in s and "e" not in s:
        s += ".0"
    return "fast_" + s


def pass_at_k(n, c, k):
    """1 - C(n-c, k) / C(n, k), from exact integers."""
    return float(1 - Fraction(math.comb(n - c, k), math.comb(n, k)))


def read_verdicts(path):
    """(records, notes): complete lines only; a last line without its newline is torn."""
    data = open(path, "rb").read()
    notes = []
    if data and not data.endswith(b"\n"):
        notes.append("last line torn (no newline): ignored")
        data = data[: data.rfind(b"\n") + 1]
    recs = []
    for i, line in enumerate(data.split(b"\n")):
        if not line.strip():
            continue
        try:
            recs.append(json.loads(line))
        except ValueError:
            notes.append(f"line {i + 1}: not JSON: ignored")
    return recs, notes


def level_of(task_id, rec_level):
    if isinstance(rec_level, int) and rec_level > 0:
        return rec_level
    return int(task_id[1:].split("_")[0])


def timing_speedup(rec):
    v = rec.get("verdict") or {}
    t = ((v.get("stages") or {}).get("timing") or {})
    s = t.get("speedup")
    return s if isinstance(s, (int, float)) and not isinstance(s, bool) else None


def build_samples(records, bad_inputs, checks):
    """({task: {"level", "samples": {sample: (correct, speedup, tokens)}}}, the verified
    samples' records (the last one of each (task, sample)), the number of scored bad inputs)."""
    tasks, seen = {}, {}
    for r in records:
        key = (r["task"], r["sample"])
        if key in seen:
            if seen[key].get("status") == "server_error":
                checks.append(("retried after server_error", True, f"{key[0]}/{key[1]}"))
            else:
                checks.append(("no sample verified twice", False, f"{key[0]}/{key[1]} appears twice"))
        seen[key] = r
    for (tid, s), r in seen.items():
        sp = timing_speedup(r)
        top = r.get("speedup")
        if not ((top is None and sp is None) or (top is not None and sp is not None and top == sp)):
            checks.append(("record speedup == stages.timing.speedup", False, f"{tid}/{s}: {top} vs {sp}"))
        tok = r.get("output_tokens")
        tok = tok if isinstance(tok, (int, float)) and not isinstance(tok, bool) else None
        t = tasks.setdefault(tid, {"level": level_of(tid, r.get("level")), "samples": {}})
        t["samples"][s] = (r.get("status") == "correct", sp, tok)
    scored_bad = 0
    for b in bad_inputs:
        if not b.get("scored_as_incorrect") or not isinstance(b.get("task"), str) or not isinstance(b.get("sample"), int):
            continue
        scored_bad += 1
        tid, s = b["task"], b["sample"]
        t = tasks.setdefault(tid, {"level": level_of(tid, b.get("level")), "samples": {}})
        if s in t["samples"]:
            checks.append(("no sample verified twice", False, f"{tid}/{s} is verified and a scored bad input"))
            continue
        tok = b.get("output_tokens")
        t["samples"][s] = (False, None, tok if isinstance(tok, (int, float)) else None)
    return tasks, list(seen.values()), scored_bad


def scope_metrics(group):
    """The metrics of one scope (a list of task dicts)."""
    ns = [len(t["samples"]) for t in group]
    out = {"tasks": len(group), "samples": sum(ns)}
    if not group or sum(ns) == 0:
        return out
    for k in range(1, min(ns) + 1):
        with_k = [t for t in group if len(t["samples"]) >= k]
        out[f"pass@{k}"] = sum(pass_at_k(len(t["samples"]), sum(c for c, _, _ in t["samples"].values()), k)
                               for t in with_k) / len(with_k)
        for p in PS:
            out[f"{fast_name(p)}@{k}"] = sum(
                pass_at_k(len(t["samples"]), sum(1 for c, sp, _ in t["samples"].values()
                                                 if c and sp is not None and sp > p), k)
                for t in with_k) / len(with_k)
    s0 = {}
    for p in PS:
        hits = 0
        for t in group:
            c, sp, _ = t["samples"].get(0, (False, None, None))
            hits += 1 if c and sp is not None and sp > p else 0
        s0[fast_name(p)] = hits / len(group)
    out["fast_p_sample0"] = s0
    timed = [sp for t in group for c, sp, _ in t["samples"].values() if c and sp is not None]
    out["geomean_speedup_correct"] = math.exp(sum(math.log(x) for x in timed) / len(timed)) if timed else None
    out["correct_timed_samples"] = len(timed)
    toks = [tok for t in group for _, _, tok in t["samples"].values() if tok is not None]
    out["mean_output_tokens"] = sum(toks) / len(toks) if toks else None
    return out


def curves(group):
    ns = [len(t["samples"]) for t in group]
    out = {}
    for k in (1, 5, 10):
        if k > min(ns):
            continue
        pts = []
        for i in range(51):
            p = i * 0.05
            pts.append([p, sum(pass_at_k(len(t["samples"]), sum(1 for c, sp, _ in t["samples"].values()
                                                                if c and sp is not None and sp > p), k)
                               for t in group) / len(group)])
        out[str(k)] = pts
    return out


def all_scopes(tasks):
    groups = {"overall": list(tasks.values())}
    for tid, t in sorted(tasks.items()):
        groups.setdefault(f"level_{t['level']}", []).append(t)
    return groups


def same(a, b):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= TOL


def fmt(x):
    return "null" if x is None else (f"{x:.6f}" if isinstance(x, float) else str(x))


def compare_metrics(report_metrics, mine, rows):
    for scope in sorted(set(report_metrics) | set(mine)):
        if scope not in report_metrics or scope not in mine:
            rows.append((scope, "(scope)", "present" if scope in report_metrics else "missing",
                         "present" if scope in mine else "missing", False))
            continue
        r, m = dict(report_metrics[scope]), dict(mine[scope])
        r.pop("vs_compile", None)  # needs the baseline's files: not checked here
        for key in sorted(set(r) | set(m), key=metric_order):
            if key == "fast_p_sample0":
                rs, ms = r.get(key) or {}, m.get(key) or {}
                for p in sorted(set(rs) | set(ms)):
                    rows.append((scope, f"fast_p_sample0.{p}", rs.get(p, "absent"), ms.get(p, "absent"),
                                 p in rs and p in ms and same(rs[p], ms[p])))
                continue
            ok = key in r and key in m and same(r[key], m[key])
            rows.append((scope, key, r.get(key, "absent"), m.get(key, "absent"), ok))


def metric_order(key):
    if key.startswith("pass@"):
        return (0, int(key[5:]), "")
    if key.startswith("fast_") and "@" in key:
        name, k = key.split("@")
        return (1, int(k), name)
    return (2, 0, key)


def compare_curves(report_curves, mine, rows):
    for scope in sorted(set(report_curves) | set(mine)):
        r, m = report_curves.get(scope, {}), mine.get(scope, {})
        for k in sorted(set(r) | set(m), key=int):
            rp, mp = r.get(k, []), m.get(k, [])
            bad = len(rp) != len(mp) or any(abs(a[0] - b[0]) > 1e-12 or not same(a[1], b[1]) for a, b in zip(rp, mp))
            rows.append((scope, f"fast_p_curves k={k} ({len(mp)} points)", "match" if not bad else "differs",
                         "", not bad))


def check_dir(out_dir, expect_scored=None, labels_path=None, quiet=False):
    report = json.load(open(os.path.join(out_dir, "report.json")))
    records, notes = read_verdicts(os.path.join(out_dir, "verdicts.jsonl"))
    checks = []  # (name, ok, detail)
    for n in notes:
        checks.append(("verdicts.jsonl readable", "torn" in n, n))
    bad_inputs = report.get("bad_inputs", [])
    tasks, resolved, scored_bad = build_samples(records, bad_inputs, checks)
    n_verdicts = len(resolved)
    if not any(name == "no sample verified twice" for name, _, _ in checks):
        checks.append(("no sample verified twice", True, f"{len(records)} lines, {n_verdicts} distinct (task, sample)"))
    s = report.get("samples", {})
    admitted = s.get("total", 0) - s.get("bad_input", 0)
    checks.append(("verdicts == samples.total - samples.bad_input", n_verdicts == admitted,
                   f"{n_verdicts} verdicts, {s.get('total')} - {s.get('bad_input')} = {admitted}"))
    if expect_scored is not None:
        checks.append((f"verdicts + scored bad inputs == {expect_scored}", n_verdicts + scored_bad == expect_scored,
                       f"{n_verdicts} + {scored_bad} = {n_verdicts + scored_bad}"))
    statuses = {}
    for r in resolved:
        statuses[r.get("status")] = statuses.get(r.get("status"), 0) + 1
    checks.append(("samples.with_verdict", s.get("with_verdict") == n_verdicts,
                   f"{s.get('with_verdict')} vs {n_verdicts}"))
    checks.append(("samples.statuses", s.get("statuses") == statuses, json.dumps(statuses, sort_keys=True)))
    checks.append(("samples.bad_input == len(bad_inputs)", s.get("bad_input") == len(bad_inputs),
                   f"{s.get('bad_input')} vs {len(bad_inputs)}"))
    checks.append(("samples.pending == 0", s.get("pending") == 0, str(s.get("pending"))))
    checks.append(("samples.verified + resumed == with_verdict",
                   s.get("verified", 0) + s.get("resumed", 0) == s.get("with_verdict"),
                   f"{s.get('verified')} + {s.get('resumed')} vs {s.get('with_verdict')}"))
    groups = all_scopes(tasks)
    mine = {scope: scope_metrics(g) for scope, g in groups.items()} if tasks else {}
    rows = []
    compare_metrics(report.get("metrics", {}), mine, rows)
    compare_curves(report.get("fast_p_curves", {}), {sc: curves(g) for sc, g in groups.items()} if tasks else {}, rows)

    if not quiet:
        scopes = sorted({r[0] for r in rows}, key=lambda x: (x != "overall", x))
        print(f"{'metric':34}" + "".join(f" {sc + ' report':>16} {sc + ' hand':>14}   " for sc in scopes))
        keys = []
        for r in rows:
            if r[1] not in keys:
                keys.append(r[1])
        cell = {(r[0], r[1]): r for r in rows}
        for key in keys:
            line = f"{key:34}"
            for sc in scopes:
                r = cell.get((sc, key))
                if r is None:
                    line += f" {'':>16} {'':>14}   "
                else:
                    line += f" {fmt(r[2]):>16} {fmt(r[3]):>14} {'ok' if r[4] else '!!'}"
            print(line)
        print()
    bad_rows = [r for r in rows if not r[4]]
    for r in bad_rows:
        print(f"MISMATCH {r[0]} {r[1]}: report {fmt(r[2])}, hand {fmt(r[3])}")
    print(f"{'check':48} result  detail")
    for name, ok, detail in checks:
        print(f"{name:48} {'ok' if ok else 'FAIL':6}  {detail}")
    print(f"{'metrics (every scope, every key)':48} {'ok' if not bad_rows else 'FAIL':6}  "
          f"{len(rows) - len(bad_rows)} of {len(rows)} values match (abs tol {TOL:g})")
    if "vs_compile" in json.dumps(report.get("metrics", {})):
        print(f"{'vs_compile metrics':48} {'-':6}  not checked (need the baseline files)")
    if labels_path:
        print_label_comparison(records, bad_inputs, labels_path)
    failed = bad_rows or any(not ok for _, ok, _ in checks)
    print("check_report:", "FAIL" if failed else "OK", f"({out_dir})")
    return 1 if failed else 0


def print_label_comparison(records, bad_inputs, labels_path):
    labels = json.load(open(labels_path))
    gpu = any(((r.get("verdict") or {}).get("device") or {}).get("kind") not in (None, "cpu")
              or r.get("speedup") is not None for r in records)
    col = "expect_gpu" if gpu else "expect_cpu"
    got = {f"{r['task']}/{r['sample']}": r.get("status") for r in records}
    for b in bad_inputs:
        if b.get("scored_as_incorrect"):
            got[f"{b['task']}/{b['sample']}"] = "bad_input"
    by = {}
    tasks = {k.split("/")[0] for k in got}
    for key, lab in labels.items():
        if key.split("/")[0] not in tasks:  # a task not in this run (--task, --level)
            continue
        by.setdefault((lab["label"], lab[col], got.get(key, "missing")), []).append(key)
    print(f"\nstatuses against the labels ({col}; information only):")
    print(f"{'label':16} {'expected':14} {'got':14} count  samples (when unexpected)")
    for (lab, exp, g), keys in sorted(by.items()):
        print(f"{lab:16} {exp:14} {g:14} {len(keys):5}  {'' if exp == g else ' '.join(sorted(keys))}")


def main():
    argv = sys.argv[1:]
    if "--self-test" in argv:   # the hand-worked cases: check_report_selftest.py
        from check_report_selftest import self_test
        sys.exit(self_test())
    expect, labels, quiet, pos = None, None, False, []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--expect-scored":
            expect = int(argv[i + 1]); i += 1
        elif a == "--labels":
            labels = argv[i + 1]; i += 1
        elif a == "--quiet":
            quiet = True
        else:
            pos.append(a)
        i += 1
    if len(pos) != 1:
        sys.exit(__doc__)
    sys.exit(check_dir(pos[0], expect, labels, quiet))


if __name__ == "__main__":
    main()
