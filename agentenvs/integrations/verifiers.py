"""verifiers: agentenvs tasks as a classic verifiers ``MultiTurnEnv`` (``pip install 'agentenvs[verifiers]'``).

``AgentEnvsMultiTurnEnv`` is a ``vf.MultiTurnEnv`` (verifiers' classic API, 0.3.x;
verifiers 0.4 dropped it for its v1 stack, which this adapter does not cover).
Its dataset is one row per task and seed; each rollout makes the task's env
with ``agentenvs.make``, and the rollout loop is verifiers' own: its client
asks the model, ``env_response`` steps our env with the reply, and the
episode's end is its ``final_env_response``::

    from agentenvs.integrations.verifiers import load_environment
    env = load_environment(task_ids=["textgame/coin-easy-0"], make_kwargs={})
    results = env.evaluate_sync(client=vf.ClientConfig(api_base_url=..., api_key_var=...), model="...")

A reply's tool calls (the env's ``action_tools``, offered as the rollout's
``tool_defs``) become the action, answered by ``tool`` messages (one action per
turn: a second call in the same reply is answered, not run); a reply without
tool calls is read as text (a ``<tool_call>`` block, a fenced block, or the
family's native command). Rewards: each trajectory step's ``reward`` is the
env's per-step reward; the rubric's reward is the final score (weight 1), with
``success``, ``progress`` and the env's return as zero-weight metrics. The
step's ``extras["agentenvs"]`` holds its checks, progress and, at the end, the
score; ``state["agentenvs"]`` the episode's summary.

Images: a screenshot becomes ``image_url`` content parts of a user message,
which verifiers' OpenAI chat client sends as they are (a tool result is text,
so after a tool call the screenshot follows in a user message).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from agentenvs.integrations.common import ImageMode, TextEpisode, content_text, env_messages, require

vf = require("verifiers", "verifiers", "verifiers<0.4")
if not hasattr(vf, "MultiTurnEnv"):  # pragma: no cover - depends on the installed release
    raise ImportError(
        "this adapter needs verifiers' classic MultiTurnEnv (verifiers 0.3.x): pip install 'agentenvs[verifiers]'"
    )
_messages = require("verifiers.utils.message_utils", "verifiers", "verifiers<0.4")

TASK_NAME = "agentenvs"


def build_dataset(task_ids: list[str], seeds: tuple[int, ...] | list[int] = (0,)) -> Any:
    """One row per (task, seed): the prompt is made on reset, ``info`` names the task and seed."""
    from datasets import Dataset

    rows = [
        {
            "prompt": [{"role": "user", "content": f"agentenvs task {task_id} (seed {seed})"}],
            "answer": "",
            "info": json.dumps({"task_id": task_id, "seed": int(seed)}),
        }
        for task_id in task_ids
        for seed in seeds
    ]
    return Dataset.from_list(rows)


def _final(state: Any) -> dict[str, Any]:
    return state.get("agentenvs") or {}


async def agentenvs_score(state: Any, **_: Any) -> float:
    """The task evaluator's final score (0 if the episode did not end)."""
    return float(_final(state).get("score", 0.0))


async def agentenvs_success(state: Any, **_: Any) -> float:
    return float(bool(_final(state).get("success", False)))


async def agentenvs_progress(state: Any, **_: Any) -> float:
    return float(_final(state).get("progress", 0.0))


async def agentenvs_return(state: Any, **_: Any) -> float:
    """The sum of the env's per-step rewards."""
    return float(_final(state).get("return", 0.0))


def _tool_def(schema: dict[str, Any]) -> dict[str, Any]:
    function = schema["function"]
    return {
        "name": function["name"],
        "description": function.get("description", ""),
        "parameters": function["parameters"],
    }


def _field(message: Any, name: str) -> Any:
    return message.get(name) if isinstance(message, dict) else getattr(message, name, None)


class AgentEnvsMultiTurnEnv(vf.MultiTurnEnv):
    """A ``vf.MultiTurnEnv`` over agentenvs tasks; see the module docstring.

    ``task_ids`` and ``seeds`` make the dataset; ``make_kwargs`` go to
    ``agentenvs.make``; ``max_turns`` becomes the env's ``max_steps`` (its last
    step is graded); ``images`` is ``"auto"`` or ``"never"``; ``use_tools`` offers
    the env's tools to the model (else it acts in plain text).
    """

    def __init__(
        self,
        task_ids: list[str],
        *,
        seeds: tuple[int, ...] | list[int] = (0,),
        make_kwargs: dict[str, Any] | None = None,
        max_turns: int | None = None,
        images: ImageMode = "auto",
        use_tools: bool = True,
        **kwargs: Any,
    ):
        rubric = vf.Rubric(funcs=[agentenvs_score], weights=[1.0])
        for metric in (agentenvs_success, agentenvs_progress, agentenvs_return):
            rubric.add_metric(metric)
        dataset = build_dataset(list(task_ids), seeds)
        kwargs.setdefault("eval_dataset", dataset)
        super().__init__(
            dataset=dataset, rubric=rubric, max_turns=(max_turns + 1) if max_turns else -1, env_id=TASK_NAME, **kwargs
        )
        self.make_kwargs = dict(make_kwargs or {})
        if max_turns:
            self.make_kwargs.setdefault("max_steps", max_turns)
        self.images: ImageMode = images
        self.use_tools = use_tools
        #: Live episodes by trajectory id, closed when their rollout is cleaned up.
        self.episodes: dict[str, TextEpisode] = {}

    async def setup_state(self, state: Any) -> Any:
        info = state["info"] if isinstance(state["info"], dict) else json.loads(state["info"])
        episode = await asyncio.to_thread(
            TextEpisode, info["task_id"], seed=info.get("seed"), make_kwargs=self.make_kwargs, images=self.images
        )
        self.episodes[state["trajectory_id"]] = episode
        content, reset_info = await asyncio.to_thread(episode.reset)
        prompt = [{"role": "system", "content": episode.system_prompt()}, {"role": "user", "content": content}]
        state["prompt"] = _messages.normalize_messages(prompt, field_name="prompt")
        if self.use_tools:
            state["tool_defs"] = self._normalize_tool_defs([_tool_def(t) for t in episode.tools]) or []
        state["agentenvs"] = {**episode.summary(), "checks": reset_info.get("checks", {})}
        return state

    async def env_response(self, messages: Any, state: Any, **_: Any) -> Any:
        episode = self.episodes[state["trajectory_id"]]
        reply = messages[-1]
        calls = _field(reply, "tool_calls") or []
        if calls:
            first = calls[0]
            action: str | dict[str, Any] = {
                "name": _field(first, "name"),
                "arguments": _field(first, "arguments") or "",
            }
        else:
            action = content_text(_field(reply, "content") or "")
        result = await asyncio.to_thread(episode.step, action)
        step = state["trajectory"][-1]
        step["reward"] = result.reward
        step["extras"]["agentenvs"] = result.metadata
        state["agentenvs"] = {**episode.summary(), "metadata": result.metadata}

        if result.done:
            shown: str | list[dict[str, Any]] = self._ending(result)
        else:
            shown = result.content if result.content is not None else ""
        response = env_messages([_field(call, "id") for call in calls], shown)
        messages_out = _messages.normalize_messages(response, field_name="env_response")
        if result.done:
            state["final_env_response"] = messages_out
        return messages_out

    @staticmethod
    def _ending(result: Any) -> str:
        meta = result.metadata
        return f"{result.observation.get('text', '')}\n[episode over: score {meta.get('score', 0.0)}]".strip()

    @vf.cleanup
    async def close_episode(self, state: Any) -> None:
        episode = self.episodes.pop(state.get("trajectory_id"), None)
        if episode is not None:
            await asyncio.to_thread(episode.close)


def load_environment(task_ids: list[str] | None = None, **kwargs: Any) -> AgentEnvsMultiTurnEnv:
    """The verifiers Hub entry point: ``load_environment(task_ids=[...], make_kwargs=..., ...)``."""
    if not task_ids:
        raise ValueError('name the tasks: load_environment(task_ids=["<family>/<task-id>", ...])')
    return AgentEnvsMultiTurnEnv(task_ids, **kwargs)


__all__ = ["AgentEnvsMultiTurnEnv", "build_dataset", "load_environment"]
