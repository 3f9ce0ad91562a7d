"""A real Hugging Face tokenizer built here, for the adapters' tests: no model can be downloaded.

A byte-level BPE (any text encodes, and decodes back) trained on the episode's own text with the
``tokenizers`` library, with Qwen's special tokens, wrapped as a ``PreTrainedTokenizerFast``.
"""

from __future__ import annotations

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

END = "<|im_end|>"
SPECIALS = ["<|endoftext|>", "<|im_start|>", END]
#: Qwen's ChatML template without tools: what ``apply_chat_template`` renders for plain-text messages.
CHATML = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)
LLAMA3_SPECIALS = ("<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>")
#: Llama 3's template without tools or dates: each turn's content trimmed, ended by <|eot_id|>.
LLAMA3 = (
    "{%- for message in messages %}"
    "{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + message['content'] | trim + '<|eot_id|>' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{%- endif %}"
)


def build_tokenizer(
    corpus: list[str], chat_template: str = CHATML, specials: tuple[str, ...] = (), eos: str = END
) -> PreTrainedTokenizerFast:
    """The tokenizer, trained on ``corpus``, with ``chat_template``, any extra special tokens, and ``eos``."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=2000,
        special_tokens=[*SPECIALS, *specials],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(corpus, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token=eos, pad_token="<|endoftext|>")
    fast.chat_template = chat_template
    return fast
