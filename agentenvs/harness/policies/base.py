"""The policy interface: what every policy (chat model, HTTP server, oracle, ...) implements.

Policies know nothing of the runner. At the start of an episode they get an
``EpisodeStart`` (task, tools, prompt description, seed); each step they get
a ``StepInput`` (the observation and what the last action did) and return a
``Decision``. Failures of the policy's machinery (a server that is down,
answers garbage or hangs) raise ``PolicyUnavailable``: the runner treats
them as infrastructure errors, retries the episode and never scores them.
What the policy *decides* (an unknown tool, bad arguments, no action) goes
to the env, which scores it as the agent's error.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

#: What a policy returns when it produced no action: the env rejects it as
#: an agent error (a wasted step with ``info["action_error"]``).
NO_ACTION = ""


class PolicyError(Exception):
    """Base class of policy failures."""


class PolicyUnavailable(PolicyError):
    """The policy server is unreachable, overloaded (429, 5xx) or hung, after retries.

    An infrastructure error: the episode is retried and never scored.
    """


class PolicyRequestError(PolicyError):
    """The policy server refused the request (a 4xx other than 429).

    The agent's failure: not retried; the episode ends, scored 0, with this message
    as its error (a wrong key or model name therefore shows as a run of failures
    whose error says so).
    """


class PolicyConfigError(PolicyError, ValueError):
    """The policy was configured wrongly (missing option, unreadable file). Raised before a run starts."""


@dataclass(frozen=True)
class EpisodeStart:
    """What a policy learns when an episode begins."""

    episode_id: str
    task_id: str
    family: str
    trial: int
    seed: int
    instruction: str
    tools: list[dict[str, Any]]
    prompt_description: str
    task_path: Path | None = None
    task_params: dict[str, Any] = field(default_factory=dict)
    #: The env's own solver (``env.unwrapped.oracle_actions()``), filled only for policies that ask.
    oracle_actions: list[Any] | None = None


@dataclass(frozen=True)
class Feedback:
    """The training signal after a step: never given to a policy under evaluation."""

    reward: float
    checks: dict[str, bool]
    progress: float


@dataclass(frozen=True)
class StepInput:
    """What a policy sees before choosing its next action.

    ``feedback`` is ``None`` unless the run passes it (``--policy-feedback``).
    """

    step: int
    observation: dict[str, Any]
    action_error: str | None = None
    feedback: Feedback | None = None


@dataclass
class Decision:
    """A policy's answer for one step.

    ``usage`` holds token counts (``prompt_tokens``, ``completion_tokens``,
    ``total_tokens``) where the policy has them; ``message`` is the raw text
    the policy produced besides the action (a model's reasoning), for the
    trajectory; ``note`` explains a ``NO_ACTION``. ``trace`` is what a chat policy sampled, for training
    (token ids, logprobs, the sampled message, the request's messages: see ``trace.py``), recorded in the
    step's line.
    """

    action: Any
    usage: dict[str, int] | None = None
    message: str | None = None
    note: str | None = None
    retries: int = 0
    trace: dict[str, Any] | None = None


class Policy(ABC):
    """Chooses actions. One instance serves every episode of a run, concurrently."""

    #: The ``--policy`` name.
    name: ClassVar[str] = ""
    #: Whether the runner should fill ``EpisodeStart.oracle_actions`` from the env.
    needs_oracle: ClassVar[bool] = False
    #: Whether the runner's per-step deadline applies (not for people typing).
    step_deadline: ClassVar[bool] = True
    #: A cap on episodes in flight (a person plays one at a time).
    max_concurrency: ClassVar[int | None] = None
    #: ``reset``/``act``/``end`` never await and return at once (a plan, a seeded RNG): the runner
    #: calls them inside the env's worker thread, with no event-loop round trip per step. A subclass
    #: that overrides one of them is not inline unless it says so itself.
    inline: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "inline" not in cls.__dict__ and any(name in cls.__dict__ for name in ("reset", "act", "end")):
            cls.inline = False

    async def reset(self, start: EpisodeStart) -> None:
        """Begin an episode. Several episodes may be in flight at once: key state by ``episode_id``."""

    @abstractmethod
    async def act(self, start: EpisodeStart, step: StepInput) -> Decision:
        """Choose the next action for the episode ``start`` describes."""

    async def end(self, start: EpisodeStart) -> None:
        """Forget an episode's state."""

    def describe(self) -> dict[str, Any]:
        """What ``run.json`` records about this policy (never secrets)."""
        return {"name": self.name}

    async def aclose(self) -> None:
        """Release clients and connections."""
