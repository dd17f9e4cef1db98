"""Python client of `kz serve` and a verl reward adapter (docs/client.md).

    from kz_client import Client, KzError
    kz = Client("http://127.0.0.1:8470", client_name="rl-run-17")
    verdict = kz.verify(task_src, candidate_src, options={"trials": 1})

The verl adapter is `kz_client.verl` (compute_score, compute_score_batch).
"""

from kz_client.client import TERMINAL_STATES, Client, KzError
from kz_client.reward import extract_code, shape_reward, speed_bonus, task_source

__all__ = ["Client", "KzError", "TERMINAL_STATES", "extract_code", "shape_reward", "speed_bonus",
           "task_source"]
