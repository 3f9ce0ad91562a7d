"""``--policy openai``: any OpenAI-compatible chat-completions server, through the official client.

Tools come from the env's ``action_tools``; screenshots go as base64
``image_url`` parts. The history is trimmed to a context budget (oldest
turns first; images kept only for the latest turns); a server that says the
request does not fit its model's context gets it again with fewer turns, and
the episode keeps the smaller budget. Retries with backoff on 408, 409, 429,
5xx, timeouts and unreachable servers (infra if they persist). A reply
with text and no tool call is the family's plain-text action (a shell command,
a game command), as the system prompt says; one with no usable action at all
(garbage, empty, too large or too deep: see ``bounded.py``) is the agent's
spent step; another 4xx ends the episode as
the agent's failure. Token usage is recorded per step. The model sees the
observations and nothing else: no rewards, checks or progress.

``return_token_ids`` asks vLLM and SGLang servers for the prompt's and the
completion's token ids and the sampled logprobs, and records them per step
with the sampled message and the request's messages (``trace.py``);
``record_messages`` records the messages alone. How the replies of servers
other than OpenAI are read (ids, arguments, reasoning, errors in a 200):
``chat_reply.py``.
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass, field
from typing import Any

import openai

from agentenvs.harness.observation import png_data_url, split_observation
from agentenvs.harness.policies.base import (
    NO_ACTION,
    Decision,
    EpisodeStart,
    Policy,
    PolicyConfigError,
    PolicyRequestError,
    StepInput,
)
from agentenvs.harness.policies.bounded import BadReply, Malformed, bounded_client, http_module
from agentenvs.harness.policies.chat_reply import (
    canonical_arguments,
    context_overflow,
    in_band_error,
    read_reply,
    usable_id,
)
from agentenvs.harness.policies.prompts import observation_text, plain_text_action, system_prompt
from agentenvs.harness.policies.retry import RetryPolicy, Transient, call_with_retries, refusal
from agentenvs.harness.policies.trace import REQUEST_FIELDS, request_delta, sampled_message, sampled_tokens

#: Rough cost of one image in the context budget, in tokens.
IMAGE_TOKENS = 1000


def estimate_tokens(message: dict[str, Any]) -> int:
    """About four characters per token; images at a flat cost."""
    content = message.get("content")
    images = 0
    if isinstance(content, list):
        images = sum(1 for part in content if part.get("type") == "image_url")
        text = "".join(part.get("text", "") for part in content if part.get("type") == "text")
    else:
        text = content or ""
    extra = json.dumps(message.get("tool_calls", []))
    return (len(text) + len(extra)) // 4 + 4 + images * IMAGE_TOKENS


@dataclass
class Conversation:
    """One episode's messages: the pinned opening, then turns that may be dropped to fit the budget."""

    opening: list[dict[str, Any]]
    turns: list[list[dict[str, Any]]] = field(default_factory=list)
    pending_call_id: str | None = None
    dropped: int = 0
    #: Tool calls taken so far: numbers the ids given to calls the server sent without one.
    calls: int = 0
    #: The model the episode's latest reply named (noted when it is not the one asked, once per change).
    served: str | None = None
    #: The turns the latest request left out, and the latest request recorded in the trajectory.
    omitted: int = 0
    sent: list[dict[str, Any]] | None = None
    #: The context budget in estimated tokens, once the server said a request did not fit (else the policy's).
    budget: int | None = None

    def messages(self, budget: int, max_images: int) -> list[dict[str, Any]]:
        turns = [self._without_old_images(turn, i, len(self.turns), max_images) for i, turn in enumerate(self.turns)]
        used = sum(estimate_tokens(m) for m in self.opening)
        kept: list[list[dict[str, Any]]] = []
        for turn in reversed(turns):
            cost = sum(estimate_tokens(m) for m in turn)
            if kept and used + cost > budget:
                break
            kept.append(turn)
            used += cost
        kept.reverse()
        omitted = self.omitted = len(turns) - len(kept)
        note = [{"role": "user", "content": f"[{omitted} earlier turns omitted to fit the context]"}] if omitted else []
        return [*self.opening, *note, *(m for turn in kept for m in turn)]

    @staticmethod
    def _without_old_images(
        turn: list[dict[str, Any]], index: int, total: int, max_images: int
    ) -> list[dict[str, Any]]:
        if index >= total - max_images:
            return turn
        out = []
        for message in turn:
            content = message.get("content")
            if isinstance(content, list):
                texts = [p.get("text", "") for p in content if p.get("type") == "text"]
                message = {**message, "content": "\n".join([*texts, "[image omitted]"])}
            out.append(message)
        return out


def _user_content(text: str, images: dict[str, bytes]) -> str | list[dict[str, Any]]:
    if not images:
        return text
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}]
    for png in images.values():
        parts.append({"type": "image_url", "image_url": {"url": png_data_url(png)}})
    return parts


class OpenAIPolicy(Policy):
    """A chat model behind an OpenAI-compatible ``/chat/completions`` endpoint."""

    name = "openai"

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        temperature: float | None = None,
        top_p: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
        context_tokens: int = 32_000,
        max_images: int = 1,
        request_timeout_sec: float = 120.0,
        retry: RetryPolicy | None = None,
        extra_body: dict[str, Any] | None = None,
        system_prompt_override: str | None = None,
        return_token_ids: bool = False,
        record_messages: bool | None = None,
    ):
        if not model:
            raise PolicyConfigError("--policy openai needs --model (the model name the server serves)")
        if context_tokens < 512:
            raise PolicyConfigError(f"--context-tokens must be at least 512, got {context_tokens}")
        self.model = model
        self.base_url = base_url
        self.api_key_env = api_key_env
        self.sampling = {
            k: v
            for k, v in {"temperature": temperature, "top_p": top_p, "max_tokens": max_tokens, "seed": seed}.items()
            if v is not None
        }
        self.context_tokens = context_tokens
        self.max_images = max_images
        self.retry = retry or RetryPolicy()
        self.extra_body = extra_body or {}
        self.system_prompt_override = system_prompt_override
        self.return_token_ids = bool(return_token_ids)
        self.record_messages = self.return_token_ids if record_messages is None else bool(record_messages)
        client_class = openai.DefaultAsyncHttpxClient
        server = base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
        self._client = openai.AsyncOpenAI(
            base_url=base_url,
            api_key=os.environ.get(api_key_env) or "EMPTY",
            timeout=request_timeout_sec,
            max_retries=0,
            http_client=bounded_client(
                http_module(client_class), server, timeout=request_timeout_sec, client_class=client_class
            ),
        )
        self._conversations: dict[str, Conversation] = {}

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "model": self.model,
            "base_url": self.base_url,
            "api_key_env": self.api_key_env,
            "api_key_set": bool(os.environ.get(self.api_key_env)),
            "sampling": self.sampling,
            "context_tokens": self.context_tokens,
            "max_images": self.max_images,
            "max_retries": self.retry.max_retries,
            "extra_body": self.extra_body,
            "return_token_ids": self.return_token_ids,
            "record_messages": self.record_messages,
        }

    async def reset(self, start: EpisodeStart) -> None:
        prompt = self.system_prompt_override or system_prompt(start.family, start.prompt_description)
        self._conversations[start.episode_id] = Conversation(opening=[{"role": "system", "content": prompt}])

    async def end(self, start: EpisodeStart) -> None:
        self._conversations.pop(start.episode_id, None)

    async def aclose(self) -> None:
        await self._client.close()

    def _record_observation(self, convo: Conversation, step: StepInput) -> None:
        fields, images = split_observation(step.observation)
        if step.step == 0:
            convo.opening.append(
                {"role": "user", "content": _user_content(observation_text(fields, include_instruction=True), images)}
            )
            return
        text = observation_text(fields)
        if convo.pending_call_id is not None:
            turn = convo.turns[-1]
            turn.append({"role": "tool", "tool_call_id": convo.pending_call_id, "content": text})
            if images:
                turn.append({"role": "user", "content": _user_content("Screenshot after the action:", images)})
        elif convo.turns:
            convo.turns[-1].append({"role": "user", "content": _user_content(text, images)})
        else:  # every reply so far was malformed
            convo.turns.append([{"role": "user", "content": _user_content(text, images)}])
        convo.pending_call_id = None

    async def act(self, start: EpisodeStart, step: StepInput) -> Decision:
        convo = self._conversations.get(start.episode_id)
        if convo is None:
            await self.reset(start)
            convo = self._conversations[start.episode_id]
        self._record_observation(convo, step)
        reply, retries, messages, overflowed = await self._fitting_completion(convo, start.tools)
        response = reply
        if not isinstance(reply, Malformed):
            reply = read_reply(reply, self.model, convo.served)
        if isinstance(reply, Malformed):
            return Decision(action=NO_ACTION, note=f"malformed reply: {reply.reason}", retries=retries)
        content, calls, usage = reply.content, reply.calls, reply.usage
        convo.served = reply.served or convo.served
        trace = self._trace(convo, messages, response)
        notes = list(reply.notes)
        if overflowed:
            notes.append(f"the request exceeded the model's context: the oldest {convo.omitted} turns left out")
        if not calls:
            convo.turns.append([{"role": "assistant", "content": content or ""}])
            command = plain_text_action(content or "")
            if command:
                notes.insert(0, "the model answered in plain text: taken as the action")
            elif reply.reasoning or (content or "").strip():
                notes.insert(0, "the model answered with neither a tool call nor text (only reasoning)")
            else:
                notes.insert(0, "the model answered with neither a tool call nor text")
            return Decision(
                action=command or NO_ACTION,
                usage=usage,
                message=reply.message(),
                note="; ".join(notes),
                retries=retries,
                trace=trace,
            )
        raw_id, name, arguments = calls[0]
        convo.calls += 1
        call_id = usable_id(raw_id, convo.calls)
        history_call = {"name": name, "arguments": canonical_arguments(arguments)}
        convo.turns.append(
            [
                {
                    "role": "assistant",
                    "content": content,
                    "tool_calls": [{"id": call_id, "type": "function", "function": history_call}],
                }
            ]
        )
        convo.pending_call_id = call_id
        if len(calls) > 1:
            notes.insert(0, f"ignored {len(calls) - 1} extra tool calls (one action per step)")
        action = {"name": name, "arguments": arguments}
        return Decision(
            action=action,
            usage=usage,
            message=reply.message(),
            note="; ".join(notes) or None,
            retries=retries,
            trace=trace,
        )

    async def _fitting_completion(
        self, convo: Conversation, tools: list[dict[str, Any]]
    ) -> tuple[Any, int, list[dict[str, Any]], bool]:
        """The completion for the longest recent history the server takes, the retries and messages it took,
        and whether the server refused a longer one; refused with only the latest turn left: the agent's failure."""
        overflowed = False
        while True:
            messages = convo.messages(convo.budget or self.context_tokens, self.max_images)
            call = functools.partial(self._complete, messages, tools)
            try:
                reply, retries = await call_with_retries(call, self.retry, f"chat completion at {self.base_url}")
            except ContextOverflow as exc:
                left_out = convo.omitted
                budget = int(sum(estimate_tokens(m) for m in messages) * 0.9 * exc.fits)
                convo.messages(budget, self.max_images)
                if convo.omitted <= left_out:
                    raise PolicyRequestError(str(exc)) from None
                convo.budget, overflowed = budget, True
                continue
            return reply, retries, messages, overflowed

    def _trace(self, convo: Conversation, messages: list[dict[str, Any]], response: Any) -> dict[str, Any] | None:
        """What the step records for training: token ids and logprobs, the sampled message, the request."""
        trace: dict[str, Any] = sampled_tokens(response) if self.return_token_ids else {}
        if self.record_messages:
            trace["request"] = request_delta(convo.sent, messages)
            if convo.omitted:
                trace["request"]["omitted_turns"] = convo.omitted
            convo.sent = messages
            trace["sampled"] = sampled_message(response)
        return trace or None

    async def _complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        """The server's completion, or ``Malformed``; ``Transient`` for what deserves another try."""
        extra_body = {**REQUEST_FIELDS, **self.extra_body} if self.return_token_ids else self.extra_body
        sampling = {**self.sampling, "logprobs": True} if self.return_token_ids else self.sampling
        try:
            completion = await self._client.chat.completions.create(
                model=self.model,
                messages=messages,  # type: ignore[arg-type]
                tools=tools,  # type: ignore[arg-type]
                extra_body=extra_body or None,
                **sampling,
            )
            error = in_band_error(completion)
            if isinstance(error, Transient):
                raise error
            return error or completion
        except openai.APIStatusError as exc:
            fits = context_overflow(exc.status_code, exc.message)
            if fits is not None:
                raise ContextOverflow(_status_message(exc), fits) from None
            raise refusal(exc.status_code, exc.response.headers, _status_message(exc)) from None
        except openai.APITimeoutError:
            raise Transient("the request timed out") from None
        except openai.APIConnectionError as exc:
            raise Transient(f"cannot reach the server: {exc}") from None
        except BadReply as exc:
            return Malformed(str(exc))
        except (openai.APIResponseValidationError, ValueError, TypeError) as exc:
            return Malformed(f"the server answered garbage: {str(exc)[:300]}")


class ContextOverflow(Exception):
    """The server said the request is longer than its model's context; ``fits`` is the part that would fit."""

    def __init__(self, message: str, fits: float):
        super().__init__(message)
        self.fits = fits


def _status_message(exc: openai.APIStatusError) -> str:
    status = exc.status_code
    if status == 429:
        return f"429 rate limited: {exc.message}"
    if status >= 500:
        return f"{status} server error: {exc.message}"
    return f"the policy server refused the request ({status}): {exc.message[:500]}"
