"""The trainer backend (`python -m kz_train`, docs/train-protocol.md) as a process: protocol
edge cases (malformed frames, unknown ops, bad fields, bad model paths: an error frame each,
never a traceback on stdout, and the process stays usable) and the model math on a tiny
random Llama made here (generate, score, train_step with KL, sft, LoRA, atomic save)."""

import json
import math
import os
import struct

import pytest

from kz_train.client import TrainerProcess

transformers = pytest.importorskip("transformers")


class Backend(TrainerProcess):
    """Fails the test (instead of raising) on a reply that is not ok."""

    def ok(self, op: str, **fields) -> dict:
        reply = self.call(op, **fields)
        assert reply["ok"], reply
        return reply


@pytest.fixture
def backend():
    b = Backend()
    yield b
    b.close()


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    """A 2-layer Llama (hidden 32) with a word-level tokenizer, saved as safetensors."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
    words = "def return x y relu add kernel the a of to ( ) : + * = 0 1 2".split()
    vocab = {w: i for i, w in enumerate(["<unk>", "<s>", "</s>"] + words)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="<s>",
                                   eos_token="</s>", pad_token="</s>")
    fast.chat_template = "{% for m in messages %}{{ m['content'] }} {% endfor %}{% if add_generation_prompt %}: {% endif %}"
    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(vocab_size=len(vocab), hidden_size=32, intermediate_size=64,
                                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                         max_position_embeddings=64, bos_token_id=1, eos_token_id=2,
                                         pad_token_id=2))
    path = tmp_path_factory.mktemp("tiny") / "model"
    model.save_pretrained(path)
    fast.save_pretrained(path)
    return str(path)


def test_hello_reports_protocol_and_versions(backend):
    r = backend.ok("hello")
    assert r["protocol"] == 1 and r["backend"] == "kz_train"
    assert r["versions"]["torch"] and r["versions"]["transformers"]
    assert r["device"] in ("cpu", "cuda")


def test_malformed_requests_get_error_frames_and_the_process_stays_usable(backend):
    backend.send_body(b"{not json")
    assert backend.recv()["error"]["kind"] == "protocol"
    backend.send_body(b"[1, 2]")
    assert "not a JSON object" in backend.recv()["error"]["message"]
    backend.send_body(b"\xff\xfe")
    assert backend.recv()["error"]["kind"] == "protocol"
    assert backend.call("frobnicate")["error"]["kind"] == "protocol"
    backend.send_body(json.dumps({"protocol": 99, "op": "hello", "id": 5}).encode())
    r = backend.recv()
    assert not r["ok"] and "unsupported protocol 99" in r["error"]["message"] and r["id"] == 5
    assert backend.call("load")["error"] == {"kind": "protocol", "message": "missing field 'model'"}
    assert "must be str" in backend.call("load", model=3)["error"]["message"]
    backend.ok("hello")


def test_oversized_frame_is_answered_then_the_process_exits(backend):
    backend.send_raw(struct.pack(">I", 0x7FFFFFFF))
    r = backend.recv()
    assert not r["ok"] and "exceeds" in r["error"]["message"]
    assert backend.proc.wait(timeout=30) == 2


def test_ops_before_load_say_not_loaded(backend):
    for op in ("generate", "score", "train_step", "sft", "save"):
        assert backend.call(op, prompts=["x"], samples=[], path="/tmp/x")["error"]["kind"] == "not_loaded"


def test_bad_model_paths_are_load_errors(backend, tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "empty").mkdir()
    from transformers import ViTConfig
    ViTConfig(hidden_size=8, num_hidden_layers=1, num_attention_heads=2, intermediate_size=8).save_pretrained(
        tmp_path / "vit")
    cases = {str(tmp_path / "missing"): "does not exist", str(tmp_path / "notes.txt"): "not a .gguf file",
             str(tmp_path / "empty"): "no config.json", str(tmp_path / "vit"): "not a causal LM"}
    for path, words in cases.items():
        r = backend.call("load", model=path)
        assert not r["ok"] and r["error"]["kind"] == "load_error", r
        assert words in r["error"]["message"], r
    backend.ok("hello")


def _token_samples(gen):
    return [{"prompt_ids": gen["prompt_ids"][s["prompt_index"]], "completion_ids": s["token_ids"]}
            for s in gen["samples"]]


def _max_diff(a, b):
    assert [len(x) for x in a] == [len(y) for y in b]
    return max(abs(p - q) for x, y in zip(a, b) for p, q in zip(x, y))


def test_tiny_model_generate_score_train_sft_save_reload(backend, tiny_model, tmp_path):
    load = backend.ok("load", model=tiny_model, device="cpu", reference=True, optimizer={"lr": 1e-2})
    assert load["format"] == "safetensors" and load["trainable_parameters"] == load["parameters"]
    gen = backend.ok("generate", prompts=["def relu ( x ) :", "add the kernel"], n=2, max_new_tokens=6, seed=3)
    assert len(gen["samples"]) == 4 and [s["prompt_index"] for s in gen["samples"]] == [0, 0, 1, 1]
    for s in gen["samples"]:
        assert len(s["token_ids"]) == len(s["logprobs"]) and s["finish_reason"] in ("stop", "length")
    again = backend.ok("generate", prompts=["def relu ( x ) :", "add the kernel"], n=2, max_new_tokens=6, seed=3)
    assert [s["token_ids"] for s in again["samples"]] == [s["token_ids"] for s in gen["samples"]], "seeded"
    samples = _token_samples(gen)
    before = backend.ok("score", samples=samples)["logprobs"]
    assert _max_diff(before, [s["logprobs"] for s in gen["samples"]]) < 1e-4
    step_samples = [{**s, "advantage": a, "old_logprobs": g["logprobs"]}
                    for s, a, g in zip(samples, [1.0, -1.0, 0.5, -0.5], gen["samples"])]
    step = backend.ok("train_step", samples=step_samples, micro_batch_size=3, kl_coef=0.1)
    assert math.isfinite(step["loss"]) and step["grad_norm"] > 0 and step["micro_batches"] == 2
    assert step["kl"] == pytest.approx(0.0, abs=1e-6), "the policy is the reference before the step"
    assert step["tokens"] == sum(len(s["completion_ids"]) for s in samples)
    assert step["timings"]["model_s"] <= step["timings"]["total_s"]
    after = backend.ok("score", samples=samples)["logprobs"]
    assert _max_diff(before, after) > 1e-4
    step2 = backend.ok("train_step", samples=step_samples, kl_coef=0.1, clip_eps=0.01)
    assert step2["kl"] > 0 and step2["clip_fraction"] > 0, "stale old_logprobs: ratios leave the clip range"
    bad = backend.call("train_step", samples=[{**step_samples[0], "old_logprobs": [0.0]}])
    assert bad["error"]["kind"] == "invalid_request"
    sft = backend.ok("sft", samples=[{"prompt": "def relu ( x ) :", "completion": "return x * ( x + 0 )"}])
    assert math.isfinite(sft["loss"]) and sft["tokens"] == 9, "8 words and EOS"
    ckpt = str(tmp_path / "ckpt")
    backend.ok("save", path=ckpt, optimizer=True)
    saved = backend.ok("score", samples=samples)["logprobs"]
    fresh = Backend()
    try:
        reload = fresh.ok("load", model=ckpt, device="cpu")
        assert reload["steps"] == 3 and reload["optimizer_restored"]
        assert _max_diff(saved, fresh.ok("score", samples=samples)["logprobs"]) <= 1e-6
    finally:
        fresh.close()


def test_conversations_are_rendered_whole_and_malformed_ones_refused(backend, tiny_model):
    """Multi-turn refinement's later turns: a conversation's prompt holds every message, in
    order, through the chat template; a malformed conversation is an invalid_request."""
    backend.ok("load", model=tiny_model, device="cpu")
    one = backend.ok("generate", prompts=["def relu ( x ) :"], chat=True, max_new_tokens=2, temperature=0)
    conv = [{"role": "user", "content": "def relu ( x ) :"}, {"role": "assistant", "content": "return x"},
            {"role": "user", "content": "the kernel"}]
    two = backend.ok("generate", prompts=[{"messages": conv}], max_new_tokens=2, temperature=0)
    p1, p2 = one["prompt_ids"][0], two["prompt_ids"][0]
    assert len(p2) > len(p1) and p2[:len(p1) - 1] == p1[:-1], (p1, p2)  # the first message leads
    for bad in ([], [{"role": "user"}], [{"role": "wizard", "content": "x"}],
                [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}]):
        reply = backend.call("generate", prompts=[{"messages": bad}], max_new_tokens=2)
        assert reply["error"]["kind"] == "invalid_request", (bad, reply)
    backend.ok("generate", prompts=[{"messages": conv}], max_new_tokens=1)  # still usable


def test_failing_save_leaves_the_previous_checkpoint(tiny_model, tmp_path):
    ckpt = str(tmp_path / "ckpt")
    first = Backend()
    try:
        first.ok("load", model=tiny_model, device="cpu")
        first.ok("save", path=ckpt)
    finally:
        first.close()
    failing = Backend(env={"KZ_TRAIN_FAULT": "save"})
    try:
        failing.ok("load", model=ckpt, device="cpu")
        failing.ok("sft", samples=[{"prompt": "def", "completion": "return x"}])
        r = failing.call("save", path=ckpt)
        assert r["error"]["kind"] == "save_error" and "No space left" in r["error"]["message"]
        assert not os.path.exists(ckpt + ".tmp")
        failing.ok("hello")
    finally:
        failing.close()
    check = Backend()
    try:
        assert check.ok("load", model=ckpt, device="cpu")["steps"] == 0, "the checkpoint before the failed save"
    finally:
        check.close()


def test_lora_trains_only_the_adapter_and_reloads(backend, tiny_model, tmp_path):
    pytest.importorskip("peft")
    load = backend.ok("load", model=tiny_model, device="cpu", optimizer={"lr": 1e-2},
                      lora={"r": 4, "alpha": 8, "target_modules": ["q_proj", "v_proj"]})
    assert 0 < load["trainable_parameters"] < load["parameters"] // 2
    samples = [{"prompt": "def relu ( x ) :", "completion": "return x"}]
    before = backend.ok("score", samples=samples)["logprobs"]
    backend.ok("sft", samples=samples)
    backend.ok("train_step", samples=[{**samples[0], "advantage": 1.0}], kl_coef=0.05)
    after = backend.ok("score", samples=samples)["logprobs"]
    assert _max_diff(before, after) > 1e-5
    ckpt = str(tmp_path / "lora")
    backend.ok("save", path=ckpt)
    assert os.path.exists(os.path.join(ckpt, "adapter_config.json"))
    fresh = Backend()
    try:
        reload = fresh.ok("load", model=ckpt, device="cpu")
        assert reload["lora"] and reload["steps"] == 2
        assert _max_diff(after, fresh.ok("score", samples=samples)["logprobs"]) <= 1e-6
    finally:
        fresh.close()
