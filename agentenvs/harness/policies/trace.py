"""What a chat policy sampled, kept for training: token ids, logprobs, the sampled message, the request's messages.

A trainer that learns from a rollout must train on the tokens the server
sampled, not on a re-tokenization of the text (chat templates do not
round-trip). vLLM and SGLang can return them from their OpenAI-compatible
``/v1/chat/completions``; ``sampled_tokens`` reads them from a completion, in
the shapes the two servers use:

- vLLM (``return_token_ids: true`` and ``logprobs: true``): the prompt's ids in
  ``prompt_token_ids`` on the response (on the choice in ``/v1/completions``,
  and in some versions), the completion's in ``choices[0].token_ids``, the
  sampled logprobs in ``choices[0].logprobs.content[i].logprob`` (whose
  ``token`` reads ``token_id:N`` when the server runs with
  ``--return-tokens-as-token-ids``: then it is checked against the ids, or
  gives them when ``token_ids`` is absent).
- SGLang 0.5.13 and later (``return_prompt_token_ids`` and ``return_meta_info``):
  ``choices[0].prompt_token_ids``, and ``choices[0].meta_info.output_token_logprobs``,
  ``[logprob, token_id, text]`` per sampled token (or ``{"token_id", "logprob"}``);
  newer SGLang also names the completion's ids ``response_token_ids`` on the choice.

Nothing is invented: a field the server did not send is not recorded, and a
step whose ids and logprobs do not line up keeps what came, with
``token_mismatch`` saying what is wrong. The request's messages are recorded
as a delta against the previous request of the episode (``{"keep": k, "add":
[...]}``: the first ``k`` messages of the previous request, then ``add``),
images as ``sha256:<hex>`` of their PNG (the same bytes as the trajectory's
``images/`` files of that observation) rather than their base64.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

#: What a request adds to ask vLLM and SGLang for token ids (with ``logprobs=True``). Each server ignores the
#: other's fields (vLLM logs them as ignored).
REQUEST_FIELDS = {"return_token_ids": True, "return_prompt_token_ids": True, "return_meta_info": True}
#: The step line's keys for tokens (top level); the others of a trace go under the step's ``policy``.
TOKEN_KEYS = ("prompt_token_ids", "completion_token_ids", "logprobs", "token_mismatch")
DATA_URL = "data:image/png;base64,"


def _field(obj: Any, name: str) -> Any:
    """``obj[name]`` of a dict, ``obj.name`` of a client model (extra fields included), else None."""
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def _ids(value: Any) -> list[int] | None:
    if isinstance(value, (list, tuple)) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return list(value)
    return None


def _floats(value: Any) -> list[float] | None:
    if isinstance(value, (list, tuple)) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        return [float(v) for v in value]
    return None


def _sglang_entries(meta: Any) -> tuple[list[Any], list[Any]]:
    """SGLang's ``meta_info.output_token_logprobs`` as (ids, logprobs); entries it cannot read give None."""
    ids: list[Any] = []
    logprobs: list[Any] = []
    for entry in _field(meta, "output_token_logprobs") or []:
        if isinstance(entry, dict):
            ids.append(entry.get("token_id", entry.get("id")))
            logprobs.append(entry.get("logprob"))
        elif isinstance(entry, (list, tuple)) and len(entry) >= 2:
            logprobs.append(entry[0])
            ids.append(entry[1])
        else:
            ids.append(None)
            logprobs.append(None)
    return ids, logprobs


def _token_id(token: Any) -> int | None:
    """N of a ``token_id:N`` token string (vLLM's ``--return-tokens-as-token-ids``)."""
    if isinstance(token, str) and token.startswith("token_id:"):
        try:
            return int(token[len("token_id:") :])
        except ValueError:
            return None
    return None


def sampled_tokens(response: Any) -> dict[str, Any]:
    """The step's ``prompt_token_ids``, ``completion_token_ids``, ``logprobs`` and ``token_mismatch`` (each only
    when there is something to say); ``{}`` when the server sent none of them."""
    try:
        choice = response.choices[0]
    except (AttributeError, IndexError, TypeError):
        return {}
    found: dict[str, Any] = {}
    bad: list[str] = []

    def take(name: str, value: Any, check: Any) -> None:
        if value is not None:
            good = check(value)
            if good is None:
                bad.append(name)
            else:
                found[name] = good

    prompt = _field(response, "prompt_token_ids")
    take("prompt_token_ids", prompt if prompt is not None else _field(choice, "prompt_token_ids"), _ids)
    meta = _field(choice, "meta_info")
    meta_ids, meta_logprobs = _sglang_entries(meta) if meta is not None else ([], [])
    content = _field(_field(choice, "logprobs"), "content")
    content = content if isinstance(content, list) else []
    named = [_token_id(_field(item, "token")) for item in content]
    named_ids = named if named and None not in named else None
    for candidate in (
        _field(choice, "token_ids"),
        _field(choice, "response_token_ids"),
        _field(meta, "output_ids"),
        meta_ids or None,
        named_ids,
    ):
        if candidate is not None:
            take("completion_token_ids", candidate, _ids)
            break
    take("logprobs", [_field(item, "logprob") for item in content] if content else meta_logprobs or None, _floats)
    if not found and not bad:
        return {}
    problems = [f"{name} is not a list of numbers" for name in bad]
    ids, logprobs = found.get("completion_token_ids"), found.get("logprobs")
    if ids is not None and logprobs is not None and len(ids) != len(logprobs):
        problems.append(f"{len(ids)} completion token ids but {len(logprobs)} logprobs")
    for name, missing in (
        ("prompt_token_ids", "no prompt token ids"),
        ("completion_token_ids", "no completion token ids"),
        ("logprobs", "no logprobs"),
    ):
        if name not in found and name not in bad:
            problems.append(missing)
    if ids is not None and named_ids is not None and named_ids != ids:
        problems.append("the logprobs' token_id:N tokens differ from the completion token ids")
    if problems:
        found["token_mismatch"] = "; ".join(problems)
    return found


def sampled_message(response: Any) -> dict[str, Any] | None:
    """The choice's message as the server returned it (extra fields such as ``reasoning_content`` included)."""
    try:
        message = response.choices[0].message
        dumped = message.model_dump(exclude_none=True, warnings=False) if hasattr(message, "model_dump") else message
    except (AttributeError, IndexError, TypeError, ValueError):
        return None
    return dumped if isinstance(dumped, dict) else None


def _recorded_part(part: Any) -> Any:
    if isinstance(part, dict) and part.get("type") == "image_url":
        url = (part.get("image_url") or {}).get("url")
        if isinstance(url, str) and url.startswith(DATA_URL):
            digest = hashlib.sha256(base64.b64decode(url[len(DATA_URL) :])).hexdigest()
            return {**part, "image_url": {**part["image_url"], "url": f"sha256:{digest}"}}
    return part


def recorded_message(message: dict[str, Any]) -> dict[str, Any]:
    """A request message as the trajectory keeps it: images as ``sha256:<hex>`` of their PNG."""
    content = message.get("content")
    if isinstance(content, list):
        return {**message, "content": [_recorded_part(p) for p in content]}
    return message


def request_delta(previous: list[dict[str, Any]] | None, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """``{"keep": k, "add": [...]}``: the request is the previous request's first ``k`` messages, then ``add``."""
    keep = 0
    if previous:
        limit = min(len(previous), len(messages))
        while keep < limit and previous[keep] == messages[keep]:
            keep += 1
    return {"keep": keep, "add": [recorded_message(m) for m in messages[keep:]]}


def split_trace(trace: dict[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """A decision's trace as (the step line's top-level token keys, the keys for the step's ``policy``)."""
    if not trace:
        return {}, {}
    tokens = {k: trace[k] for k in TOKEN_KEYS if k in trace}
    return tokens, {k: v for k, v in trace.items() if k not in tokens}
