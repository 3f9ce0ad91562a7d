"""A chat completion as the ``openai`` policy reads it, in the shapes real servers send, not only OpenAI's.

What servers other than OpenAI do, and what is made of it here:

- tool calls with no ``id``, an empty one or ``null`` (llama-server, LM Studio): the call is the model's
  usable action; the history gets an id of our own, 9 alphanumerics (what Mistral templates accept),
  since those servers refuse an empty id replayed to them;
- ``arguments`` that are not a JSON object (trailing text, single quotes, cut off at ``max_tokens``, or
  already an object): the env receives them as the model wrote them and judges them (a bad one is the
  agent's spent step); the history gets them as a JSON object's text (``canonical_arguments``), because
  vLLM and llama-server parse every replayed tool call and refuse the whole request when one does not
  parse, which would end the episode on the next step;
- ``reasoning_content`` / ``reasoning`` beside ``content`` (vLLM's and SGLang's reasoning parsers, Ollama,
  OpenRouter): recorded in the step's message as ``<think>...</think>``, never replayed, never the action;
- ``finish_reason: "length"``: the step's note says the reply was cut off at ``max_tokens``;
- a ``model`` other than the one asked (a router's fallback, a snapshot of an alias): the note of the
  episode's first step that names it says so;
- ``choices`` empty or null: a spent step, saying so;
- an ``error`` object in a 200 (OpenRouter commits its 200 before the provider answers): a numeric
  ``code`` of 429 or 5xx is the server's transient failure (retried, then infra), as that status would
  have been; any other is a spent step quoting the error's message;
- a 400 saying the request is longer than the model's context (OpenAI, vLLM, SGLang, llama-server,
  OpenRouter, each in its own words; ``context_overflow``): the policy leaves out more of the oldest turns
  and asks again, by the ratio the message gives when it gives one.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from agentenvs.harness.policies.bounded import Malformed, usage_counts
from agentenvs.harness.policies.retry import Transient

#: One tool call: (id as the server sent it, function name, arguments as the model wrote them: a string, or
#: what the server sent).
ToolCall = tuple[str, str, Any]


@dataclass
class Reply:
    content: str | None
    calls: list[ToolCall]
    usage: dict[str, int] | None
    reasoning: str | None = None
    notes: list[str] = field(default_factory=list)
    #: The model the server says answered.
    served: str | None = None

    def message(self) -> str | None:
        """What the trajectory shows besides the action: the reasoning as ``<think>...</think>``, then the text."""
        thought = f"<think>{self.reasoning}</think>" if self.reasoning else None
        parts = [p for p in (thought, self.content) if p]
        return "\n".join(parts) if parts else None


def _field(obj: Any, name: str) -> Any:
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def in_band_error(response: Any) -> Transient | Malformed | None:
    """The ``error`` a 200 carries instead of a completion (on the response, or on its only choice), if any."""
    choices = _field(response, "choices")
    if isinstance(choices, list) and choices:
        error = _field(choices[0], "error")
    else:
        error = _field(response, "error")
    if error is None:
        return None
    message = _field(error, "message") if isinstance(error, dict) else error
    message = str(message if message is not None else error)[:500]
    code = _field(error, "code") if isinstance(error, dict) else None
    status = int(code) if isinstance(code, int) or (isinstance(code, str) and code.isdigit()) else None
    if status == 429 or (status is not None and 500 <= status < 600):
        return Transient(f"{status} inside a 200 reply: {message}")
    return Malformed(f"the server answered an error instead of a completion: {message}")


def canonical_arguments(arguments: Any) -> str:
    """Tool call arguments as the history replays them: always the text of a JSON object.

    Arguments that parse to an object are kept as written; an object the server sent as one is
    encoded; anything else is wrapped as ``{"invalid_arguments": <what the model wrote>}`` (the env
    refused it, and the tool message that follows says why).
    """
    if isinstance(arguments, dict):
        try:
            return json.dumps(arguments, ensure_ascii=False)
        except (TypeError, ValueError):
            return json.dumps({"invalid_arguments": repr(arguments)}, ensure_ascii=False)
    if isinstance(arguments, str):
        if not arguments.strip():
            return "{}"
        try:
            if isinstance(json.loads(arguments), dict):
                return arguments
        except (ValueError, RecursionError):
            pass
        return json.dumps({"invalid_arguments": arguments}, ensure_ascii=False)
    return json.dumps({"invalid_arguments": repr(arguments)}, ensure_ascii=False)


def usable_id(call_id: Any, counter: int) -> str:
    """The server's id when it is a non-empty string, else one of ours (``call`` and 5 digits: 9 alphanumerics)."""
    if isinstance(call_id, str) and call_id.strip():
        return call_id
    return f"call{counter % 100_000:05d}"


def read_reply(response: Any, model: str, previous_model: str | None = None) -> Reply | Malformed:
    """The content, tool calls, usage, reasoning and notes of a completion, or why it holds none.

    A served ``model`` other than ``model`` is noted unless it is ``previous_model`` (the one the
    episode's previous reply named: OpenAI itself answers with a dated snapshot of an alias)."""
    choices = _field(response, "choices")
    if not isinstance(choices, list) or not choices:
        return Malformed(f"the server answered no choices: {str(response)[:200]}")
    try:
        choice = choices[0]
        message = choice.message
        content = message.content if isinstance(message.content, str) and message.content else None
        raw_calls = message.tool_calls or []
        calls = [(_field(c, "id"), _field(c.function, "name"), _field(c.function, "arguments")) for c in raw_calls]
        usage = response.usage.model_dump() if response.usage is not None else None
    except (AttributeError, IndexError, KeyError, TypeError) as exc:
        return Malformed(f"the server answered garbage ({type(exc).__name__}): {str(response)[:200]}")
    if not all(isinstance(name, str) and name for _, name, _ in calls):
        return Malformed(f"the server answered tool calls without a name: {str(response)[:200]}")
    reasoning = next(
        (r for r in (_field(message, "reasoning_content"), _field(message, "reasoning")) if isinstance(r, str) and r),
        None,
    )
    notes = []
    if _field(choice, "finish_reason") == "length":
        notes.append("the reply was cut off at max_tokens (finish_reason: length)")
    served = _field(response, "model")
    if isinstance(served, str) and served and served not in (model, previous_model):
        notes.append(f"the server answered as model {served!r} (asked for {model!r})")
    tool_calls = [(i, n, a if a is not None else "") for i, n, a in calls]
    return Reply(
        content, tool_calls, usage_counts(usage), reasoning, notes, served if isinstance(served, str) else None
    )


#: How servers say a request does not fit the model's context.
_OVERFLOW = re.compile(
    r"context_length_exceeded|maximum context length|longer than the model's context length"
    r"|exceeds the available context size|context window|prompt is too long|too many tokens",
    re.IGNORECASE,
)
_LIMIT = re.compile(r"maximum context length is (\d+)|context length \((\d+) tokens\)", re.IGNORECASE)
_ASKED = re.compile(r"(?:requested|resulted in) (\d+) tokens|input \((\d+) tokens\)", re.IGNORECASE)


def context_overflow(status: int, message: str) -> float | None:
    """For a refusal that says the request did not fit the model's context: the fraction of it that would
    have fitted (limit over requested, when the message gives both; else 0.5). None for any other refusal."""
    if status not in (400, 413) or not _OVERFLOW.search(message):
        return None
    limit, asked = _LIMIT.search(message), _ASKED.search(message)
    if limit and asked:
        fits = int(limit.group(1) or limit.group(2)) / max(1, int(asked.group(1) or asked.group(2)))
        if 0 < fits < 1:
            return fits
    return 0.5
