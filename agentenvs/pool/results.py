"""What an ``EnvPool`` hands back: results, statistics and errors."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentenvs.core.errors import AgentEnvsError


class PoolError(AgentEnvsError):
    """The pool was used wrongly (closed, not started, started twice)."""


class PoolClosedError(PoolError):
    """The pool is closed: nothing more can be submitted or started."""


class UnknownEnvError(PoolError, IndexError):
    """No env has this id; ids run from 0 to ``size - 1``."""


class EnvBusyError(PoolError):
    """The env is not waiting for an action: its step or reset is still running, or it is retired."""


@dataclass(frozen=True)
class PoolResult:
    """One finished env call: a step, or the reset that began an episode (``is_reset``).

    ``episode`` is the pool-wide index of the episode (the order in which
    episodes began), ``step`` the step within it (0 for the reset). When an
    env call raised or ran past its deadline, ``error`` says why, ``obs`` is
    None, and the env is replaced: its next result is the reset of a fresh
    env. ``env_retired`` marks an env's last result: it will start no more
    episodes (the pool's ``episodes`` are all started, or it failed too often).
    """

    env_id: int
    task_id: str
    episode: int
    step: int
    obs: dict[str, Any] | None
    reward: float = 0.0
    terminated: bool = False
    truncated: bool = False
    info: dict[str, Any] = field(default_factory=dict)
    is_reset: bool = False
    error: str | None = None
    #: ``"exception"`` (the env call raised) or ``"timeout"`` (it ran past the pool's deadline).
    error_kind: str | None = None
    env_retired: bool = False
    #: The reference solution's actions for this episode, on reset results when the pool was made with ``oracle=True``.
    oracle_actions: list[Any] | None = None
    #: Seconds the env spent on this call (for a reset: making the env, if one was made, and resetting it).
    env_sec: float = 0.0
    #: Seconds from the request (``submit``, or the end of the previous episode) to this result's delivery.
    total_sec: float = 0.0

    @property
    def first(self) -> bool:
        """The first result of an episode (the reset's observation)."""
        return self.is_reset and self.error is None

    @property
    def done(self) -> bool:
        """The episode is over: it ended, or the env call failed."""
        return self.terminated or self.truncated or self.error is not None

    @property
    def needs_action(self) -> bool:
        """The env now waits for ``submit(env_id, action)``."""
        return not self.done


@dataclass(frozen=True)
class EnvStats:
    """One env slot's work so far. ``busy_sec`` counts time inside env calls (make, reset, step, oracle)."""

    env_id: int
    state: str
    busy_sec: float
    wall_sec: float
    steps: int
    resets: int
    episodes: int
    errors: int

    @property
    def busy_fraction(self) -> float:
        return self.busy_sec / self.wall_sec if self.wall_sec > 0 else 0.0


@dataclass(frozen=True)
class PoolStats:
    """The pool's work since ``start``: per env and in total. ``episodes`` counts episodes that ended."""

    wall_sec: float
    envs: tuple[EnvStats, ...]

    @property
    def busy_sec(self) -> float:
        return sum(e.busy_sec for e in self.envs)

    @property
    def busy_fraction(self) -> float:
        """Mean over envs of the fraction of wall time spent inside env calls."""
        total = self.wall_sec * len(self.envs)
        return self.busy_sec / total if total > 0 else 0.0

    @property
    def episodes(self) -> int:
        return sum(e.episodes for e in self.envs)

    @property
    def steps(self) -> int:
        return sum(e.steps for e in self.envs)

    @property
    def errors(self) -> int:
        return sum(e.errors for e in self.envs)

    @property
    def episodes_per_sec(self) -> float:
        return self.episodes / self.wall_sec if self.wall_sec > 0 else 0.0

    @property
    def steps_per_sec(self) -> float:
        return self.steps / self.wall_sec if self.wall_sec > 0 else 0.0
