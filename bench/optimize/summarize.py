"""The demonstration's table, rebuilt offline from kz optimize run directories.

Usage: summarize.py DIR [DIR ...] [--md OUT.md] [--check]

Each DIR is a run directory (it holds candidates.jsonl) or a folder of run directories
(run_gpu.sh's $OUT: one per task). Reads candidates.jsonl, state.json, run.json,
lineage.json and candidates/<id>.py; prints markdown: one summary row per run, then every
candidate of every run.

Where a candidate came from: the stand-in proposer (standin_server.py) writes the comment
"# stand-in proposer: <task>/<file>" as the code's first line; the initial kernel is
run.json's `initial`. A planted cheat is a record whose code came from a cheat_* file; it
is *accepted* when its verdict is `correct` (the verifier failed to catch it).

Columns: seed speedup (the initial kernel's speedup over the PyTorch reference, with its
95 % interval), best speedup and best id (lineage.json's `best`, the highest lower bound
among kept candidates), verified (iterations whose candidate was verified: correct /
incorrect / rejected / other), duplicates (refused before verification), cheats planted
vs accepted, wrong candidates accepted, the ledger's GPU-seconds (state.json) vs the sum
of the records' `spent.gpu_s`, tokens, stop_reason. On the CPU (--cpu) nothing is timed,
so every speedup is 0.

--check: exit 1 when a planted cheat or a wrong candidate was accepted, or when the
ledger's totals differ from the records' sums; 0 otherwise.
"""
import argparse
import json
import os
import re
import sys

LABEL = re.compile(r"^# stand-in proposer: (\S+)/(\S+)$")


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def run_dirs(paths):
    out = []
    for p in paths:
        if os.path.isfile(os.path.join(p, "candidates.jsonl")):
            out.append(p)
        elif os.path.isdir(p):
            for name in sorted(os.listdir(p)):
                q = os.path.join(p, name)
                if os.path.isfile(os.path.join(q, "candidates.jsonl")):
                    out.append(q)
    return out


def source_of(run, rec, settings):
    """The file a record's code came from: 'better1.py', 'cheat_baked.py', ... ('' if unknown)."""
    if rec["id"] == "init":
        return os.path.basename(settings.get("initial", "")) or "initial"
    if rec["id"] == "task":
        return "task (reference)"
    path = os.path.join(run, "candidates", rec["id"] + ".py")
    if not os.path.isfile(path):
        return ""
    with open(path) as f:
        first = f.readline().strip()
    m = LABEL.match(first)
    return m.group(2) if m else "(unlabelled)"


def fmt_speedup(rec):
    if rec is None or rec.get("status") != "correct":
        return "—"
    s = rec.get("speedup", 0.0)
    lo, hi = (rec.get("speedup_ci95") or [s, s])[:2]
    return f"{s:.3f} [{lo:.3f}, {hi:.3f}]"


def rule_of(reason):
    """The rule or stage a reason names, short: 'py.torch_compute', 'correctness.perturbed_sizes', ..."""
    rules = re.findall(r"\b((?:py|cpp|gen|trace|dataflow|correctness|timing)\.[a-z_]+)", reason or "")
    if rules:
        return " + ".join(dict.fromkeys(rules))
    if (reason or "").startswith("trial "):
        return "trials (tolerance)"
    return (reason or "")[:40]


def summarize(run):
    settings = json.load(open(os.path.join(run, "run.json")))
    state = json.load(open(os.path.join(run, "state.json")))
    lineage = {}
    if os.path.isfile(os.path.join(run, "lineage.json")):
        lineage = json.load(open(os.path.join(run, "lineage.json")))
    recs = read_jsonl(os.path.join(run, "candidates.jsonl"))
    by_id = {r["id"]: r for r in recs}
    task = os.path.splitext(os.path.basename(settings.get("task", run)))[0]
    rows = []
    for r in recs:
        rows.append(dict(r, source=source_of(run, r, settings)))
    its = [r for r in rows if r.get("iteration", -9) >= 0]
    verified = [r for r in its if r.get("outcome") == "verified"]
    count = lambda st: sum(1 for r in verified if r.get("status") == st)
    cheats = [r for r in its if r["source"].startswith("cheat_")]
    wrongs = [r for r in its if r["source"] == "wrong.py"]
    spent = state.get("budget", {}).get("spent", {})
    sums = {k: sum(r.get("spent", {}).get(k, 0.0) for r in recs) for k in spent}
    ledger_ok = all(abs(spent[k] - sums[k]) < 1e-6 * max(1.0, abs(spent[k])) for k in spent)
    best_id = lineage.get("best", "")
    return {
        "run": run, "task": task, "rows": rows,
        "seed": fmt_speedup(by_id.get("init")),
        "best_id": best_id, "best_source": next((r["source"] for r in rows if r["id"] == best_id), ""),
        "best": fmt_speedup(by_id.get(best_id)),
        "verified": len(verified),
        "verified_split": f"{count('correct')}/{count('incorrect')}/{count('rejected')}/"
                          f"{len(verified) - count('correct') - count('incorrect') - count('rejected')}",
        "duplicates": sum(1 for r in its if r.get("outcome") in ("duplicate", "near_duplicate")),
        "cheats_planted": len(cheats),
        "cheats_accepted": sum(1 for r in cheats if r.get("status") == "correct"),
        "cheat_verdicts": ", ".join(f"{r['source'][:-3]}: {r.get('status') or r.get('outcome')} "
                                    f"({rule_of(r.get('reason', ''))})" for r in cheats),
        "wrong_accepted": sum(1 for r in wrongs if r.get("status") == "correct"),
        "gpu_s": f"{spent.get('gpu_s', 0.0):.1f} / {sums.get('gpu_s', 0.0):.1f}",
        "gpu_limit": state.get("budget", {}).get("limits", {}).get("gpu_s", 0.0),
        "tokens": int(spent.get("tokens", 0)),
        "ledger_ok": ledger_ok,
        "stop": state.get("stop_reason", "") or "(running)",
        "cpu": not any(r.get("speedup", 0.0) for r in verified + [by_id.get("init", {})]),
    }


def markdown(sums):
    out = ["| task | seed speedup [95 % CI] | best speedup [95 % CI] | best id (file) | verified: "
           "correct/incorrect/rejected/other | duplicates | cheats planted / accepted | wrong accepted "
           "| gpu_s ledger / records (limit) | tokens | stop |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for s in sums:
        out.append(f"| {s['task']} | {s['seed']} | {s['best']} | {s['best_id']} ({s['best_source']}) | "
                   f"{s['verified']}: {s['verified_split']} | {s['duplicates']} | "
                   f"{s['cheats_planted']} / {s['cheats_accepted']} | {s['wrong_accepted']} | "
                   f"{s['gpu_s']} ({s['gpu_limit']:g}){'' if s['ledger_ok'] else ' MISMATCH'} | "
                   f"{s['tokens']} | {s['stop']} |")
    planted = sum(s["cheats_planted"] for s in sums)
    accepted = sum(s["cheats_accepted"] for s in sums)
    out.append("")
    out.append(f"Planted cheats: {planted}, accepted by the verifier: {accepted}. "
               f"Wrong candidates accepted: {sum(s['wrong_accepted'] for s in sums)}. "
               f"Ledger totals equal the records' sums: {'yes' if all(s['ledger_ok'] for s in sums) else 'NO'}.")
    if sums and all(s["cpu"] for s in sums):
        out.append("Every speedup is 0: a CPU run (--cpu) times nothing.")
    out.append("Proposers: scripted stand-ins (standin_server.py), not a model.")
    for s in sums:
        out += ["", f"### {s['task']} ({s['run']})", "",
                f"Cheats: {s['cheat_verdicts'] or 'none planted'}.", "",
                "| id | it | island | mutation | parent | file | outcome | status | speedup [95 % CI] | kept | gpu_s | reason |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in s["rows"]:
            reason = (r.get("reason") or "").replace("|", "\\|").replace("\n", " ")[:100]
            out.append(f"| {r['id']} | {r.get('iteration', '')} | {r.get('island', '')} | {r.get('mutation', '')} | "
                       f"{r.get('parent', '')} | {r['source']} | {r.get('outcome', '')} | {r.get('status', '')} | "
                       f"{fmt_speedup(r)} | {r.get('kept', '')} | {r.get('spent', {}).get('gpu_s', 0.0):.1f} | "
                       f"{reason} |")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description="Summarise kz optimize demonstration runs as markdown.")
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--md", help="also write the markdown to this file")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 if a cheat or a wrong candidate was accepted or a ledger differs")
    args = ap.parse_args()
    order = {t: i for i, t in enumerate(("relu", "scale_shift", "softmax", "row_sum", "gelu_tanh"))}
    runs = sorted(run_dirs(args.dirs), key=lambda r: (order.get(os.path.basename(r.rstrip("/")), 99), r))
    if not runs:
        print("summarize.py: no run directory (candidates.jsonl) under " + " ".join(args.dirs), file=sys.stderr)
        return 2
    sums = [summarize(r) for r in runs]
    text = markdown(sums)
    sys.stdout.write(text)
    if args.md:
        with open(args.md, "w") as f:
            f.write(text)
    if args.check:
        bad = [s["task"] for s in sums if s["cheats_accepted"] or s["wrong_accepted"] or not s["ledger_ok"]]
        if bad:
            print("summarize.py: check failed for " + ", ".join(bad), file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
