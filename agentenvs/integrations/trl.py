"""TRL: any agentenvs task as a ``GRPOTrainer`` ``environment_factory`` (``pip install 'agentenvs[trl]'``).

TRL (1.16) calls the factory for each concurrent rollout and reuses the
instances: before a rollout it calls ``reset(**dataset_row)`` and appends what
that returns to the row's last user message; every public method of the
instance's class is a tool the model may call (its signature and docstring
are the schema); ``get_reward()`` after the rollout is a reward with weight 1::

    from agentenvs.integrations.trl import AgentEnvsFactory, dataset_rows

    factory = AgentEnvsFactory(make_kwargs={"backend": "docker"})
    trainer = GRPOTrainer(model=..., train_dataset=Dataset.from_list(dataset_rows(["terminal/fix-permissions"])),
                          environment_factory=factory, args=GRPOConfig(...))
    with factory:  # closes whatever a crashed run left open
        trainer.train()

So ``AgentEnvsEnvironment`` has one tool, ``act(action)``: the family's native
action as a string (a shell command, a game command, a BrowserGym call,
``done``/``fail``), or a JSON tool call of the family's own tools
(``{"name": "submit", "arguments": {"answer": "42"}}``), read as
``common.action_from_text`` reads a reply. It returns the next observation's
text (and the family's extras). A row names its task with ``task_id`` (else
the factory's) and its initial state with ``seed``.

``get_reward()`` is the task evaluator's final score. A rollout that TRL ends
before the episode (the model answered without a tool call, or hit
``max_tool_calling_iterations`` or ``max_completion_length``) is first ended
with ``done``, so the evaluator grades the state the model left
(``unfinished="zero"`` scores it 0 instead). Then the env is closed: TRL keeps
its instances for the whole run and never closes them, so a sandbox, container
or browser lives only from ``reset`` to ``get_reward``; the factory's
``close()`` (or ``with factory:``) closes any still open.

Images: with ``images="auto"`` an observation's screenshot is returned as
``{"type": "image", "image": <PIL image>}`` content parts after the text, the
form TRL passes to a vision-language model's processor (in the first user
message and in tool results). The default, ``"never"``, keeps everything text,
which a text-only model's chat template needs.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agentenvs.harness.policies.prompts import FAMILY_HINTS
from agentenvs.integrations.common import (
    ImageMode,
    TextEpisode,
    observation_images,
    render_observation,
    require,
)

require("trl", "trl", "trl")

Unfinished = Literal["grade", "zero"]

#: Told to the model in the system prompt: how the one tool takes every family's actions.
HOW_TO_ACT = (
    "You are an agent solving a task in an interactive environment. Act by calling the `act` tool with "
    "one action at a time; its result is what the environment shows next. When the task is complete, "
    'call act with "done"; if it cannot be done, with "fail"; if the task asks for an answer, with '
    '{"name": "submit", "arguments": {"answer": "..."}}.'
)
#: Appended to the tool result that ends the episode, so the model stops calling the tool.
EPISODE_OVER = "[The episode is over.]"


def _family(task_id: str) -> str:
    return task_id.split("/", 1)[0]


def system_prompt(task_id: str, prompt_description: str = "") -> str:
    """How to act through ``act`` in the task's family, for a row's system message."""
    parts = [HOW_TO_ACT, FAMILY_HINTS.get(_family(task_id), ""), prompt_description.strip()]
    return "\n\n".join(part for part in parts if part)


def dataset_rows(task_ids: Sequence[str], seeds: Sequence[int] = (0,)) -> list[dict[str, Any]]:
    """One ``GRPOTrainer`` row per (task, seed): a system message, an empty user message that ``reset``
    fills with the instruction and first observation, and the ``task_id`` and ``seed`` it reads."""
    import agentenvs

    descriptions: dict[str, str] = {}
    for task_id in task_ids:
        env = agentenvs.make(task_id)
        descriptions[task_id] = str(getattr(env.unwrapped, "prompt_description", ""))
        env.close()
    return [
        {
            "prompt": [
                {"role": "system", "content": system_prompt(task_id, descriptions[task_id])},
                {"role": "user", "content": ""},
            ],
            "task_id": task_id,
            "seed": int(seed),
        }
        for task_id in task_ids
        for seed in seeds
    ]


def _with_images(text: str, obs: dict[str, Any], images: ImageMode) -> str | list[dict[str, Any]]:
    """``text``, or text and PIL image parts (TRL's multimodal content) when images are wanted and present."""
    pictures = observation_images(obs) if images == "auto" else {}
    if not pictures:
        return text
    from PIL import Image

    return [{"type": "text", "text": text}] + [
        {"type": "image", "image": Image.fromarray(array)} for array in pictures.values()
    ]


@dataclass(frozen=True)
class RolloutSettings:
    """What every rollout slot of a factory shares, checked when the factory is made (not inside TRL's run)."""

    task_id: str | None = None
    make_kwargs: dict[str, Any] = field(default_factory=dict)
    images: ImageMode = "never"
    unfinished: Unfinished = "grade"

    def __post_init__(self) -> None:
        if self.images not in ("auto", "never"):
            raise ValueError(f"images must be 'auto' or 'never', got {self.images!r}")
        if self.unfinished not in ("grade", "zero"):
            raise ValueError(f"unfinished must be 'grade' or 'zero', got {self.unfinished!r}")


class AgentEnvsEnvironment:
    """One TRL rollout slot: ``reset`` starts an episode, ``act`` is the tool, ``get_reward`` grades and
    releases. Every public method is a tool to TRL, so everything else here is private."""

    def __init__(self, settings: RolloutSettings):
        self._settings = settings
        self._episode: TextEpisode | None = None
        self._score = 0.0
        self._summary: dict[str, Any] = {}

    def reset(self, task_id: str | None = None, seed: int | None = None, **row: Any) -> str | list[dict[str, Any]]:
        """Start the row's task (``task_id``, else the factory's) with its ``seed``; the instruction and first
        observation, for TRL to append to the prompt. The other columns of the row are not read."""
        chosen = task_id or self._settings.task_id
        if not chosen:
            raise ValueError('no task: give the dataset rows a "task_id" column (or the factory a task_id)')
        self._close()
        self._score, self._summary = 0.0, {}
        self._episode = TextEpisode(
            chosen, seed=None if seed is None else int(seed), make_kwargs=self._settings.make_kwargs, images="never"
        )
        text, _ = self._episode.reset()
        return _with_images(str(text), self._episode.last_obs or {}, self._settings.images)

    def act(self, action: str) -> str | list[dict[str, Any]]:
        """Take one action in the environment and see what it shows next.

        Args:
            action: One action: a shell command, a game command or a browser call (whatever the task's
                environment takes), "done" when the task is complete, "fail" if it cannot be done, or a JSON
                tool call such as {"name": "submit", "arguments": {"answer": "42"}}.

        Returns:
            The environment's next observation.
        """
        episode = self._episode
        if episode is None:
            return "No episode is running."
        if episode.done:
            return EPISODE_OVER
        result = episode.step(action)
        text = render_observation(result.observation, first=False)
        if result.done:
            text = f"{text}\n{EPISODE_OVER}"
        return _with_images(text, result.observation, self._settings.images)

    def get_reward(self) -> float:
        """The evaluator's final score of this rollout's episode; the episode's env is closed after."""
        episode = self._episode
        if episode is None:
            return self._score
        if not episode.done and self._settings.unfinished == "grade":
            episode.step("done")
        self._score = episode.score
        self._summary = episode.summary()
        self._close()
        return self._score

    @property
    def summary(self) -> dict[str, Any]:
        """The last graded episode: score, success, return, steps, checks (``TextEpisode.summary``)."""
        return dict(self._summary)

    def _close(self) -> None:
        """Release the episode's env (its sandbox, container or browser)."""
        if self._episode is not None:
            episode, self._episode = self._episode, None
            episode.close()


class AgentEnvsFactory:
    """TRL's ``environment_factory``: each call is a new ``AgentEnvsEnvironment`` with these settings.
    It remembers what it made so that ``close()`` releases what a run that stopped midway left open."""

    def __init__(
        self,
        task_id: str | None = None,
        *,
        make_kwargs: dict[str, Any] | None = None,
        images: ImageMode = "never",
        unfinished: Unfinished = "grade",
    ):
        self.settings = RolloutSettings(task_id, dict(make_kwargs or {}), images, unfinished)
        self.instances: list[AgentEnvsEnvironment] = []
        self._lock = threading.Lock()

    def __call__(self) -> AgentEnvsEnvironment:
        instance = AgentEnvsEnvironment(self.settings)
        with self._lock:
            self.instances.append(instance)
        return instance

    def close(self) -> None:
        """Close every env still open (one whose rollout never reached ``get_reward``)."""
        with self._lock:
            instances = list(self.instances)
        for instance in instances:
            instance._close()

    def __enter__(self) -> AgentEnvsFactory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["AgentEnvsEnvironment", "AgentEnvsFactory", "RolloutSettings", "dataset_rows", "system_prompt"]
