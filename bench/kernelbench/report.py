"""The table of bench/kernelbench/run.py: per sample, kz beside KernelBench's evaluation."""
import json
import os

GIB = float(1 << 30)


def _rows(path: str) -> dict:
    if not os.path.exists(path):
        return {}
    return {r["id"]: r for r in (json.loads(l) for l in open(path) if l.strip())}


def kz_peak(row: dict):
    """kz's peak GPU bytes over the run's stages (profile.stages.*.peak_gpu_bytes)."""
    stages = ((row or {}).get("profile") or {}).get("stages") or {}
    peaks = [s.get("peak_gpu_bytes") for s in stages.values() if s.get("peak_gpu_bytes")]
    return max(peaks) if peaks else None


def _mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


def table(items: list, out_dir: str) -> str:
    kz, kb = _rows(os.path.join(out_dir, "kz.jsonl")), _rows(os.path.join(out_dir, "kernelbench.jsonl"))
    head = (f"{'sample':34s} {'kind':6s} {'in+out':>7s} {'kz':>14s} {'kz s':>6s} {'KB':>5s} "
            f"{'KB s':>6s} {'ratio':>5s} {'peak':>6s} {'bound':>6s}")
    lines, ratios, walls = [head], {1: [], 2: [], 3: []}, {1: [], 2: [], 3: []}
    for s in items:
        fp = s["footprint"]
        io = (fp["inputs"] + fp["outputs"]) if fp.get("inputs", -1) >= 0 else None
        a, b = kz.get(s["id"]), kb.get(s["id"])
        peak = kz_peak(a)
        bound = b["ref_peak_bytes"] + 2 * io if b and "ref_peak_bytes" in b and io else None
        ratio = a["wall_s"] / b["wall_s"] if a and b and b.get("wall_s") else None
        if ratio and a.get("status") == "correct" and b.get("correctness"):
            ratios[int(s["id"][1])].append(ratio)
            walls[int(s["id"][1])].append((a["wall_s"], b["wall_s"]))
        cell = lambda v, f: (f % v) if v is not None else "-"  # noqa: E731
        lines.append(
            f"{s['id'][:34]:34s} {s['kind']:6s} {cell(io and io / GIB, '%6.2fG'):>7s} "
            f"{(a or {}).get('status') or '-':>14s} {cell(a and a['wall_s'], '%6.1f'):>6s} "
            f"{str((b or {}).get('correctness', '-'))[:5]:>5s} {cell(b and b.get('wall_s'), '%6.1f'):>6s} "
            f"{cell(ratio, '%5.2f'):>5s} {cell(peak and peak / GIB, '%5.1fG'):>6s} "
            f"{cell(bound and bound / GIB, '%5.1fG'):>6s}{'' if not (peak and bound) or peak <= bound else ' OVER'}")
    for level, xs in ratios.items():
        if xs:
            kz_s, kb_s = (sum(w[i] for w in walls[level]) for i in (0, 1))
            lines.append(f"level {level}: mean kz/KernelBench wall ratio {_mean(xs):.3f} over {len(xs)} "
                         f"samples both judged correct; total wall {kz_s:.1f} s vs {kb_s:.1f} s "
                         f"(ratio of means {kz_s / kb_s:.3f})")
    return "\n".join(lines)
