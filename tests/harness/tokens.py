"""Token ids and logprobs for the test chat server, in the shapes vLLM and SGLang give them.

A deterministic toy tokenizer: a token is a UTF-8 byte, its id the byte's
value. The prompt is the request's messages rendered as a chat template would
(``render``: images as ``<image>``, an assistant turn closed by an end marker),
the completion the tool call as JSON plus that marker, so a history rendered
unchanged makes each prompt extend the previous prompt and completion. The shapes follow the servers' OpenAI-compatible chat replies:

- ``vllm``: asked with ``return_token_ids`` and ``logprobs``; ``prompt_token_ids`` on the
  response, ``token_ids`` and ``logprobs.content`` on the choice;
- ``vllm-choice``: the same with ``prompt_token_ids`` on the choice;
- ``vllm-as-ids``: no ``token_ids``; the logprobs' tokens read ``token_id:N``
  (vLLM's ``--return-tokens-as-token-ids``);
- ``sglang``: asked with ``return_prompt_token_ids``, ``return_meta_info`` and ``logprobs``;
  ``prompt_token_ids`` and ``meta_info.output_token_logprobs`` (``[logprob, id, text]``) on the choice;
- ``always``: vLLM's fields whether asked or not;
- ``short-logprobs``: vLLM's, one logprob short;
- ``garbage``: vLLM's fields holding what are not lists of integers.
"""

from __future__ import annotations

import json
from typing import Any

SHAPES = ("vllm", "vllm-choice", "vllm-as-ids", "sglang", "always", "short-logprobs", "garbage")
END = "<|end|>"


def render(messages: list[dict[str, Any]]) -> str:
    """The prompt text of a request's messages (what the toy chat template makes of them)."""
    out = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            text = "".join(p.get("text", "") if p.get("type") == "text" else "<image>" for p in content)
        else:
            text = content or ""
        for call in message.get("tool_calls") or []:
            text += json.dumps(call["function"], sort_keys=True)
        if message["role"] == "assistant":
            text += END
        out.append(f"<|{message['role']}|>{text}")
    return "".join(out) + "<|assistant|>"


def tokenize(text: str) -> list[int]:
    return list(text.encode("utf-8"))


def logprobs_for(n: int, request: int) -> list[float]:
    """Distinct per request and position, deterministic."""
    return [-round(((i * 7 + request * 3) % 23) / 16 + 0.001, 6) for i in range(n)]


def add_tokens(shape: str, body: dict[str, Any], reply: dict[str, Any], request: int) -> dict[str, Any] | None:
    """Put ``shape``'s token fields into ``reply`` (when the request asked for them); returns what was sent."""
    logprobs_asked = body.get("logprobs") is True
    if shape == "sglang":
        asked = logprobs_asked and body.get("return_prompt_token_ids") is True and body.get("return_meta_info")
    else:
        asked = shape == "always" or (logprobs_asked and body.get("return_token_ids") is True)
    if not asked:
        return None
    choice = reply["choices"][0]
    prompt = tokenize(render(body["messages"]))
    completion = tokenize(json.dumps(choice["message"]["tool_calls"][0]["function"], sort_keys=True) + END)
    logprobs = logprobs_for(len(completion), request)
    as_ids = shape == "vllm-as-ids"
    content = [
        {"token": f"token_id:{t}" if as_ids else chr(t), "logprob": lp, "bytes": [t], "top_logprobs": []}
        for t, lp in zip(completion, logprobs)
    ]
    if shape == "short-logprobs":
        content = content[:-1]
    choice["logprobs"] = {"content": content}
    if shape == "sglang":
        choice["prompt_token_ids"] = prompt
        choice["meta_info"] = {
            "id": reply["id"],
            "prompt_tokens": len(prompt),
            "completion_tokens": len(completion),
            "output_token_logprobs": [[lp, t, chr(t)] for t, lp in zip(completion, logprobs)],
        }
    elif shape == "vllm-choice":
        choice["prompt_token_ids"] = prompt
        choice["token_ids"] = completion
    elif shape == "garbage":
        reply["prompt_token_ids"] = [1, "two"]
        choice["token_ids"] = "not ids"
    else:
        reply["prompt_token_ids"] = prompt
        if not as_ids:
            choice["token_ids"] = completion
    return {
        "prompt_token_ids": prompt,
        "completion_token_ids": completion,
        "logprobs": [c["logprob"] for c in content],
    }
