"""verl reward adapter: scores rollouts by sending them to `kz serve` (docs/client.md).

verl custom reward function (reward_model.reward_manager=naive):
    compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs) -> float
batch variant (reward_model.reward_manager=batch; one /v1/batch per rollout batch):
    compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos, **kwargs) -> [float]

Configuration: keyword arguments (verl's custom_reward_function.reward_kwargs) over the
environment: url (KZ_URL, required), client (KZ_CLIENT, default "verl"), timeout (KZ_TIMEOUT:
seconds to wait for one call's verdicts, default 900), backend, options, priority,
enable_speed_bonus, bonus_cap, poll. A server or network error never raises into the
trainer: the samples concerned score 0.0 and the error is logged once. A missing URL raises.
"""

import logging
import os
import sys
import threading
from pathlib import Path

try:
    from kz_client.client import Client, KzError
    from kz_client.reward import DEFAULT_BONUS_CAP, extract_code, shape_reward, task_source
except ImportError:  # loaded by path (verl's custom_reward_function.path), python/ not on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from kz_client.client import Client, KzError
    from kz_client.reward import DEFAULT_BONUS_CAP, extract_code, shape_reward, task_source

log = logging.getLogger("kz_client.verl")
DEFAULT_TIMEOUT = 900.0
DEFAULT_CLIENT = "verl"
_KNOWN = {"url", "client", "timeout", "backend", "options", "priority", "enable_speed_bonus",
          "bonus_cap", "poll"}

_clients = {}
_clients_lock = threading.Lock()
_logged = set()


class KzConfigError(ValueError):
    """The adapter is misconfigured (no server URL, a bad value): raised, not scored."""


def _log_once(key, message, *args):
    """Logs a warning the first time `key` is seen in this process."""
    if key in _logged:
        return
    _logged.add(key)
    log.warning("kz reward: " + message + " (logged once; affected samples score 0.0)", *args)


def _config(kwargs):
    """Keyword arguments over environment variables; raises KzConfigError when unusable."""
    cfg = {k: v for k, v in kwargs.items() if k in _KNOWN}
    cfg.setdefault("url", os.environ.get("KZ_URL"))
    if not cfg["url"]:
        raise KzConfigError("kz reward: no kz serve URL: set KZ_URL (e.g. http://127.0.0.1:8470) "
                            "or pass url= in custom_reward_function.reward_kwargs")
    cfg.setdefault("client", os.environ.get("KZ_CLIENT") or DEFAULT_CLIENT)
    try:
        cfg["timeout"] = float(cfg.get("timeout") or os.environ.get("KZ_TIMEOUT") or DEFAULT_TIMEOUT)
        cfg["priority"] = int(cfg.get("priority") or 0)
        cfg["bonus_cap"] = float(cfg.get("bonus_cap", DEFAULT_BONUS_CAP))
        cfg["poll"] = float(cfg.get("poll") or 0.5)
    except (TypeError, ValueError) as e:
        raise KzConfigError(f"kz reward: bad setting: {e}") from e
    if cfg.get("options") is not None and not isinstance(cfg["options"], dict):
        cfg["options"] = dict(cfg["options"])  # e.g. an OmegaConf DictConfig
    cfg["enable_speed_bonus"] = bool(cfg.get("enable_speed_bonus", False))
    return cfg


def _client(cfg):
    """One Client per (url, client name) in this process, shared between threads."""
    key = (cfg["url"], cfg["client"])
    with _clients_lock:
        if key not in _clients:
            try:
                _clients[key] = Client(cfg["url"], client_name=cfg["client"])
            except ValueError as e:
                raise KzConfigError(str(e)) from e
        return _clients[key]


def _verdicts(client, samples, cfg):
    """Verdicts of `samples` (None for a sample that got none), through one /v1/batch.
    Jobs still unfinished after cfg["timeout"] are cancelled (best effort)."""
    entries = client.submit_batch(samples, priority=cfg["priority"])
    for e in entries:
        if isinstance(e, KzError):
            _log_once(("refused", e.reason), "kz serve refused a sample: %s", e.reason)
    ids = [e for e in entries if isinstance(e, str)]
    try:
        jobs = client.wait(ids, poll=cfg["poll"], timeout=cfg["timeout"]) if ids else {}
    except KzError as e:
        if e.status is not None or not isinstance(e.payload, dict):
            raise
        _log_once("timeout", "%s; cancelling the rest", e.reason)
        jobs = e.payload
        for job_id, job in jobs.items():
            if job.get("state") not in ("done", "failed", "cancelled"):
                try:
                    client.cancel(job_id)
                except KzError:
                    pass
    out = []
    for e in entries:
        job = jobs.get(e) if isinstance(e, str) else None
        if job is not None and job.get("state") == "failed":
            _log_once(("failed", job.get("error")), "job %s failed in kz serve: %s", e, job.get("error"))
        out.append(job.get("verdict") if job is not None and job.get("state") == "done" else None)
    return out


def _flag_verdict(verdict):
    """Logs (once per status) verdicts that point at a setup problem, not the model."""
    status = (verdict or {}).get("status")
    if status in ("invalid_task", "not_run"):
        _log_once(("status", status), "verdict %s: %s", status, verdict.get("reason"))


def compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos=None, **kwargs):
    """Rewards of a rollout batch (verl's BatchRewardManager signature), one float per
    sample; see the module docstring and docs/client.md."""
    cfg = _config(kwargs)
    n = len(solution_strs)
    extra_infos = [None] * n if extra_infos is None else extra_infos
    scores = [0.0] * n
    samples, where = [], []
    for i in range(n):
        code = extract_code(solution_strs[i])
        task = task_source(ground_truths[i] if ground_truths is not None else None, extra_infos[i])
        if task is None:
            _log_once("no_task", "no task source in ground_truth or extra_info['task'] (sample %d)", i)
        if code is None or task is None:
            continue
        samples.append(Client.sample(task, code, cfg.get("backend"), cfg.get("options")))
        where.append(i)
    if not samples:
        return scores
    try:
        verdicts = _verdicts(_client(cfg), samples, cfg)
    except KzError as e:
        _log_once(("error", e.status), "kz serve error: %s", e)
        return scores
    for i, verdict in zip(where, verdicts):
        _flag_verdict(verdict)
        scores[i] = shape_reward(verdict, cfg["enable_speed_bonus"], cfg["bonus_cap"])
    return scores


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    """Reward of one rollout (verl's custom reward function signature): a float."""
    return compute_score_batch([data_source], [solution_str], [ground_truth], [extra_info], **kwargs)[0]
