"""``AgentEnv``: the one Gymnasium contract every family implements.

The base class owns everything families share: action parsing, the step
and time budgets, checkpoints and progress, sparse or dense rewards, the
final verdict, and the info keys. A family implements five hooks:
``_begin`` (build the task's initial state), ``_act`` (do one parsed
action), ``_check`` (evaluate checkpoints on the current state),
``_verify`` (the final score) and ``_end`` (release the episode).
Snapshot, restore and fork come from ``Branching`` (``branching.py``).

Who is to blame when a step fails: ``ActionError`` from parsing or ``_act``
is a malformed action (a spent step). An ``InfraError`` is the machinery's
failure: the episode ends unscored (``error_kind="infra"``) and the harness
retries it. Anything else raised while acting, checking or verifying after
the agent acted (``AgentFault``, but also ``IsADirectoryError``,
``UnicodeDecodeError``, ``RecursionError`` provoked by the state the agent
left) is the agent's failure: the episode ends with score 0 and
``error_kind="agent"``, and the env can be reset as usual. A family whose
sandbox died because of the agent raises ``AgentFault``, not ``InfraError``.
"""

from __future__ import annotations

import copy
import os
import sysconfig
import time
import traceback
import uuid
from abc import abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import gymnasium as gym
from gymnasium import spaces

from agentenvs.core.actions import CONTROL_TOOLS, ParsedAction, parse_action, tool_names
from agentenvs.core.branching import Branching
from agentenvs.core.checks import Verdict, progress
from agentenvs.core.errors import ActionError, InfraError, MachineLacksError, NoTaskChosenError
from agentenvs.core.hacks import COMMON_HACKS, Hack
from agentenvs.core.registry import get_family
from agentenvs.core.spaces import Unicode
from agentenvs.core.task import Task, load_task

RewardMode = Literal["sparse", "dense"]
MAX_TEXT_CHARS = 1 << 20


@dataclass
class StepOutcome:
    """What a family's ``_begin`` or ``_act`` produced.

    ``terminated`` is for states the task itself ends in (a game won or
    lost); control actions (done/fail/submit) are handled by the base class.
    """

    text: str
    extras: dict[str, Any] = field(default_factory=dict)
    terminated: bool = False
    info: dict[str, Any] = field(default_factory=dict)
    #: Reward paid now, on account of the final score (a multi-step task's finished step); the
    #: last step pays the rest, so an episode's rewards still sum to its score.
    reward: float = 0.0


class AgentEnv(Branching, gym.Env[dict[str, Any], Any]):
    """Base class of every agentenvs environment. See DESIGN.md for the contract."""

    family: ClassVar[str] = ""
    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "render_fps": 4}
    #: The family's native tools as OpenAI function schemas (done/fail/submit are added).
    native_tools: ClassVar[list[dict[str, Any]]] = []
    #: How to act in this family, for an LLM's system prompt.
    prompt_description: ClassVar[str] = ""
    #: The family's own known reward hacks, tried by ``agentenvs audit`` after the common ones.
    family_hacks: ClassVar[tuple[Hack, ...]] = ()

    def __init__(
        self,
        task_id: str | None = None,
        *,
        task: Task | str | os.PathLike[str] | None = None,
        reward_mode: RewardMode = "sparse",
        dense_checks: bool = True,
        max_steps: int | None = None,
        render_mode: str | None = None,
    ):
        if reward_mode not in ("sparse", "dense"):
            raise ValueError(f"reward_mode must be 'sparse' or 'dense', got {reward_mode!r}")
        if reward_mode == "dense" and not dense_checks:
            raise ValueError("reward_mode='dense' pays the checkpoints' progress: it needs dense_checks=True")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.reward_mode: RewardMode = reward_mode
        #: False: no checkpoint runs at reset or per step (``info["checks"]`` is empty, progress 0),
        #: for work that wants only the final score, such as an audit.
        self.dense_checks = dense_checks
        self.render_mode = render_mode
        self._max_steps_override = max_steps
        self._default_task = self._as_task(task) if task is not None else self._load_task(task_id) if task_id else None
        self.observation_space = spaces.Dict(
            {"instruction": Unicode(MAX_TEXT_CHARS), "text": Unicode(MAX_TEXT_CHARS), **self._extra_spaces()}
        )
        self.action_space = Unicode(MAX_TEXT_CHARS)
        self._task: Task | None = None
        self._running = False
        self._ended = False
        self._last_obs: dict[str, Any] | None = None
        self._init_branching()

    # -- what families provide -------------------------------------------------

    def _extra_spaces(self) -> dict[str, spaces.Space[Any]]:
        """Spaces of the family's observation extras (``exit_code``, ``url``, ...)."""
        return {}

    @abstractmethod
    def _begin(self, task: Task, seed: int) -> StepOutcome:
        """Build the task's initial state. The same seed must give the same state."""

    @abstractmethod
    def _act(self, action: ParsedAction) -> StepOutcome:
        """Carry out one native or tool action. Raise ``ActionError`` for bad arguments.

        ``InfraError`` only for failures that are not the agent's; ``AgentFault`` (or any
        other exception) ends the episode as the agent's failure.
        """

    @abstractmethod
    def _check(self, task: Task) -> dict[str, bool]:
        """Evaluate the task's checkpoints on the current state."""

    @abstractmethod
    def _verify(self, task: Task, final_action: ParsedAction | None) -> Verdict:
        """Grade the final state. Called once per episode, after the agent is done."""

    @abstractmethod
    def _state_hash(self) -> str:
        """A digest of the current state, for seeding and reproducibility checks."""

    def _end(self) -> None:
        """Release what the episode holds (the env may reset again afterwards)."""

    def _release(self) -> None:
        """Release everything, for ``close``."""

    def _advance(self, action: ParsedAction) -> StepOutcome | None:
        """``done``/``submit`` in a task of several steps: an outcome to go on with, or None to end."""
        return None

    def _instruction(self) -> str:
        """What the agent is told now (a multi-step task's current step)."""
        assert self._task is not None
        return self._task.instruction

    def episode_artifacts(self) -> dict[str, bytes]:
        """Files the last episode left for the run's records (relative path -> bytes)."""
        return {}

    def oracle_actions(self, variant: str = "oracle") -> list[Any]:
        """Actions that carry out the task's reference solution from the current state.

        ``variant="oracle"`` is the solution that must score 1; ``"wrong"`` is
        the task's plausible mistake (``solution/wrong.sh``), which must not.
        Families stage whatever the solution needs; call after ``reset``.
        """
        raise NotImplementedError(f"{type(self).__name__} has no {variant} solution")

    def audit_hacks(self) -> list[Hack]:
        """The known reward hacks ``agentenvs audit`` tries: the common ones, then the family's."""
        return [*COMMON_HACKS, *self.family_hacks]

    def _unchanged_extras(self) -> dict[str, Any]:
        """Observation extras for a step that changed nothing (a malformed action)."""
        if self._last_obs is None:
            return {}
        return {k: copy.deepcopy(v) for k, v in self._last_obs.items() if k not in ("instruction", "text")}

    # -- the public API -----------------------------------------------------------

    @property
    def action_tools(self) -> list[dict[str, Any]]:
        """OpenAI tool schemas for every action this family accepts."""
        return [*self.native_tools, *CONTROL_TOOLS]

    @property
    def task(self) -> Task | None:
        return self._task

    def _load_task(self, task_id: str) -> Task:
        if "/" in task_id:
            family, _, task_id = task_id.partition("/")
            if family != self.family:
                raise ValueError(f"{type(self).__name__} runs {self.family!r} tasks, not {family!r}")
        return get_family(self.family).source.load(task_id)

    def _as_task(self, task: Task | str | os.PathLike[str]) -> Task:
        """``task=``: a loaded ``Task``, a task id (``"coin-easy-0"`` or ``"textgame/coin-easy-0"``) or a task directory."""
        if isinstance(task, Task):
            return task
        if isinstance(task, os.PathLike):
            return load_task(task)
        if isinstance(task, str):
            return self._load_task(task)
        raise TypeError(f"task must be a Task, a task id or a task directory, got {type(task).__name__}")

    def _pick_task(self, options: dict[str, Any]) -> Task:
        """The episode's task: ``options["task"]``/``["task_id"]``, else the env's own; never a guess."""
        chosen = options.get("task") or options.get("task_id")
        if chosen is not None:
            return self._as_task(chosen)
        if self._default_task is not None:
            return self._default_task
        ids = get_family(self.family).source.ids()
        example = f"{self.family}/{ids[0]}" if ids else f"{self.family}/<task>"
        raise NoTaskChosenError(
            f"no task chosen for this {self.family} env: pass one to gymnasium.make "
            f"(gymnasium.make('agentenvs/{self.family}-v0', task_id='{example}')), or to reset "
            f"(options={{'task_id': '{example}'}}); `agentenvs list --family {self.family}` lists them"
        )

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        task = self._pick_task(options or {})
        if self._running:
            self._end()
        self._running = False
        episode_seed = seed if seed is not None else int(self.np_random.integers(0, 2**31 - 1))
        self._task = task
        # Drawn from the seeded generator so that the same seed gives the same info.
        self._episode_id = uuid.UUID(bytes=self.np_random.bytes(16), version=4).hex
        self._step_count = 0
        self._prev_progress = 0.0
        self._paid = 0.0
        self._ended = False
        self._log = None  # recorded again once this reset has succeeded
        outcome = self._begin(task, episode_seed)
        self._running = True
        self._t0 = self._step_started = time.monotonic()
        checks = self._check(task) if self.dense_checks else {}
        obs = self._observation(outcome)
        info = self._base_info(checks)
        info["state_hash"] = self._state_hash()
        info["seed"] = episode_seed
        info.update(outcome.info)
        self._log_reset(task, episode_seed, options, obs, info)
        # The agent's clock starts when it first sees the task.
        self._t0 = self._step_started = time.monotonic()
        return obs, info

    def step(self, action: Any):
        if self._task is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        if self._ended:
            obs = copy.deepcopy(self._last_obs or self._observation(StepOutcome(text="")))
            obs["text"] = "The episode is over; call reset() to start a new one."
            info = self._base_info({}, action_error="episode is over; call reset()")
            return obs, 0.0, True, False, info
        result = self._step(self._task, action)
        self._log_step(action, result)
        return result

    def _step(self, task: Task, action: Any):
        self._step_count += 1
        self._step_started = time.monotonic()
        try:
            return self._play(task, action)
        except InfraError as exc:
            return self._infra_failure(exc)
        except Exception as exc:  # noqa: BLE001 - whatever the agent's action provoked is the agent's failure
            return self._agent_fault(exc)

    def _play(self, task: Task, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """One step: act, check, and on the last step verify. ``step`` classifies what this raises."""
        action_error: str | None = None
        final_action: ParsedAction | None = None
        terminated = False
        try:
            parsed = parse_action(action, tool_names(self.native_tools))
            advanced = self._advance(parsed) if parsed.kind in ("done", "submit") else None
            if advanced is not None:
                outcome = advanced
            elif parsed.kind in ("done", "fail", "submit"):
                final_action = parsed
                terminated = True
                outcome = StepOutcome(text=f"Episode ended by {parsed.kind}.", extras=self._unchanged_extras())
            else:
                outcome = self._act(parsed)
                terminated = outcome.terminated
        except ActionError as exc:
            action_error = str(exc)
            outcome = StepOutcome(text=f"Invalid action: {exc}", extras=self._unchanged_extras())
        checks = self._check(task) if self.dense_checks else {}
        info = self._base_info(checks, action_error=action_error)
        if action_error is not None:
            info["error_kind"] = "agent"
        info.update(outcome.info)
        obs = self._observation(outcome)
        reward = outcome.reward
        self._paid += outcome.reward
        if self.reward_mode == "dense":
            reward = info["progress"] - self._prev_progress
        self._prev_progress = info["progress"]
        truncated = False
        if not terminated:
            if self._step_count >= self.max_steps:
                truncated = True
            elif time.monotonic() - self._t0 > task.config.agent.timeout_sec:
                truncated = True
                info["error_kind"] = "timeout"
        if terminated or truncated:
            verdict = self._verify(task, final_action)
            info.update(verdict.as_info())
            if final_action is not None:
                info["final_action"] = final_action.kind
                info["answer"] = final_action.text
            reward += verdict.score - self._paid
            self._ended = True
        return obs, float(reward), terminated, truncated, info

    @property
    def max_steps(self) -> int:
        if self._max_steps_override is not None:
            return self._max_steps_override
        return self._task.config.limits.max_steps if self._task else 50

    def render(self) -> str | None:
        if self.render_mode == "ansi" and self._last_obs is not None:
            return str(self._last_obs["text"])
        return None

    def close(self) -> None:
        if self._running:
            self._end()
            self._running = False
        self._release()
        super().close()

    # -- helpers ------------------------------------------------------------------

    def _observation(self, outcome: StepOutcome) -> dict[str, Any]:
        assert self._task is not None
        text = outcome.text
        if len(text) > MAX_TEXT_CHARS:
            text = text[: MAX_TEXT_CHARS - 40] + "\n[... observation truncated ...]"
        obs = {"instruction": self._instruction(), "text": text, **outcome.extras}
        self._last_obs = obs
        return obs

    def _base_info(self, checks: dict[str, bool], action_error: str | None = None) -> dict[str, Any]:
        assert self._task is not None
        return {
            "task_id": self._task.full_id,
            "episode_id": self._episode_id,
            "step": self._step_count,
            # Agent time since reset, taken when the step began and rounded: info must be
            # identical for the same seed and actions (Gymnasium's determinism check).
            # The harness times every step precisely itself.
            "elapsed_sec": round(self._step_started - self._t0, 1),
            "action_error": action_error,
            "checks": dict(checks),
            "progress": progress(self._task.config.checkpoints, checks),
        }

    def _infra_failure(self, exc: InfraError):
        """The machinery failed: end the episode, unscored, so the harness can retry it."""
        info = self._base_info({}, action_error=None)
        info.update({"error_kind": "infra", "error": str(exc), "score": 0.0, "success": False})
        if isinstance(exc, MachineLacksError):
            info["retryable"] = False  # the machine will lack it next time too
        return self._ending(info, f"Environment error: {exc}", 0.0, terminated=False)

    def _agent_fault(self, exc: Exception):
        """The agent's action made the env raise: the episode ends as the agent's failure, scored 0.

        The checks are unknown (checking may be what failed), so progress ends at 0; in
        dense mode the step's reward takes back the progress paid so far, so rewards still
        sum to the final progress plus the score. The observation names only the
        exception's type; ``info["error"]`` has the message and where it was raised.
        """
        info = self._base_info({}, action_error=None)
        info.update({"error_kind": "agent", "error": describe_fault(exc), "score": 0.0, "success": False})
        reward = -self._paid - (self._prev_progress if self.reward_mode == "dense" else 0.0)
        self._prev_progress = self._paid = 0.0
        text = f"Episode over: your action made the environment fail ({type(exc).__name__}); scored 0."
        return self._ending(info, text, reward, terminated=True)

    def _ending(self, info: dict[str, Any], text: str, reward: float, *, terminated: bool):
        self._ended = True
        obs = copy.deepcopy(self._last_obs or {"instruction": self._task.instruction if self._task else "", "text": ""})
        obs["text"] = text
        return obs, float(reward), terminated, not terminated, info


_LIBRARY_DIRS = tuple(sorted({os.path.join(sysconfig.get_paths()[k], "") for k in ("stdlib", "purelib", "platlib")}))
_PACKAGE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "")


def _ours(filename: str) -> bool:
    return filename.startswith(_PACKAGE_DIR) or not filename.startswith(_LIBRARY_DIRS)


def describe_fault(exc: BaseException, limit: int = 2000) -> str:
    """``Type: message (at file:line in function)``, cut to ``limit`` characters.

    The place is the innermost frame of agentenvs or of code outside the standard
    library and installed packages: the family code that met the agent's state.
    """
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if _ours(f.filename)] or frames
    where = f" (at {os.path.basename(ours[-1].filename)}:{ours[-1].lineno} in {ours[-1].name})" if ours else ""
    text = f"{type(exc).__name__}: {exc}"
    if len(text) + len(where) > limit:
        text = text[: max(0, limit - len(where) - 3)] + "..."
    return text + where
