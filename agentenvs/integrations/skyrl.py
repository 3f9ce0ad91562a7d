"""SkyRL: any agentenvs task as a skyrl-gym ``BaseTextEnv`` (``pip install 'agentenvs[skyrl]'``).

SkyRL's generator makes one env per trajectory with
``skyrl_gym.make(env_class, env_config=cfg.environment.skyrl_gym[env_class], extras=row["env_extras"])``,
calls ``init(prompt)`` once, then ``step(model_output)`` until ``done``. Register
ours once per process (in the trainer's entry point, before the generator runs)::

    from agentenvs.integrations.skyrl import register
    register()  # skyrl_gym id "agentenvs"

and give each dataset row ``env_class: "agentenvs"`` and
``env_extras: {"task_id": "textgame/coin-easy-0", "seed": 0}``. ``env_config``
(the ``skyrl_gym.agentenvs`` section of the config) holds defaults for every
row: ``make_kwargs`` (passed to ``agentenvs.make``: ``backend``, ``reward_mode``,
``screenshot``, ...), ``images`` (``"auto"``/``"never"``) and ``system_prompt``
(``True`` adds the env's system prompt when the row's prompt has none). A row's
``make_kwargs`` override the config's.

Per step: ``reward`` is the env's own (sparse: the score on the last step;
dense: progress deltas plus the score), ``metadata`` carries ``checks``,
``progress``, ``action_error`` and, on the last step, ``score`` and
``success``; ``get_metrics()`` gives the episode's score, success, return,
steps and progress for SkyRL's metric aggregation. The generator's
``max_turns`` (it writes it into ``extras``) becomes the env's ``max_steps``
unless ``make_kwargs`` set one, so the last turn is graded, not cut off.

Images: an observation with a ``screenshot`` becomes a user message whose
content is ``[{"type": "text"}, {"type": "image_url"}]`` parts (a PNG data
URL), the OpenAI form SkyRL's VLM generator (``SkyRLVLMGymGenerator``) renders
through the inference server. The text-only ``SkyRLGymGenerator`` tokenizes
with the model's chat template, so use ``images: "never"`` with a text model.
"""

from __future__ import annotations

import copy
from typing import Any

from agentenvs.integrations.common import TextEpisode, require, step_metadata

_base = require("skyrl_gym.envs.base_text_env", "skyrl", "skyrl-gym")
skyrl_gym = require("skyrl_gym", "skyrl", "skyrl-gym")

ENV_ID = "agentenvs"


def _plain(value: Any) -> Any:
    """An OmegaConf config (SkyRL's) or any mapping as plain dicts and lists."""
    if value is None:
        return {}
    try:
        from omegaconf import DictConfig, ListConfig, OmegaConf

        if isinstance(value, (DictConfig, ListConfig)):
            return OmegaConf.to_container(value, resolve=True)
    except ImportError:  # pragma: no cover - skyrl-gym depends on omegaconf
        pass
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if hasattr(value, "items"):
        return {key: _plain(item) for key, item in value.items()}
    return value


def _task_id(extras: dict[str, Any]) -> str:
    for where in (extras, extras.get("extra_info") or {}):
        if isinstance(where, dict) and isinstance(where.get("task_id"), str):
            return where["task_id"]
    raise ValueError(
        'the agentenvs env needs a task: give the dataset row env_extras {"task_id": "<family>/<task-id>"}'
        f" (got keys {sorted(extras)})"
    )


class AgentEnvsTextEnv(_base.BaseTextEnv):
    """An agentenvs task behind SkyRL's ``init``/``step``/``close``; see the module docstring."""

    def __init__(self, env_config: Any = None, extras: dict[str, Any] | None = None):
        super().__init__()
        config, extras = _plain(env_config), _plain(extras)
        make_kwargs = {**(config.get("make_kwargs") or {}), **(extras.get("make_kwargs") or {})}
        if extras.get("max_turns") is not None:
            self.max_turns = int(extras["max_turns"])
            make_kwargs.setdefault("max_steps", self.max_turns)
        self.add_system_prompt = bool(config.get("system_prompt", True))
        seed = extras.get("seed", config.get("seed"))
        self.episode = TextEpisode(
            _task_id(extras),
            seed=None if seed is None else int(seed),
            make_kwargs=make_kwargs,
            images=extras.get("images", config.get("images", "auto")),
        )

    def init(self, prompt: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Reset the env: the prompt plus a user message with the instruction and first observation."""
        content, info = self.episode.reset()
        messages = copy.deepcopy(list(prompt or []))
        if self.add_system_prompt and not any(m.get("role") == "system" for m in messages):
            messages.insert(0, {"role": "system", "content": self.episode.system_prompt()})
        messages.append({"role": "user", "content": content})
        self.turns = 0
        return messages, step_metadata(info)

    def step(self, action: str) -> dict[str, Any]:
        """One env step with the model's output; the next observation as a user message unless done."""
        self.turns += 1
        result = self.episode.step(action)
        observations = [] if result.done else [{"role": "user", "content": result.content}]
        return _base.BaseTextEnvStepOutput(
            observations=observations, reward=result.reward, done=result.done, metadata=result.metadata
        )

    def get_metrics(self) -> dict[str, Any]:
        summary = self.episode.summary()
        return {key: summary[key] for key in ("score", "success", "return", "steps", "progress")}

    def close(self) -> None:
        self.episode.close()


def register(env_id: str = ENV_ID) -> str:
    """Register ``AgentEnvsTextEnv`` in skyrl-gym's registry under ``env_id`` (again is a no-op)."""
    if env_id not in skyrl_gym.registry:
        skyrl_gym.register(id=env_id, entry_point=f"{__name__}:AgentEnvsTextEnv")
    return env_id


__all__ = ["ENV_ID", "AgentEnvsTextEnv", "register"]
