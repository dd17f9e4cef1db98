"""A tiny random Llama with a word-level tokenizer and a chat template (kz train's e2e)."""
import sys
import torch
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
words = "```python ``` import torch class ModelNew def forward return x y relu add kernel the a of to ( ) : + * = 0 1 2".split()
vocab = {w: i for i, w in enumerate(["<unk>", "<s>", "</s>"] + words)}
tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="<s>", eos_token="</s>", pad_token="</s>")
fast.chat_template = "{% for m in messages %}{{ m['content'] }} {% endfor %}{% if add_generation_prompt %}: {% endif %}"
torch.manual_seed(0)
model = LlamaForCausalLM(LlamaConfig(vocab_size=len(vocab), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                     num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096,
                                     bos_token_id=1, eos_token_id=2, pad_token_id=2))
model.save_pretrained(sys.argv[1])
fast.save_pretrained(sys.argv[1])
