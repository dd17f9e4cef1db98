"""Loading a policy's model: a Hugging Face directory (safetensors) or a GGUF file through
transformers' GGUF loader, its tokenizer, and LoRA adapters (peft). Errors are OpError(load_error).
"""

import contextlib
import os

import torch

from .errors import OpError

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def clear_gguf_marker(model) -> None:
    """transformers loads a GGUF file dequantized (real fp32 tensors) but keeps the GGUF
    quantizer on the model (`hf_quantizer`, `is_quantized`, `quantization_method`,
    `config.quantization_config`, `config._is_quantized`), so `save_pretrained` refuses it and
    `.to(dtype)` is refused too. The weights are ordinary tensors: clear the marker."""
    quantizer = getattr(model, "hf_quantizer", None)
    if quantizer is not None:
        quantizer.remove_quantization_config(model)
    for attr in ("hf_quantizer", "quantization_method"):
        if attr in vars(model):
            delattr(model, attr)
    model.is_quantized = False
    for module in model.modules():
        config = getattr(module, "config", None)
        if config is not None:
            if hasattr(config, "quantization_config"):
                with contextlib.suppress(AttributeError):
                    del config.quantization_config
            config._is_quantized = False


def load_base(path: str, dtype_name: str):
    """(model, tokenizer, format) from a Hugging Face directory or a GGUF file; OpError(load_error)
    for a missing path, a file that is not GGUF, or a model that is not a causal LM."""
    from transformers import AutoConfig, AutoModelForCausalLM
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING
    if not os.path.exists(path):
        raise OpError("load_error", f"model path {path} does not exist")
    if os.path.isfile(path):
        if not path.endswith(".gguf"):
            raise OpError("load_error", f"model path {path} is a file but not a .gguf file; "
                                        "give a Hugging Face model directory or a GGUF file")
        folder, gguf, fmt = os.path.dirname(os.path.abspath(path)), os.path.basename(path), "gguf"
    else:
        if not os.path.isfile(os.path.join(path, "config.json")):
            raise OpError("load_error", f"{path} has no config.json: not a Hugging Face model directory")
        folder, gguf, fmt = path, None, "safetensors"
    kwargs = {"gguf_file": gguf} if gguf else {}
    if not gguf:  # (reading a GGUF's config parses the whole file again: from_pretrained checks)
        try:
            config = AutoConfig.from_pretrained(folder)
        except Exception as exc:  # noqa: BLE001 - any reader failure is a load_error
            raise OpError("load_error", f"cannot read the model config of {path}: {exc}") from exc
        if type(config) not in MODEL_FOR_CAUSAL_LM_MAPPING:
            raise OpError("load_error", f"{path} is not a causal LM (model_type {config.model_type!r}, "
                                        f"architectures {getattr(config, 'architectures', None)})")
    try:
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=DTYPES[dtype_name], **kwargs)
    except Exception as exc:  # noqa: BLE001
        raise OpError("load_error", f"cannot load the weights of {path}: {exc}") from exc
    if gguf:
        clear_gguf_marker(model)
        model.to(DTYPES[dtype_name])
    tokenizer = load_tokenizer(folder, gguf)
    if tokenizer is None:
        raise OpError("load_error", f"{path} has no tokenizer")
    return model, tokenizer, fmt

def load_tokenizer(folder: str, gguf):
    """The tokenizer of `folder` (or of its GGUF file), its pad token set; None if there is none."""
    from transformers import AutoTokenizer
    try:
        tok = AutoTokenizer.from_pretrained(folder, **({"gguf_file": gguf} if gguf else {}))
    except Exception:  # noqa: BLE001
        return None
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    return tok

def with_lora(model, lora: dict, adapter_dir):
    """`model` wrapped in a trainable LoRA adapter: loaded from `adapter_dir`, else new from `lora`."""
    try:
        from peft import LoraConfig, PeftModel, get_peft_model
    except ImportError as exc:
        raise OpError("load_error", f"LoRA asked for but peft is not installed: {exc}") from exc
    if adapter_dir:
        return PeftModel.from_pretrained(model, adapter_dir, is_trainable=True)
    config = LoraConfig(r=int(lora.get("r", 8)), lora_alpha=int(lora.get("alpha", 16)),
                        lora_dropout=float(lora.get("dropout", 0.0)),
                        target_modules=lora.get("target_modules") or ["q_proj", "v_proj"],
                        task_type="CAUSAL_LM")
    try:
        return get_peft_model(model, config)
    except ValueError as exc:
        raise OpError("load_error", f"LoRA: {exc}") from exc
