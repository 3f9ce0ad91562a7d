"""``--policy http``: our protocol for policies that are not chat models.

``POST {url}/reset`` when an episode starts, ``POST {url}/act`` each step;
the answer to ``/act`` is ``{"action": ...}``. The wire format is in
docs/policy-protocol.md (JSON schemas: ``RESET_SCHEMA``, ``ACT_SCHEMA``,
``ACT_RESPONSE_SCHEMA`` below).

Whose failure is what: 429, 5xx, timeouts and an unreachable server are
retried and, if they persist, infra. A reply that holds no action (not
JSON, no ``"action"``, an error object, too large or too deep) is the
agent's: a spent step. Another 4xx ends the episode as the agent's failure.
Rewards, checks and progress go out only when the run passes feedback
(``--policy-feedback``, for training); an evaluation never sends them.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx

from agentenvs.harness.observation import split_observation
from agentenvs.harness.policies.base import (
    NO_ACTION,
    Decision,
    EpisodeStart,
    Policy,
    PolicyConfigError,
    StepInput,
)
from agentenvs.harness.policies.bounded import BadReply, Malformed, bounded_client, usage_counts
from agentenvs.harness.policies.retry import RetryPolicy, Transient, call_with_retries, refusal

PROTOCOL_VERSION = "1"

RESET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["protocol", "episode_id", "task_id", "family", "instruction", "tools"],
    "properties": {
        "protocol": {"const": PROTOCOL_VERSION},
        "episode_id": {"type": "string"},
        "task_id": {"type": "string", "description": "<family>/<task>"},
        "family": {"type": "string"},
        "trial": {"type": "integer"},
        "seed": {"type": "integer"},
        "instruction": {"type": "string"},
        "prompt_description": {"type": "string"},
        "tools": {"type": "array", "items": {"type": "object"}, "description": "OpenAI function tool schemas"},
    },
}

ACT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["protocol", "episode_id", "step", "observation", "tools"],
    "properties": {
        "protocol": {"const": PROTOCOL_VERSION},
        "episode_id": {"type": "string"},
        "task_id": {"type": "string"},
        "step": {"type": "integer", "minimum": 0, "description": "0 is the observation after reset"},
        "observation": {
            "type": "object",
            "required": ["instruction", "text"],
            "description": "text fields as JSON; each image field as {type: image/png, data: base64}",
            "additionalProperties": True,
        },
        "action_error": {"type": ["string", "null"]},
        "tools": {"type": "array", "items": {"type": "object"}},
        "reward": {"type": "number", "description": "only with --policy-feedback (training)"},
        "checks": {
            "type": "object",
            "additionalProperties": {"type": "boolean"},
            "description": "only with --policy-feedback (training)",
        },
        "progress": {"type": "number", "description": "only with --policy-feedback (training)"},
    },
}

ACT_RESPONSE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["action"],
    "properties": {
        "action": {
            "description": 'a native string ("ls -la"), "done", or a tool call {"name": ..., "arguments": {...}}',
            "oneOf": [{"type": "string"}, {"type": "object", "required": ["name"]}],
        },
        "usage": {"type": "object", "additionalProperties": {"type": "integer"}},
        "message": {"type": "string"},
    },
}


def wire_observation(obs: dict[str, Any]) -> dict[str, Any]:
    fields, images = split_observation(obs)
    for key, png in images.items():
        fields[key] = {"type": "image/png", "data": base64.b64encode(png).decode("ascii")}
    return fields


class HttpPolicy(Policy):
    """A policy server speaking our ``/reset`` + ``/act`` protocol."""

    name = "http"

    def __init__(self, *, url: str, request_timeout_sec: float = 60.0, retry: RetryPolicy | None = None):
        if not url or not url.startswith(("http://", "https://")):
            raise PolicyConfigError(f"--policy http needs --url http(s)://host:port, got {url!r}")
        self.url = url.rstrip("/")
        self.retry = retry or RetryPolicy()
        self._client = bounded_client(httpx, self.url, timeout=request_timeout_sec)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "url": self.url, "protocol": PROTOCOL_VERSION, "max_retries": self.retry.max_retries}

    async def aclose(self) -> None:
        await self._client.aclose()

    async def _post(self, path: str, body: dict[str, Any]) -> httpx.Response | Malformed:
        """A 2xx reply, or why it breaks a bound; ``Transient`` for what deserves another try."""
        try:
            response = await self._client.post(f"{self.url}{path}", json=body)
        except BadReply as exc:
            return Malformed(f"POST {path}: {exc}")
        except httpx.TimeoutException:
            raise Transient(f"POST {path} timed out") from None
        except httpx.TransportError as exc:
            raise Transient(f"cannot reach {self.url}: {exc!r}") from None
        if response.status_code >= 400:
            text = response.content[:300].decode("utf-8", "replace")
            raise refusal(
                response.status_code, response.headers, f"POST {self.url}{path} answered {response.status_code}: {text}"
            )
        return response

    async def reset(self, start: EpisodeStart) -> None:
        body = {
            "protocol": PROTOCOL_VERSION,
            "episode_id": start.episode_id,
            "task_id": start.task_id,
            "family": start.family,
            "trial": start.trial,
            "seed": start.seed,
            "instruction": start.instruction,
            "prompt_description": start.prompt_description,
            "tools": start.tools,
        }
        await call_with_retries(lambda: self._post("/reset", body), self.retry, f"POST {self.url}/reset")

    async def act(self, start: EpisodeStart, step: StepInput) -> Decision:
        body: dict[str, Any] = {
            "protocol": PROTOCOL_VERSION,
            "episode_id": start.episode_id,
            "task_id": start.task_id,
            "step": step.step,
            "observation": wire_observation(step.observation),
            "action_error": step.action_error,
            "tools": start.tools,
        }
        if step.feedback is not None:
            body.update(
                {"reward": step.feedback.reward, "checks": step.feedback.checks, "progress": step.feedback.progress}
            )
        reply, retries = await call_with_retries(lambda: self._post("/act", body), self.retry, f"POST {self.url}/act")
        data = reply if isinstance(reply, Malformed) else _act_reply(reply.content)
        if isinstance(data, Malformed):
            return Decision(action=NO_ACTION, note=f"malformed reply: {data.reason}", retries=retries)
        message = data.get("message") if isinstance(data.get("message"), str) else None
        return Decision(action=data["action"], usage=usage_counts(data.get("usage")), message=message, retries=retries)


def _act_reply(content: bytes) -> dict[str, Any] | Malformed:
    """``{"action": ...}`` from a 2xx body, or why it holds no action (its size and depth are already bounded)."""
    try:
        data = json.loads(content.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return Malformed(f"POST /act answered non-JSON: {content[:200]!r}")
    if not isinstance(data, dict):
        return Malformed(f'POST /act answered {type(data).__name__}, not an object with "action"')
    if "action" not in data:
        if "error" in data:
            return Malformed(f"POST /act answered an error instead of an action: {str(data['error'])[:300]}")
        return Malformed(f'POST /act answered without an "action" key: {str(data)[:200]}')
    return data
