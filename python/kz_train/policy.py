"""The policy: one Hugging Face causal LM with its tokenizer and optimizer, and the model
math of the trainer backend's ops (docs/train-protocol.md). Nothing here decides what to
train on: samples, advantages and schedules come from the C++ control plane.
"""

import copy
import json
import math
import os
import shutil
import time

import torch

from .errors import OpError, field
from .loading import DTYPES, load_base, load_tokenizer, with_lora

META_FILE = "kz_train.json"        # written into every checkpoint
OPTIMIZER_FILE = "optimizer.pt"
FAULT_ENV = "KZ_TRAIN_FAULT"       # test hooks: "save" fails a save after the weights are written;
                                   # "crash_step_once:PATH" kills the process in its first train_step
                                   # while PATH does not exist (it creates PATH first)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _int_list(value, what: str) -> list:
    if not isinstance(value, list) or not all(isinstance(t, int) and not isinstance(t, bool) for t in value):
        raise OpError("protocol", f"{what} must be a list of token ids")
    return value


def _float_list(value, what: str, length: int) -> list:
    if not isinstance(value, list) or len(value) != length or \
            not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value):
        raise OpError("invalid_request", f"{what} must be a list of {length} numbers")
    return [float(x) for x in value]


def _crash_once_hook() -> None:
    """The "crash_step_once:PATH" test hook (FAULT_ENV): a crash mid-step, once per PATH."""
    fault = os.environ.get(FAULT_ENV, "")
    if fault.startswith("crash_step_once:") and not os.path.exists(fault.split(":", 1)[1]):
        open(fault.split(":", 1)[1], "w").close()
        os._exit(70)


class Policy:
    def __init__(self):
        self.model = None
        self.tokenizer = None
        self.reference = None        # frozen copy for the KL term (full fine-tuning)
        self.optimizer = None
        self.device = torch.device("cpu")
        self.lora = None
        self.source = None           # {"model": path, "format": ...} of the base weights
        self.steps = 0
        self.max_grad_norm = 1.0
        self.autocast = False

    # ---------------------------------------------------------------- load
    def load(self, request: dict) -> dict:
        start = time.perf_counter()
        path = field(request, "model", str, required=True)
        dtype_name = field(request, "dtype", str, "float32")
        if dtype_name not in DTYPES:
            raise OpError("protocol", f"dtype {dtype_name!r} is not one of {', '.join(DTYPES)}")
        device_name = field(request, "device", str, "auto")
        if device_name == "auto":
            device_name = "cuda" if torch.cuda.is_available() else "cpu"
        if device_name.startswith("cuda") and not torch.cuda.is_available():
            raise OpError("load_error", f"device {device_name!r} asked for but no GPU is visible")
        lora = field(request, "lora", dict)
        seed = field(request, "seed", int, 0)
        torch.manual_seed(seed)

        meta = {}
        if not os.path.exists(path) and os.path.isdir(path + ".old"):
            path = path + ".old"  # a save was interrupted between its two renames
        if os.path.isdir(path) and os.path.isfile(os.path.join(path, META_FILE)):
            with open(os.path.join(path, META_FILE)) as f:
                meta = json.load(f)
        adapter_dir = None
        if meta.get("lora"):
            adapter_dir, lora = path, meta["lora"]
            base = meta["base"]
            model, tokenizer, fmt = load_base(base["model"], dtype_name)
            tokenizer = load_tokenizer(path, None) or tokenizer
        else:
            model, tokenizer, fmt = load_base(path, dtype_name)
            base = {"model": path, "format": fmt}
        model.to(device_name)
        self.device = next(model.parameters()).device
        if lora:
            model = with_lora(model, lora, adapter_dir)
        model.eval()  # no dropout: the logprobs of generate, score and train_step agree
        self.model, self.tokenizer, self.lora, self.source = model, tokenizer, lora, base
        self.steps = int(meta.get("steps", 0))
        self.reference = None
        if field(request, "reference", bool, False) and not lora:
            self.reference = copy.deepcopy(model).requires_grad_(False)
        self.autocast = field(request, "autocast", bool, self.device.type == "cuda")
        self.max_grad_norm = field(request, "max_grad_norm", float, 1.0)
        opt = field(request, "optimizer", dict, {})
        params = [p for p in model.parameters() if p.requires_grad]
        # fused: one kernel over all parameters instead of a loop over tensors (docs/training.md)
        self.optimizer = torch.optim.AdamW(
            params, lr=float(opt.get("lr", 1e-5)), weight_decay=float(opt.get("weight_decay", 0.0)),
            betas=tuple(opt.get("betas", (0.9, 0.999))), eps=float(opt.get("eps", 1e-8)),
            fused=all(p.dtype in (torch.float32, torch.float16, torch.bfloat16) for p in params))
        restored = False
        state_file = os.path.join(path, OPTIMIZER_FILE)
        if os.path.isdir(path) and os.path.isfile(state_file):
            self.optimizer.load_state_dict(torch.load(state_file, map_location=self.device))
            restored = True
        return {"model": path, "format": fmt, "base": base, "device": str(self.device),
                "dtype": dtype_name, "lora": lora, "steps": self.steps,
                "parameters": sum(p.numel() for p in model.parameters()),
                "trainable_parameters": sum(p.numel() for p in params),
                "optimizer_restored": restored, "reference": self.reference is not None or bool(lora),
                "seconds": time.perf_counter() - start}

    def _need_model(self):
        if self.model is None:
            raise OpError("not_loaded", "no model loaded: send a load request first")

    # ---------------------------------------------------------------- tokens
    @staticmethod
    def _ids_or_text(sample: dict, key: str):
        """(token ids, None) from KEY_ids, else (None, text) from KEY."""
        if f"{key}_ids" in sample:
            return _int_list(sample[f"{key}_ids"], f"{key}_ids"), None
        text = sample.get(key)
        if not isinstance(text, str):
            raise OpError("protocol", f"a sample needs {key} (text) or {key}_ids")
        return None, text

    def _prompt_ids(self, sample: dict, chat: bool) -> list:
        if "messages" in sample:  # a whole conversation (multi-turn refinement): always chat
            return self._conversation_ids(sample["messages"])
        ids, text = self._ids_or_text(sample, "prompt")
        if ids is not None:
            return ids
        if chat:
            text = self.tokenizer.apply_chat_template([{"role": "user", "content": text}],
                                                      tokenize=False, add_generation_prompt=True)
            return self.tokenizer(text, add_special_tokens=False)["input_ids"]
        return self.tokenizer(text)["input_ids"]

    def _conversation_ids(self, messages) -> list:
        ok = isinstance(messages, list) and messages and all(
            isinstance(m, dict) and m.get("role") in ("system", "user", "assistant")
            and isinstance(m.get("content"), str) for m in messages)
        if not ok or messages[-1]["role"] != "user":
            raise OpError("invalid_request", "messages must be a non-empty list of {role: system|user|assistant, "
                                             "content: string} ending with a user message")
        text = self.tokenizer.apply_chat_template([{"role": m["role"], "content": m["content"]} for m in messages],
                                                  tokenize=False, add_generation_prompt=True)
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def _completion_ids(self, sample: dict, add_eos: bool) -> list:
        ids, text = self._ids_or_text(sample, "completion")
        if ids is not None:
            return ids
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        return ids + [self.tokenizer.eos_token_id] if add_eos else ids

    def _samples(self, request: dict, add_eos: bool = False):
        samples = field(request, "samples", list, required=True)
        if not samples:
            raise OpError("invalid_request", "samples is empty")
        chat = field(request, "chat", bool, False)
        out = []
        for i, s in enumerate(samples):
            if not isinstance(s, dict):
                raise OpError("protocol", f"samples[{i}] is not an object")
            p, c = self._prompt_ids(s, chat), self._completion_ids(s, add_eos)
            if not p or not c:
                raise OpError("invalid_request", f"samples[{i}] has an empty prompt or completion")
            out.append((s, p, c))
        return out

    # ---------------------------------------------------------------- math
    def _completion_logprobs(self, model, batch, temperature: float):
        """Per-token logprobs of each completion given its prompt: [B, Cmax] and its mask."""
        pad = self.tokenizer.pad_token_id or 0
        lengths = [len(p) + len(c) for _, p, c in batch]
        width, cmax = max(lengths), max(len(c) for _, _, c in batch)
        ids = torch.full((len(batch), width), pad, dtype=torch.long)
        attention = torch.zeros((len(batch), width), dtype=torch.long)
        index = torch.zeros((len(batch), cmax), dtype=torch.long)   # logit position per token
        mask = torch.zeros((len(batch), cmax), dtype=torch.float32)
        for row, (_, p, c) in enumerate(batch):
            ids[row, :len(p) + len(c)] = torch.tensor(p + c)
            attention[row, :len(p) + len(c)] = 1
            index[row, :len(c)] = torch.arange(len(p) - 1, len(p) + len(c) - 1)
            mask[row, :len(c)] = 1
        ids, attention = ids.to(self.device), attention.to(self.device)
        index, mask = index.to(self.device), mask.to(self.device)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=self.autocast and self.device.type == "cuda"):
            logits = model(input_ids=ids, attention_mask=attention).logits
        logits = logits.gather(1, index.unsqueeze(-1).expand(-1, -1, logits.shape[-1])).float()
        if temperature != 1.0:
            logits = logits / temperature
        targets = ids.gather(1, (index + 1).clamp(max=width - 1)) * mask.long()
        lp = logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1) - torch.logsumexp(logits, -1)
        return lp * mask, mask

    def _reference_logprobs(self, batch, temperature):
        with torch.no_grad():
            if self.lora:
                with self.model.disable_adapter():
                    return self._completion_logprobs(self.model, batch, temperature)[0]
            if self.reference is None:
                raise OpError("invalid_request", "kl_coef > 0 needs a reference: load with "
                                                 "\"reference\": true or send ref_logprobs")
            return self._completion_logprobs(self.reference, batch, temperature)[0]

    def _micro_batches(self, batch, size: int):
        if size < 1:
            raise OpError("protocol", "micro_batch_size must be >= 1")
        return [batch[i:i + size] for i in range(0, len(batch), size)]

    def _optimizer_step(self, lr) -> float:
        params = [p for p in self.model.parameters() if p.requires_grad]
        norm = torch.nn.utils.clip_grad_norm_(params, self.max_grad_norm if self.max_grad_norm > 0 else float("inf"))
        if lr is not None:
            for group in self.optimizer.param_groups:
                group["lr"] = lr
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.steps += 1
        return float(norm)

    # ---------------------------------------------------------------- ops
    def generate(self, request: dict) -> dict:
        self._need_model()
        start = time.perf_counter()
        prompts = field(request, "prompts", list, required=True)
        if not prompts:
            raise OpError("invalid_request", "prompts is empty")
        n = field(request, "n", int, 1)
        temperature = field(request, "temperature", float, 1.0)
        top_p = field(request, "top_p", float, 1.0)
        max_new = field(request, "max_new_tokens", int, 64)
        if n < 1 or max_new < 1 or temperature < 0 or not 0 < top_p <= 1:
            raise OpError("invalid_request", "need n >= 1, max_new_tokens >= 1, temperature >= 0, 0 < top_p <= 1")
        chat = field(request, "chat", bool, False)
        torch.manual_seed(field(request, "seed", int, 0))
        ids = [self._prompt_ids(p if isinstance(p, dict) else {"prompt": p}, chat) for p in prompts]
        pad, eos = self.tokenizer.pad_token_id, self.tokenizer.eos_token_id
        width = max(len(p) for p in ids)
        input_ids = torch.full((len(ids), width), pad, dtype=torch.long)
        attention = torch.zeros_like(input_ids)
        for row, p in enumerate(ids):  # left padding
            input_ids[row, width - len(p):] = torch.tensor(p)
            attention[row, width - len(p):] = 1
        sampling = temperature > 0
        kwargs = {"do_sample": sampling, "max_new_tokens": max_new, "num_return_sequences": n,
                  "pad_token_id": pad, "eos_token_id": eos, "return_dict_in_generate": True,
                  "output_logits": True}
        if sampling:
            kwargs.update(temperature=temperature, top_p=top_p, top_k=0)
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16,
                                             enabled=self.autocast and self.device.type == "cuda"):
            out = self.model.generate(input_ids=input_ids.to(self.device),
                                      attention_mask=attention.to(self.device), **kwargs)
        new = out.sequences[:, width:].cpu()
        logits = torch.stack(out.logits, 1).float()
        if sampling and temperature != 1.0:
            logits = logits / temperature
        lp = torch.log_softmax(logits, -1).gather(-1, new.to(logits.device).unsqueeze(-1)).squeeze(-1).cpu()
        samples = []
        for row in range(new.shape[0]):
            tokens = new[row].tolist()
            finish = "length"
            if eos in tokens:
                tokens, finish = tokens[:tokens.index(eos) + 1], "stop"
            samples.append({"prompt_index": row // n, "token_ids": tokens,
                            "text": self.tokenizer.decode(tokens, skip_special_tokens=True),
                            "logprobs": lp[row, :len(tokens)].tolist(), "finish_reason": finish})
        return {"samples": samples, "prompt_ids": ids,
                "tokens": sum(len(s["token_ids"]) for s in samples),
                "seconds": time.perf_counter() - start}

    def score(self, request: dict) -> dict:
        self._need_model()
        start = time.perf_counter()
        batch = self._samples(request)
        temperature = field(request, "temperature", float, 1.0)
        size = field(request, "micro_batch_size", int, 8)
        out = []
        with torch.no_grad():
            for mb in self._micro_batches(batch, size):
                lp, _ = self._completion_logprobs(self.model, mb, temperature)
                out += [lp[i, :len(c)].tolist() for i, (_, _, c) in enumerate(mb)]
        return {"logprobs": out, "seconds": time.perf_counter() - start}

    def train_step(self, request: dict) -> dict:
        """One clipped policy-gradient (GRPO) step: loss = token-mean over every completion
        token of the step of -min(r A, clip(r, 1-eps, 1+eps_high) A) + kl_coef * KL, with
        r = exp(logp - old_logp) per token, A the sample's advantage and KL the k3 estimator
        exp(ref - logp) - (ref - logp) - 1."""
        self._need_model()
        _crash_once_hook()
        t_start = time.perf_counter()
        batch = self._samples(request)
        eps = field(request, "clip_eps", float, 0.2)
        eps_high = field(request, "clip_eps_high", float, eps)
        kl_coef = field(request, "kl_coef", float, 0.0)
        temperature = field(request, "temperature", float, 1.0)
        size = field(request, "micro_batch_size", int, len(batch))
        lr = field(request, "lr", float)
        for i, (s, _, c) in enumerate(batch):
            a = s.get("advantage")
            if not isinstance(a, (int, float)) or isinstance(a, bool) or not math.isfinite(a):
                raise OpError("invalid_request", f"samples[{i}] needs a finite advantage")
            for key in ("old_logprobs", "ref_logprobs"):
                if s.get(key) is not None:
                    _float_list(s[key], f"samples[{i}].{key}", len(c))
        total_tokens = sum(len(c) for _, _, c in batch)
        model_s = ref_s = 0.0
        sums = {"loss": 0.0, "pg": 0.0, "kl": 0.0, "clipped": 0.0, "ratio": 0.0}
        self.model.zero_grad(set_to_none=True)
        for mb in self._micro_batches(batch, size):
            cmax = max(len(c) for _, _, c in mb)
            adv = torch.tensor([float(s["advantage"]) for s, _, _ in mb], device=self.device).unsqueeze(1)

            def padded(key, mb=mb, cmax=cmax):
                rows = [(s.get(key) or []) + [0.0] * (cmax - len(s.get(key) or [])) for s, _, _ in mb]
                return torch.tensor(rows, device=self.device)
            old = padded("old_logprobs") if all(s.get("old_logprobs") is not None for s, _, _ in mb) else None
            ref = None
            if kl_coef > 0:
                if all(s.get("ref_logprobs") is not None for s, _, _ in mb):
                    ref = padded("ref_logprobs")
                else:
                    _sync(self.device)
                    t = time.perf_counter()
                    ref = self._reference_logprobs(mb, temperature)
                    _sync(self.device)
                    ref_s += time.perf_counter() - t
            _sync(self.device)
            t = time.perf_counter()
            lp, mask = self._completion_logprobs(self.model, mb, temperature)
            old_lp = lp.detach() if old is None else old
            ratio = torch.exp(lp - old_lp)
            clipped = ratio.clamp(1 - eps, 1 + eps_high)
            pg = -torch.minimum(ratio * adv, clipped * adv)
            per_token = pg
            if ref is not None:
                delta = ref - lp
                kl = torch.exp(delta) - delta - 1
                per_token = per_token + kl_coef * kl
            loss = (per_token * mask).sum() / total_tokens
            loss.backward()
            _sync(self.device)
            model_s += time.perf_counter() - t
            with torch.no_grad():
                sums["loss"] += float(loss.detach())
                sums["pg"] += float((pg * mask).sum()) / total_tokens
                if ref is not None:
                    sums["kl"] += float((kl * mask).sum()) / total_tokens
                sums["clipped"] += float(((clipped * adv < ratio * adv).float() * mask).sum())
                sums["ratio"] += float((ratio.detach() * mask).sum())
        t = time.perf_counter()
        grad_norm = self._optimizer_step(lr)
        _sync(self.device)
        optimizer_s = time.perf_counter() - t
        total_s = time.perf_counter() - t_start
        return {"loss": sums["loss"], "pg_loss": sums["pg"], "kl": sums["kl"] if kl_coef > 0 else None,
                "grad_norm": grad_norm, "clip_fraction": sums["clipped"] / total_tokens,
                "ratio_mean": sums["ratio"] / total_tokens, "tokens": total_tokens,
                "samples": len(batch), "micro_batches": math.ceil(len(batch) / size), "step": self.steps,
                "timings": self._timings(total_s, model_s + ref_s, optimizer_s, ref_s)}

    @staticmethod
    def _timings(total_s, model_s, optimizer_s, ref_s=0.0) -> dict:
        """model_s: the model's forward and backward (and the reference's forward);
        overhead_s: everything else of the step (request checks, tensors, the optimizer)."""
        return {"total_s": total_s, "model_s": model_s, "reference_s": ref_s,
                "optimizer_s": optimizer_s, "overhead_s": total_s - model_s,
                "overhead_fraction": (total_s - model_s) / total_s if total_s > 0 else None}

    def sft(self, request: dict) -> dict:
        """One supervised step: token-mean negative log-likelihood of the completion tokens
        (the prompt's tokens carry no loss); completion text gets the EOS token appended
        unless add_eos is false."""
        self._need_model()
        t_start = time.perf_counter()
        batch = self._samples(request, add_eos=field(request, "add_eos", bool, True))
        size = field(request, "micro_batch_size", int, len(batch))
        lr = field(request, "lr", float)
        total_tokens = sum(len(c) for _, _, c in batch)
        model_s, loss_sum = 0.0, 0.0
        self.model.zero_grad(set_to_none=True)
        for mb in self._micro_batches(batch, size):
            _sync(self.device)
            t = time.perf_counter()
            lp, mask = self._completion_logprobs(self.model, mb, 1.0)
            loss = -(lp * mask).sum() / total_tokens
            loss.backward()
            _sync(self.device)
            model_s += time.perf_counter() - t
            loss_sum += float(loss.detach())
        t = time.perf_counter()
        grad_norm = self._optimizer_step(lr)
        optimizer_s = time.perf_counter() - t
        total_s = time.perf_counter() - t_start
        return {"loss": loss_sum, "grad_norm": grad_norm, "tokens": total_tokens, "samples": len(batch),
                "micro_batches": math.ceil(len(batch) / size), "step": self.steps,
                "timings": self._timings(total_s, model_s, optimizer_s)}

    def save(self, request: dict) -> dict:
        """Atomic: everything is written to PATH.tmp, then PATH (if any) is renamed to
        PATH.old, PATH.tmp to PATH, and PATH.old removed. A failure before the renames
        leaves PATH as it was; load falls back to PATH.old if a crash came between them."""
        self._need_model()
        start = time.perf_counter()
        path = os.path.abspath(field(request, "path", str, required=True))
        tmp, old = path + ".tmp", path + ".old"
        try:
            shutil.rmtree(tmp, ignore_errors=True)
            self.model.save_pretrained(tmp)
            self.tokenizer.save_pretrained(tmp)
            if os.environ.get(FAULT_ENV) == "save":
                raise OSError(28, "No space left on device (KZ_TRAIN_FAULT=save)")
            if field(request, "optimizer", bool, False):
                torch.save(self.optimizer.state_dict(), os.path.join(tmp, OPTIMIZER_FILE))
            meta = {"format": 1, "base": self.source, "lora": self.lora, "steps": self.steps}
            with open(os.path.join(tmp, META_FILE), "w") as f:
                json.dump(meta, f, indent=1)
            size = 0
            for name in os.listdir(tmp):
                with open(os.path.join(tmp, name), "rb") as f:
                    os.fsync(f.fileno())
                size += os.path.getsize(os.path.join(tmp, name))
            shutil.rmtree(old, ignore_errors=True)
            if os.path.exists(path):
                os.rename(path, old)
            os.rename(tmp, path)
            shutil.rmtree(old, ignore_errors=True)
        except OSError as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            raise OpError("save_error", f"saving to {path} failed ({exc}); the previous checkpoint "
                                        "there, if any, is unchanged") from exc
        return {"path": path, "bytes": size, "steps": self.steps, "seconds": time.perf_counter() - start}
