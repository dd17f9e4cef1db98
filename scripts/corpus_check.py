"""Compare `kz verify --json --manifest tests/corpus/manifest.jsonl` verdicts with the
corpus labels: status must equal expect_status and every expect_rules id must appear
in the reason or the findings. Prints one line per sample and the mismatches; exit 1
on any mismatch.

Usage: python scripts/corpus_check.py VERDICTS.jsonl [--manifest tests/corpus/manifest.jsonl]
"""
import argparse
import json
import sys


def rules_seen(v: dict) -> str:
    """Every rule id the verdict mentions: reason, screen findings, trace findings."""
    parts = [v.get("reason", "")]
    for stage in v.get("stages", {}).values():
        if isinstance(stage, dict):
            parts += [json.dumps(stage.get("findings", [])), json.dumps(stage.get("rule", ""))]
    return " ".join(parts)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("verdicts")
    ap.add_argument("--manifest", default="tests/corpus/manifest.jsonl")
    args = ap.parse_args()
    labels = {}
    for line in open(args.manifest):
        if line.strip():
            d = json.loads(line)
            labels[d["candidate"]] = d
    bad, seen = 0, 0
    for line in open(args.verdicts):
        v = json.loads(line)
        path = v["candidate"]["path"]
        label = next((d for c, d in labels.items() if path.endswith(c)), None)
        if label is None:
            continue
        seen += 1
        missing = [r for r in label.get("expect_rules", []) if r not in rules_seen(v)]
        ok = v["status"] == label["expect_status"] and not missing
        bad += not ok
        mark = "ok " if ok else "BAD"
        print(f"{mark} {path.split('/')[-1][:44]:44s} {v['status']:13s} want {label['expect_status']:9s}"
              f" {','.join(label.get('expect_rules', []))[:40]:40s} {'' if ok else 'missing ' + ','.join(missing)}"
              f" {v.get('reason', '')[:100]}")
    honest = sum(1 for d in labels.values() if d.get("honest"))
    print(f"corpus: {seen} verdicts for {len(labels)} labels ({honest} honest), {bad} mismatches")
    return 1 if bad or seen != len(labels) else 0


if __name__ == "__main__":
    sys.exit(main())
