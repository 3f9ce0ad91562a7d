"""OpenEnv: any agentenvs task as an ``openenv-core`` ``Environment``, served by OpenEnv's own app
(``pip install 'agentenvs[openenv]'``).

Serve every registered task from one process::

    from agentenvs.integrations.openenv import create_app
    app = create_app(make_kwargs={"backend": "local"}, max_concurrent_envs=8)
    # uvicorn.run(app, host="127.0.0.1", port=8000)

and drive it from OpenEnv's own client over its WebSocket (one session, with its
own env, per connection)::

    from agentenvs.integrations.openenv import AgentEnvsClient, AgentEnvsAction
    with AgentEnvsClient(base_url="http://127.0.0.1:8000").sync() as env:
        result = env.reset(task_id="textgame/coin-easy-0", seed=0)
        result = env.step(AgentEnvsAction(text="go east"))

``GenericEnvClient`` works too, with plain dicts (``{"text": "go east"}``).

The action (``AgentEnvsAction``) is either ``text`` (a model's reply: a native
command, a JSON tool call, a ``<tool_call>`` block, or ``done``/``fail``/``submit``)
or ``tool_call`` (``{"name": ..., "arguments": {...}}``). ``reset`` takes the task
as ``task_id`` (else the server's default) and ``seed``.

The observation (``AgentEnvsObservation``) carries ``prompt`` (what a model
reads: the instruction on reset, then the step's text and extras), the raw
``text``, ``instruction`` and ``extras``, ``images`` (PNG data URLs by key, e.g.
``screenshot``: OpenEnv has no image type of its own, so they travel as
strings), on reset the ``system_prompt`` and ``tools`` (OpenAI function
schemas), and ``info``: checks and progress every step, score and success at the
end. ``reward`` is the env's own per-step reward; ``done`` is terminated or
truncated. OpenEnv's serializer drops ``metadata`` on the wire, so ``info``
repeats it; the server's ``state`` has the episode's score, return and checks.

OpenEnv's plain HTTP ``/reset`` and ``/step`` make a fresh env per request (its
design): use them only for one-shot probes; episodes go over the WebSocket.
The app has no authentication: bind it to loopback, or put it behind
``agentenvs serve`` (our own server, with tokens) instead.
"""

from __future__ import annotations

import functools
from typing import Any, Optional

from pydantic import Field, model_validator

from agentenvs.harness.observation import is_image, to_jsonable
from agentenvs.integrations.common import TextEpisode, message_content, require, step_metadata

_types = require("openenv.core.env_server.types", "openenv", "openenv-core")
_interfaces = require("openenv.core.env_server.interfaces", "openenv", "openenv-core")
_http = require("openenv.core.env_server.http_server", "openenv", "openenv-core")
_client = require("openenv.core.env_client", "openenv", "openenv-core")
_client_types = require("openenv.core.client_types", "openenv", "openenv-core")


class AgentEnvsAction(_types.Action):
    """One action: a model's ``text`` reply, or a ``tool_call`` ``{"name", "arguments"}``."""

    text: Optional[str] = Field(default=None, description="A model's reply, a native command, or done/fail/submit")
    tool_call: Optional[dict[str, Any]] = Field(default=None, description='{"name": ..., "arguments": {...}}')

    @model_validator(mode="after")
    def _one_of(self) -> AgentEnvsAction:
        if (self.text is None) == (self.tool_call is None):
            raise ValueError("give exactly one of text or tool_call")
        return self


class AgentEnvsObservation(_types.Observation):
    """What the env showed, rendered for a model and raw; see the module docstring."""

    task_id: str = Field(default="", description="The task, <family>/<task-id>")
    prompt: str = Field(default="", description="The observation as a model reads it")
    text: str = Field(default="", description="The env's observation text")
    instruction: str = Field(default="", description="The task's instruction")
    extras: dict[str, Any] = Field(default_factory=dict, description="The family's other observation fields")
    images: dict[str, str] = Field(default_factory=dict, description="Image fields as PNG data URLs")
    system_prompt: str = Field(default="", description="How to act in this family (on reset)")
    tools: list[dict[str, Any]] = Field(default_factory=list, description="OpenAI function schemas (on reset)")
    info: dict[str, Any] = Field(default_factory=dict, description="checks, progress; score and success at the end")


class AgentEnvsState(_types.State):
    """The episode so far."""

    task_id: str = ""
    done: bool = False
    score: float = 0.0
    success: bool = False
    total_reward: float = 0.0
    progress: float = 0.0
    checks: dict[str, bool] = Field(default_factory=dict)


class AgentEnvsEnvironment(_interfaces.Environment):
    """An OpenEnv ``Environment`` over one agentenvs env at a time, made on ``reset``.

    ``task_id`` is the default task (a reset may name another); ``make_kwargs`` go to
    ``agentenvs.make``; ``allowed_tasks``, when given, is every task a client may
    choose (a task id, or a family followed by ``/``). The constructor is cheap:
    OpenEnv makes throwaway instances to answer ``/state`` and ``/metadata``.
    """

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(
        self,
        task_id: str | None = None,
        make_kwargs: dict[str, Any] | None = None,
        allowed_tasks: tuple[str, ...] | None = None,
    ):
        super().__init__()
        self.default_task = task_id
        self.make_kwargs = dict(make_kwargs or {})
        self.allowed_tasks = allowed_tasks
        self.episode: TextEpisode | None = None
        self._client_episode_id: str | None = None

    def _allowed(self, task_id: str) -> bool:
        if self.allowed_tasks is None:
            return True
        return any(task_id == a or (a.endswith("/") and task_id.startswith(a)) for a in self.allowed_tasks)

    def reset(
        self, seed: Optional[int] = None, episode_id: Optional[str] = None, task_id: Optional[str] = None, **_: Any
    ) -> AgentEnvsObservation:
        chosen = task_id or self.default_task
        if not chosen:
            raise ValueError('name a task: reset(task_id="<family>/<task-id>")')
        if not self._allowed(chosen):
            raise ValueError(f"task {chosen!r} is not served here")
        if self.episode is None or self.episode.task_id != chosen:
            self.close()
            self.episode = TextEpisode(chosen, make_kwargs=self.make_kwargs)
        self._client_episode_id = episode_id
        _, info = self.episode.reset(seed=seed)
        observation = self._observation(self.episode.last_obs or {}, info, first=True)
        observation.system_prompt = self.episode.system_prompt()
        observation.tools = self.episode.tools
        return observation

    def step(self, action: AgentEnvsAction, timeout_s: Optional[float] = None, **_: Any) -> AgentEnvsObservation:
        if self.episode is None:
            raise RuntimeError("call reset before step")
        result = self.episode.step(action.tool_call if action.tool_call is not None else action.text)
        observation = self._observation(result.observation, result.metadata, first=False)
        observation.reward = result.reward
        observation.done = result.done
        return observation

    def _observation(self, obs: dict[str, Any], info: dict[str, Any], *, first: bool) -> AgentEnvsObservation:
        assert self.episode is not None
        content = message_content(obs, first=first, images=self.episode.images)
        metadata = step_metadata(info)
        if "truncated" in info:
            metadata["truncated"] = info["truncated"]
        return AgentEnvsObservation(
            task_id=self.episode.task_id,
            prompt=content if isinstance(content, str) else content[0]["text"],
            text=str(obs.get("text", "")),
            instruction=str(obs.get("instruction", "")),
            extras={k: to_jsonable(v) for k, v in obs.items() if k not in ("text", "instruction") and not is_image(v)},
            images={} if isinstance(content, str) else _images(obs, content),
            info=metadata,
            metadata=metadata,
        )

    @property
    def state(self) -> AgentEnvsState:
        if self.episode is None:
            return AgentEnvsState()
        summary = self.episode.summary()
        return AgentEnvsState(
            episode_id=self._client_episode_id or self.episode.last_info.get("episode_id"),
            step_count=summary["steps"],
            task_id=summary["task_id"],
            done=summary["done"],
            score=summary["score"],
            success=summary["success"],
            total_reward=summary["return"],
            progress=summary["progress"],
            checks=summary["checks"],
        )

    def get_metadata(self) -> Any:
        return _types.EnvironmentMetadata(
            name="agentenvs",
            description="agentenvs tasks (terminal, swe, web, gui, textgame) behind one API; reset(task_id=...)",
            version=__import__("agentenvs").__version__,
        )

    def close(self) -> None:
        if self.episode is not None:
            self.episode.close()
            self.episode = None


def _images(obs: dict[str, Any], content: list[dict[str, Any]]) -> dict[str, str]:
    keys = [k for k, v in obs.items() if is_image(v)]
    urls = [p["image_url"]["url"] for p in content if p.get("type") == "image_url"]
    return dict(zip(keys, urls))


def create_app(
    task_id: str | None = None,
    make_kwargs: dict[str, Any] | None = None,
    *,
    allowed_tasks: tuple[str, ...] | None = None,
    max_concurrent_envs: int = 8,
) -> Any:
    """OpenEnv's FastAPI app (``create_fastapi_app``) serving ``AgentEnvsEnvironment`` sessions."""
    factory = functools.partial(
        AgentEnvsEnvironment, task_id=task_id, make_kwargs=make_kwargs, allowed_tasks=allowed_tasks
    )
    return _http.create_fastapi_app(
        factory, AgentEnvsAction, AgentEnvsObservation, max_concurrent_envs=max_concurrent_envs
    )


class AgentEnvsClient(_client.EnvClient):
    """OpenEnv's WebSocket client, typed for our action, observation and state."""

    def _step_payload(self, action: AgentEnvsAction | dict[str, Any] | str) -> dict[str, Any]:
        if isinstance(action, str):
            return {"text": action}
        if isinstance(action, dict):
            return dict(action)
        return action.model_dump(exclude={"metadata"}, exclude_none=True)

    def _parse_result(self, payload: dict[str, Any]) -> Any:
        observation = AgentEnvsObservation.model_validate(
            {**payload.get("observation", {}), "reward": payload.get("reward"), "done": payload.get("done", False)}
        )
        return _client_types.StepResult(
            observation=observation, reward=payload.get("reward"), done=payload.get("done", False)
        )

    def _parse_state(self, payload: dict[str, Any]) -> AgentEnvsState:
        return AgentEnvsState.model_validate(payload)


__all__ = [
    "AgentEnvsAction",
    "AgentEnvsClient",
    "AgentEnvsEnvironment",
    "AgentEnvsObservation",
    "AgentEnvsState",
    "create_app",
]
