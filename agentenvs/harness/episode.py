"""One episode: reset, then policy and env in turn until the env ends it.

An episode plays in a worker thread (its runner lane), so the env is called
directly, with no thread handoff per step. An ``inline`` policy (oracle,
random, replay) is called in that thread too; any other policy's coroutine
runs on the event loop, under the run's policy-call limit.

Deadlines: each policy decision (``policy_timeout``), each env call
(``env_timeout``) and the whole episode (``episode_timeout``). The lane
publishes the env call in flight; the runner's watchdog on the event loop
abandons a call that overruns its deadline. An env or policy server that
fails or misses its deadline is an infrastructure problem
(``EpisodeInfraError``); an episode that runs out of time is graded on its
final state and marked ``timeout``. What the policy answers is the agent's:
an action too large or too deeply nested to send is replaced by
``NO_ACTION`` (a spent step), and a policy that refuses (a 4xx) or raises
ends the episode as the agent's failure, scored 0 (``PolicyGaveUp``).

The policy gets observations and its own action errors; rewards, checks and
progress only when the run asks for feedback (training).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import secrets
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from agentenvs.core import Task
from agentenvs.core.actions import action_problem
from agentenvs.core.env import describe_fault
from agentenvs.harness.bounds import bounded_message, refused_record
from agentenvs.harness.executor import EnvHandle
from agentenvs.harness.lane import Abandoned, Lane
from agentenvs.harness.observation import is_image, split_observation, to_jsonable
from agentenvs.harness.policies import (
    NO_ACTION,
    Decision,
    EpisodeStart,
    Feedback,
    Policy,
    PolicyError,
    PolicyRequestError,
    PolicyUnavailable,
    StepInput,
)
from agentenvs.harness.policies.trace import split_trace
from agentenvs.harness.rendering import STEP_BUDGET_SPENT
from agentenvs.harness.trajectory import TrajectoryWriter

T = TypeVar("T")

INFO_KEYS = (
    "action_error",
    "error_kind",
    "error",
    "checks",
    "progress",
    "score",
    "success",
    "final_action",
    "answer",
    "model_patch",
    "instance_id",
    "integrity_flags",
    "warnings",
    "task_step",
    "task_steps",
)


class EpisodeInfraError(Exception):
    """The episode could not be played to the end for reasons that are not the agent's.

    ``retryable`` says whether another attempt could help.
    """

    def __init__(self, message: str, retryable: bool = True):
        super().__init__(message)
        self.retryable = retryable


class PolicyGaveUp(Exception):
    """The policy refused (a 4xx) or raised: the episode ends as the agent's failure, scored 0."""


@dataclass(frozen=True)
class Deadlines:
    policy: float | None
    env: float
    reset: float
    episode: float


@dataclass
class EpisodeResult:
    """What the episode record is made of (see docs/run-format.md)."""

    episode_id: str
    env_episode_id: str | None
    success: bool
    score: float
    steps: int
    error_kind: str | None
    error: str | None
    final_action: str | None
    progress: float
    checks: dict[str, bool]
    action_errors: int
    verifier_detail: str | None
    policy_sec: float = 0.0
    env_sec: float = 0.0
    tokens: dict[str, int] = field(default_factory=lambda: {"prompt": 0, "completion": 0, "total": 0})
    policy_retries: int = 0
    integrity_flags: list[str] = field(default_factory=list)
    #: What the task asked for and did not get (network, unknown keys, an unscorable reward file).
    warnings: list[str] = field(default_factory=list)
    #: A multi-step task's graded steps: ``{"name", "reward", "metrics"}`` each.
    task_steps: list[dict[str, Any]] = field(default_factory=list)
    #: Files the episode left (``artifacts/`` in its trajectory directory).
    artifacts: list[str] = field(default_factory=list)


def run_inline(policy: Policy, coro: Coroutine[Any, Any, T]) -> T:
    """Finish an inline policy's coroutine in this thread; it must not await anything."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    coro.close()
    raise PolicyError(
        f"the {policy.name or type(policy).__name__} policy is marked inline but awaited; set inline = False on it"
    )


def _add_usage(tokens: dict[str, int], usage: dict[str, int] | None) -> None:
    """Add a decision's token counts; anything that is not a non-negative integer counts as 0."""
    if not isinstance(usage, dict):
        return
    for key, name in (("prompt", "prompt_tokens"), ("completion", "completion_tokens"), ("total", "total_tokens")):
        value = usage.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            tokens[key] += value


def _sendable(decision: Decision) -> tuple[Decision, dict[str, Any] | None]:
    """The decision, or ``NO_ACTION`` in its place when its action is too large or too deep to send or record;
    then, for a refused action, what the trajectory keeps of it (a bounded prefix, its type and size)."""
    problem = action_problem(decision.action)
    if problem is None:
        return decision, None
    sent = replace(decision, action=NO_ACTION, note=f"the policy's action was not sent: {problem}")
    return sent, refused_record(decision.action, problem)


def _flags(value: Any) -> list[str]:
    """``info["integrity_flags"]`` as a list of strings (a family may give one string)."""
    if not value:
        return []
    if isinstance(value, str):
        return [value]
    return [str(flag) for flag in value] if isinstance(value, (list, tuple)) else [str(value)]


def _fields(obs: dict[str, Any], writer: TrajectoryWriter) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The observation's JSON fields (no ``instruction``) and its images, strings passed through as they are."""
    fields: dict[str, Any] = {}
    for key, value in obs.items():
        if key == "instruction":
            continue
        if type(value) is str:
            fields[key] = value
        elif is_image(value):
            break
        else:
            fields[key] = to_jsonable(value)
    else:
        return fields, {}
    fields, images = split_observation(obs)
    fields.pop("instruction", None)
    return fields, images if writer.save_images else {}


def _instruction(obs: dict[str, Any], default: str) -> str:
    """What the observation tells the agent to do (a multi-step task's current step), else ``default``."""
    value = obs.get("instruction")
    return value if isinstance(value, str) else default


class EpisodePlayer:
    """Plays one attempt of one episode against an opened env handle, in a lane's thread."""

    def __init__(
        self, policy: Policy, policy_slots: asyncio.Semaphore, deadlines: Deadlines, *, feedback: bool = False
    ):
        self.policy = policy
        self.policy_slots = policy_slots
        self.deadlines = deadlines
        #: Pass rewards, checks and progress to the policy (training only; never in an evaluation).
        self.feedback = feedback

    async def _timed(self, coro: Coroutine[Any, Any, T], timeout: float | None, what: str) -> T:
        async with self.policy_slots:
            try:
                return await asyncio.wait_for(coro, timeout)
            except TimeoutError:
                raise PolicyUnavailable(f"the policy did not answer {what} within {timeout:.1f}s") from None

    def _policy_call(self, lane: Lane, coro: Coroutine[Any, Any, T], timeout: float | None, what: str) -> T:
        """The policy's answer; ``PolicyGaveUp`` when it refused or raised (the agent's failure)."""
        try:
            if self.policy.inline:
                return run_inline(self.policy, coro)
            return lane.on_loop(self._timed(coro, timeout, what))
        except (Abandoned, PolicyUnavailable):
            raise
        except PolicyRequestError as exc:
            raise PolicyGaveUp(f"the policy refused at {what}: {exc}") from None
        except PolicyError:
            raise
        except Exception as exc:  # noqa: BLE001 - whatever the policy's answer provoked is the agent's failure
            raise PolicyGaveUp(f"the policy failed at {what}: {describe_fault(exc)}") from None

    def _feedback(self, reward: float, result: EpisodeResult) -> Feedback | None:
        if not self.feedback:
            return None
        return Feedback(reward=reward, checks=dict(result.checks), progress=result.progress)

    def end(self, lane: Lane, start: EpisodeStart) -> None:
        """Let the policy forget the episode (skipped once the event loop is gone)."""
        if self.policy.inline:
            run_inline(self.policy, self.policy.end(start))
            return
        try:
            asyncio.run_coroutine_threadsafe(self.policy.end(start), lane.loop).result(timeout=30.0)
        except (RuntimeError, concurrent.futures.CancelledError, concurrent.futures.TimeoutError):
            pass

    def play(
        self, lane: Lane, handle: EnvHandle, task: Task, trial: int, seed: int, writer: TrajectoryWriter
    ) -> EpisodeResult:
        d = self.deadlines
        t_start = time.monotonic()
        deadline = t_start + d.episode
        obs, info = lane.env_call(d.reset, "reset", handle.reset_blocking, seed)
        env_sec = time.monotonic() - t_start
        if info.get("error_kind") == "infra":
            raise EpisodeInfraError(
                f"reset failed: {info.get('error')}", retryable=info.get("retryable", True) is not False
            )
        meta = handle.describe_blocking()
        oracle = None
        if self.policy.needs_oracle:
            oracle = lane.env_call(d.env, "oracle_actions()", handle.oracle_actions_blocking)
        start = EpisodeStart(
            episode_id=secrets.token_hex(16),
            task_id=task.full_id,
            family=str(meta["family"] or task.family),
            trial=trial,
            seed=seed,
            instruction=task.instruction,
            tools=meta["tools"],
            prompt_description=meta["prompt_description"],
            task_path=task.path,
            task_params=dict(task.params),
            oracle_actions=oracle,
        )
        fields, images = _fields(obs, writer)
        instruction = _instruction(obs, task.instruction)
        writer.write(
            {
                "step": 0,
                "instruction": instruction,
                "observation": fields,
                "info": to_jsonable({k: info[k] for k in ("checks", "progress", "warnings") if k in info}),
                "seed": seed,
            },
            images,
        )
        result = EpisodeResult(
            episode_id=start.episode_id,
            env_episode_id=info.get("episode_id"),
            success=False,
            score=0.0,
            steps=0,
            error_kind=None,
            error=None,
            final_action=None,
            progress=float(info.get("progress", 0.0)),
            checks=dict(info.get("checks", {})),
            action_errors=0,
            verifier_detail=None,
        )
        policy_deadline = d.policy if self.policy.step_deadline else None
        try:
            self._policy_call(lane, self.policy.reset(start), d.policy, "reset")
            step_input = StepInput(step=0, observation=obs, feedback=self._feedback(0.0, result))
            timed_out = False
            while True:
                if lane.stopping:
                    raise Abandoned("stopped")
                t0 = time.monotonic()
                refused = None
                remaining = deadline - t0
                if remaining <= 0:
                    timed_out = True
                    decision = Decision(action="done", note="episode deadline reached: graded the final state")
                else:
                    limit = remaining if policy_deadline is None else min(remaining, policy_deadline)
                    try:
                        decision = self._policy_call(
                            lane, self.policy.act(start, step_input), limit, f"step {step_input.step + 1}"
                        )
                        decision, refused = _sendable(decision)
                    except PolicyUnavailable:
                        if deadline - time.monotonic() > 0:
                            raise
                        timed_out = True
                        decision = Decision(action="done", note="episode deadline reached: graded the final state")
                t1 = time.monotonic()
                result.policy_sec += t1 - t0
                obs, reward, terminated, truncated, info = lane.env_call(
                    d.env, f"step {step_input.step + 1}", handle.step_blocking, decision.action
                )
                step_env_sec = time.monotonic() - t1
                env_sec += step_env_sec
                if decision.usage:
                    _add_usage(result.tokens, decision.usage)
                result.policy_retries += decision.retries
                result.steps = int(info.get("step", result.steps + 1))
                if info.get("action_error"):
                    result.action_errors += 1
                fields, images = _fields(obs, writer)
                sampled, policy_trace = split_trace(decision.trace)
                told = _instruction(obs, instruction)
                moved_on = {"instruction": told} if told != instruction else {}
                instruction = told
                writer.write(
                    {
                        "step": result.steps,
                        **moved_on,
                        "action": to_jsonable(decision.action),
                        **({"refused_action": refused} if refused else {}),
                        "policy": {
                            **bounded_message(decision.message),
                            "note": decision.note,
                            "usage": decision.usage,
                            "retries": decision.retries,
                            **policy_trace,
                        },
                        **sampled,
                        "observation": fields,
                        "reward": float(reward),
                        "terminated": bool(terminated),
                        "truncated": bool(truncated),
                        "info": {k: info[k] for k in INFO_KEYS if k in info},
                        "env_sec": round(step_env_sec, 6),
                    },
                    images,
                )
                if info.get("error_kind") == "infra":
                    raise EpisodeInfraError(
                        f"the env failed at step {result.steps}: {info.get('error')}",
                        retryable=info.get("retryable", True) is not False,
                    )
                result.checks = dict(info.get("checks", result.checks))
                result.progress = float(info.get("progress", result.progress))
                if terminated or truncated:
                    result.success = bool(info.get("success", False))
                    result.score = float(info.get("score", 0.0))
                    result.final_action = info.get("final_action")
                    result.verifier_detail = info.get("verifier_detail")
                    result.integrity_flags = _flags(info.get("integrity_flags"))
                    result.warnings = [str(w) for w in info.get("warnings") or []]
                    result.task_steps = list(info.get("task_steps") or [])
                    files = lane.env_call(d.env, "collecting artifacts", handle.artifacts_blocking)
                    result.artifacts = writer.write_files("artifacts", files)
                    result.error_kind = "timeout" if timed_out else info.get("error_kind")
                    result.error = info.get("error")
                    if timed_out:
                        result.error = "episode deadline reached"
                    elif truncated and not result.error and not result.success:
                        result.error_kind = result.error_kind or "agent"
                        result.error = "time budget spent" if result.error_kind == "timeout" else STEP_BUDGET_SPENT
                    break
                step_input = StepInput(
                    step=result.steps,
                    observation=obs,
                    action_error=info.get("action_error"),
                    feedback=self._feedback(float(reward), result),
                )
        except PolicyGaveUp as exc:
            result.success, result.score, result.final_action = False, 0.0, None
            result.error_kind, result.error = "agent", str(exc)
        except PolicyUnavailable as exc:
            raise EpisodeInfraError(str(exc)) from None
        except PolicyError as exc:
            raise EpisodeInfraError(str(exc), retryable=False) from None
        finally:
            self.end(lane, start)
        result.env_sec = env_sec
        return result
