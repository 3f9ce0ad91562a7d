"""ART (OpenPipe's ``openpipe-art``): any agentenvs task as an ART rollout (``pip install 'agentenvs[art]'``).

In ART the rollout is user code: an ``async`` function of the model and a
scenario that returns an ``art.Trajectory``. ``rollout`` is that function for
every registered task::

    import art
    from agentenvs.integrations.art import Scenario, rollout

    groups = await art.gather_trajectory_groups(
        art.TrajectoryGroup(rollout(model, scenario) for _ in range(8))
        for scenario in [Scenario("textgame/coin-easy-0", seed=0), Scenario("terminal/fix-permissions", seed=0)]
    )
    await backend.train(model, groups)  # ART's training backend (a GPU; not this package's concern)

Options (``make_kwargs``, ``max_turns``, ``images``, ``use_tools``,
``logprobs``, ``sampling``) are keywords; bind them with ``functools.partial``.

Each turn asks ``model.openai_client()`` for one chat completion (the model
named ``model.get_inference_name()``, the env's ``action_tools`` as tools,
``logprobs=True`` by default: ART trains only on choices that carry them) and
appends the server's ``Choice`` itself to ``messages_and_choices``, so ART
trains on exactly what was sampled. The reply's first tool call is the action,
answered by a ``tool`` message (a second call in the same reply is answered
"not run"); a reply without one is read as text (a ``<tool_call>`` block, a
fenced block, or the family's native command). The env's observations follow
as ``tool`` or ``user`` messages, a screenshot as ``image_url`` parts of a user
message; the final observation is appended too.

The trajectory's ``reward`` is the task evaluator's final score; ``metrics``
hold ``score``, ``success``, ``steps``, ``return`` and ``progress`` (ART
averages them over a gather); ``metadata`` the task, seed, family and
``error_kind`` (``"infra"`` when the sandbox broke, not the agent: drop those
trajectories rather than train on their 0). The env is closed when the
rollout ends, also when it raises (an error from the model's server reaches
ART's gather, which counts it against ``max_exceptions``).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from agentenvs.integrations.common import (
    ImageMode,
    TextEpisode,
    content_text,
    env_messages,
    message_content,
    require,
)

art = require("art", "art", "openpipe-art")
_openai = require("openai", "art", "openpipe-art")
_httpx = require("httpx", "art", "openpipe-art")
if not issubclass(_openai.DefaultAsyncHttpxClient, _httpx.AsyncClient):
    # ART 0.5's model.openai_client() gives its client an httpx Timeout, which openai 3 (on httpx2) chokes on.
    raise ImportError("openpipe-art 0.5's model.openai_client() needs openai<3: pip install 'agentenvs[art]'")

#: Summary keys that become the trajectory's metrics.
METRIC_KEYS = ("score", "success", "steps", "return", "progress")


@dataclass(frozen=True)
class Scenario:
    """One episode to play: a task id (``"<family>/<task-id>"``) and the reset's seed."""

    task_id: str
    seed: int | None = None


def _action(message: Any) -> str | dict[str, Any]:
    """The env action of a sampled message: its first tool call as sent, else its text."""
    calls = message.tool_calls or []
    if calls:
        return {"name": calls[0].function.name, "arguments": calls[0].function.arguments or ""}
    return content_text(message.content or "")


async def rollout(
    model: art.Model,
    scenario: Scenario | str,
    *,
    make_kwargs: dict[str, Any] | None = None,
    max_turns: int | None = None,
    images: ImageMode = "auto",
    use_tools: bool = True,
    logprobs: bool = True,
    sampling: dict[str, Any] | None = None,
) -> art.Trajectory:
    """Play one episode of ``scenario`` with ``model``'s OpenAI client; see the module docstring.

    ``make_kwargs`` go to ``agentenvs.make``; ``max_turns`` becomes the env's
    ``max_steps`` (so the last turn is graded); ``sampling`` goes to every
    ``chat.completions.create`` (``temperature``, ``max_tokens``, ``extra_body``, ...).
    """
    if isinstance(scenario, str):
        scenario = Scenario(scenario)
    kwargs = dict(make_kwargs or {})
    if max_turns:
        kwargs.setdefault("max_steps", max_turns)
    episode = await asyncio.to_thread(
        TextEpisode, scenario.task_id, seed=scenario.seed, make_kwargs=kwargs, images=images
    )
    try:
        content, _ = await asyncio.to_thread(episode.reset)
        tools = episode.tools if use_tools else None
        trajectory = art.Trajectory(
            messages_and_choices=[
                {"role": "system", "content": episode.system_prompt()},
                {"role": "user", "content": content},
            ],
            tools=tools,
        )
        request: dict[str, Any] = {**(sampling or {}), "model": model.get_inference_name()}
        if tools:
            request["tools"] = tools
        if logprobs:
            request["logprobs"] = True
        client = model.openai_client()
        while not episode.done:
            response = await client.chat.completions.create(messages=trajectory.messages(), **request)
            choice = response.choices[0]
            trajectory.messages_and_choices.append(choice)
            result = await asyncio.to_thread(episode.step, _action(choice.message))
            shown = message_content(result.observation, first=False, images=images)
            calls = choice.message.tool_calls or []
            trajectory.messages_and_choices.extend(env_messages([call.id for call in calls], shown))
        summary = episode.summary()
        trajectory.reward = summary["score"]
        trajectory.metrics.update({key: summary[key] for key in METRIC_KEYS})
        trajectory.metadata.update(
            task_id=scenario.task_id, seed=scenario.seed, family=episode.family, error_kind=summary["error_kind"]
        )
        return trajectory.finish()
    finally:
        await asyncio.to_thread(episode.close)


__all__ = ["Scenario", "rollout"]
