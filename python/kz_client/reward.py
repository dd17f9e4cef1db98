"""Pure pieces of the reward: the candidate's code out of a model response, the task out of
a dataset row, and the sample-level reward of a verdict (docs/client.md, "Reward")."""

import math
import re

# A fenced block opened by ```python or ```py (any case, optional spaces before the tag)
# at the start of a line, closed by ``` at the start of a line. An unclosed block (a
# truncated generation) does not count.
_FENCE = re.compile(r"^[ \t]*```[ \t]*(?:python|py)[ \t]*\r?\n(.*?)^[ \t]*```", re.S | re.M | re.I)

DEFAULT_BONUS_CAP = 1.0


def extract_code(response):
    """The last fenced ```python block of a model response, or None (no such block, or an
    empty one): a format error, reward 0."""
    if not isinstance(response, str):
        return None
    blocks = _FENCE.findall(response)
    if not blocks or not blocks[-1].strip():
        return None
    return blocks[-1]


def task_source(ground_truth, extra_info=None):
    """The reference's Python source: `ground_truth` when it is a non-empty string (or a
    dict with "task"), else extra_info["task"] (or extra_info["ground_truth"]); None if
    none of them has it."""
    info = extra_info if hasattr(extra_info, "get") else {}
    for value in (ground_truth, info.get("task"), info.get("ground_truth")):
        if isinstance(value, dict):
            value = value.get("task")
        if isinstance(value, str) and value.strip():
            return value
    return None


def speedup_of(verdict):
    """stages.timing.speedup of a verdict when timing ran, else None."""
    timing = ((verdict or {}).get("stages") or {}).get("timing") or {}
    s = timing.get("speedup")
    if timing.get("status") != "ok" or not isinstance(s, (int, float)) or not s > 0 or math.isinf(s):
        return None
    return float(s)


def speed_bonus(speedup, cap=DEFAULT_BONUS_CAP):
    """clip(log2(speedup), 0, cap); 0 when the speedup is unknown."""
    if speedup is None or not speedup > 0:
        return 0.0
    return min(max(math.log2(speedup), 0.0), float(cap))


def shape_reward(verdict, enable_speed_bonus=False, bonus_cap=DEFAULT_BONUS_CAP):
    """Sample-level reward of a verdict: 0 unless its status is `correct`; then 1, plus
    clip(log2(speedup), 0, bonus_cap) when enable_speed_bonus (the trainer's gate) is on
    and the verdict was timed."""
    if not isinstance(verdict, dict) or verdict.get("status") != "correct":
        return 0.0
    bonus = speed_bonus(speedup_of(verdict), bonus_cap) if enable_speed_bonus else 0.0
    return 1.0 + bonus
