"""Snapshot, restore and fork, for every ``AgentEnv``.

``env.snapshot()`` keeps the episode's current state under an opaque reference,
``env.restore(ref)`` puts the env back in it, and ``env.fork()`` makes a new env of
the same class and constructor arguments, with its own sandbox, in the same state
(the parent is not touched, and nothing the fork does reaches it).

Each family picks one of two strategies with two optional hooks:

- **copy**: ``_save_state()`` returns the family's state (a text game's position) and
  ``_load_state(state)`` puts it back, in this env or in a new one;
- **replay**, the fallback whenever ``_save_state`` returns ``None``: a new episode of the
  recorded task and seed, then the recorded actions again. The family must be
  deterministic; the replay is checked against every state hash the episode recorded
  (at reset and at each snapshot), and ``NotDeterministicError`` names the span of steps
  where they first differ.

To make that possible the env records, per episode, the task, the seed and the reset
options, every action passed to ``step`` and every ``oracle_actions`` call (families
stage the solution's files in the sandbox there, which a replay must do again; a family
whose oracle only reads sets ``oracle_changes_state = False``). The
step count, rewards paid, progress, the ended flag, the last observation and info and
the agent's elapsed time are set back from the snapshot, so a replay counts nothing twice.
"""

from __future__ import annotations

import copy
import functools
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import gymnasium as gym

from agentenvs.core.errors import NotDeterministicError, UnknownSnapshotError

#: Snapshots an env keeps; the oldest is dropped first.
MAX_SNAPSHOTS = 32


@dataclass(frozen=True)
class Entry:
    """One recorded call: a step's raw action, or an ``oracle_actions`` variant."""

    kind: Literal["step", "oracle"]
    value: Any
    #: The step ended the episode on the agent's time budget (a replay makes it end so again).
    timed_out: bool = False


@dataclass
class EpisodeLog:
    """What replays an episode: its task, seed and options, the calls made, and the hashes seen."""

    task: Any
    seed: int
    options: dict[str, Any]
    entries: list[Entry] = field(default_factory=list)
    #: ``{n: state hash after the first n entries}``: at reset, and wherever a snapshot was taken.
    hashes: dict[int, str] = field(default_factory=dict)

    def frozen(self) -> EpisodeLog:
        return EpisodeLog(self.task, self.seed, dict(self.options), list(self.entries), dict(self.hashes))

    def steps_in(self, n: int) -> int:
        """How many ``step`` calls the first ``n`` entries hold."""
        return sum(1 for e in self.entries[:n] if e.kind == "step")


@dataclass(frozen=True)
class Snapshot:
    """An episode's state at one moment; ``AgentEnv.adopt`` puts any env of the same class in it."""

    env_class: str
    log: EpisodeLog
    task: Any
    episode_id: str
    step_count: int
    prev_progress: float
    paid: float
    ended: bool
    #: Agent time spent when the snapshot was taken.
    elapsed: float
    #: The env's last observation, and the (observation, info) its caller last got.
    last_obs: Any
    result: tuple[Any, dict[str, Any]]
    state_hash: str | None
    #: What ``_save_state`` returned; ``None`` means a restore replays.
    family_state: Any
    #: Env-local addresses (a site's origin) the recorded actions may name, by key.
    addresses: dict[str, str]
    rng_state: dict[str, Any]

    @property
    def strategy(self) -> str:
        return "replay" if self.family_state is None else "copy"


class Branching:
    """The recording and the snapshot/restore/fork API that ``AgentEnv`` mixes in."""

    #: How many snapshots an env keeps (oldest dropped first).
    max_snapshots: ClassVar[int] = MAX_SNAPSHOTS
    #: ``oracle_actions`` changes the state (stages the solution in the sandbox), so a replay
    #: calls it again where it was called; a family whose oracle only reads says False.
    oracle_changes_state: ClassVar[bool] = True

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        env = super().__new__(cls)
        # How this env was made, so that ``fork`` can make another just like it.
        env._made_with = (args, dict(kwargs))
        return env

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("oracle_actions")
        if own is not None and not getattr(own, "_records", False):
            cls.oracle_actions = _recorded(own)  # type: ignore[attr-defined]

    def _init_branching(self) -> None:
        self._log: EpisodeLog | None = None
        self._last_result: tuple[Any, dict[str, Any]] | None = None
        self._snapshots: OrderedDict[str, Snapshot] = OrderedDict()
        self._oracle_depth = 0

    # -- hooks a family may implement ----------------------------------------------

    def _save_state(self) -> Any | None:
        """The family's state, copied cheaply (it must not change with the env); ``None``: replay."""
        return None

    def _load_state(self, state: Any) -> None:
        """Put back what ``_save_state`` returned. ``self._task`` is the snapshot's task; the env may
        be running another episode, this one, or none (a new env being forked into)."""
        raise NotImplementedError(f"{type(self).__name__} saves no state of its own")

    def _addresses(self) -> dict[str, str]:
        """Env-local addresses recorded actions may contain (a site's origin), by a key that holds
        across envs; a replay in another env rewrites each one to its own."""
        return {}

    # -- recording (called by AgentEnv) ---------------------------------------------

    def _log_reset(self, task: Any, seed: int, options: dict[str, Any] | None, obs: Any, info: dict[str, Any]) -> None:
        kept = {k: v for k, v in (options or {}).items() if k not in ("task", "task_id")}
        self._log = EpisodeLog(task, seed, kept, hashes={0: info["state_hash"]})
        self._last_result = (obs, info)

    def _log_step(self, action: Any, result: tuple[Any, float, bool, bool, dict[str, Any]]) -> None:
        obs, _, _, truncated, info = result
        if self._log is not None:
            timed_out = bool(truncated and info.get("error_kind") == "timeout")
            self._log.entries.append(Entry("step", _copied(action), timed_out))
        self._last_result = (obs, info)

    # -- the public API ---------------------------------------------------------------

    def snapshot(self) -> str:
        """Keep the episode's current state; the reference is for ``restore`` (or ``snapshot_object``)."""
        snap = self._capture()
        ref = f"snap-{uuid.uuid4().hex[:16]}"
        self._snapshots[ref] = snap
        while len(self._snapshots) > self.max_snapshots:
            self._snapshots.popitem(last=False)
        return ref

    def snapshot_object(self, ref: str) -> Snapshot:
        """The snapshot behind ``ref``: ``adopt`` it in any env of the same class."""
        snap = self._snapshots.get(ref)
        if snap is None:
            raise UnknownSnapshotError(
                f"unknown snapshot {ref!r}: restore takes a reference this env's snapshot() returned, "
                f"and an env keeps only its last {self.max_snapshots} snapshots (or drop_snapshot() removed it)"
            )
        return snap

    def drop_snapshot(self, ref: str) -> None:
        """Forget a snapshot (unknown references are ignored)."""
        self._snapshots.pop(ref, None)

    def restore(self, ref: str) -> tuple[Any, dict[str, Any]]:
        """Put this env back in the state ``snapshot()`` kept: ``(observation, info)`` as they were then,
        with ``info["state_hash"]`` of the state now."""
        if self._log is None and not self._snapshots:
            raise gym.error.ResetNeeded("call reset() before restore(); a fresh env has no snapshots")
        return self.adopt(self.snapshot_object(ref))

    def fork(self) -> Any:
        """A new env (same class and constructor arguments, its own sandbox) in this episode's state now.

        This env is not changed, and nothing the fork does reaches it. Close the fork when done.
        A fork keeps no warm pool (``pool_size=0``): it would start sandboxes for episodes to come.
        """
        snap = self._capture()
        args, kwargs = self._made_with
        if "pool_size" in kwargs:
            kwargs = {**kwargs, "pool_size": 0}
        child = type(self)(*args, **kwargs)
        try:
            child.adopt(snap)
        except BaseException:
            child.close()
            raise
        return child

    def adopt(self, snap: Snapshot) -> tuple[Any, dict[str, Any]]:
        """Put this env in ``snap``'s state, by the family's copy or by replay (see the module)."""
        if not isinstance(snap, Snapshot):
            raise TypeError(f"adopt takes a Snapshot (from snapshot_object), not {type(snap).__name__}")
        if snap.env_class != _class_name(type(self)):
            raise ValueError(f"a {snap.env_class} snapshot cannot be adopted by a {_class_name(type(self))}")
        started = time.monotonic()
        if snap.family_state is not None:
            self._task = snap.task
            try:
                self._load_state(snap.family_state)
            except BaseException:
                self._ended = True
                raise
            self._last_obs = copy.deepcopy(snap.last_obs)
            obs, info = copy.deepcopy(snap.result)
            state_hash = self._hash_now()
            replayed = 0
        else:
            obs, info, state_hash = self._replay(snap)
            replayed = snap.log.steps_in(len(snap.log.entries))
        self._running = True
        self._task = snap.task
        self._episode_id = snap.episode_id
        self._step_count, self._prev_progress, self._paid = snap.step_count, snap.prev_progress, snap.paid
        self._ended = snap.ended
        self._log = snap.log.frozen()
        self._last_result = (obs, info)
        self.np_random.bit_generator.state = copy.deepcopy(snap.rng_state)
        now = time.monotonic()
        self._t0 = self._step_started = now - snap.elapsed
        if state_hash != snap.state_hash and snap.state_hash is not None:
            self._ended = True
            raise NotDeterministicError(
                f"{snap.env_class}: after its _load_state the state hash is {state_hash}, "
                f"not {snap.state_hash} as at the snapshot: the family's copy misses part of its state"
            )
        restored = {"strategy": snap.strategy, "replayed_steps": replayed, "sec": round(now - started, 3)}
        return obs, {**info, "state_hash": state_hash, "restored": restored}

    # -- internals ------------------------------------------------------------------------

    def _capture(self) -> Snapshot:
        if self._task is None or self._log is None or self._last_result is None:
            raise gym.error.ResetNeeded("call reset() before snapshot() or fork()")
        state_hash = self._hash_now()
        log = self._log
        if state_hash is not None:
            log.hashes[len(log.entries)] = state_hash
        last_obs, result = copy.deepcopy((self._last_obs, self._last_result))
        return Snapshot(
            env_class=_class_name(type(self)),
            log=log.frozen(),
            task=self._task,
            episode_id=self._episode_id,
            step_count=self._step_count,
            prev_progress=self._prev_progress,
            paid=self._paid,
            ended=self._ended,
            elapsed=time.monotonic() - self._t0,
            last_obs=last_obs,
            result=result,
            state_hash=state_hash,
            family_state=self._save_state(),
            addresses=dict(self._addresses()),
            rng_state=copy.deepcopy(self.np_random.bit_generator.state),
        )

    def _hash_now(self) -> str | None:
        """The state hash; after the episode ended it may be gone with the sandbox (then ``None``)."""
        if not self._ended:
            return self._state_hash()
        try:
            return self._state_hash()
        except Exception:  # noqa: BLE001 - a sealed or closed sandbox has nothing left to hash
            return None

    def _replay(self, snap: Snapshot) -> tuple[Any, dict[str, Any], str | None]:
        """A new episode of the snapshot's task and seed, then its recorded calls; checked as it goes."""
        log = snap.log
        try:
            obs, info = self.reset(seed=log.seed, options={**log.options, "task": log.task})
            state_hash: str | None = info["state_hash"]
            _expect(snap, 0, state_hash)
            here = self._addresses()
            moved = {old: here[k] for k, old in snap.addresses.items() if k in here and here[k] != old}
            result: tuple[Any, dict[str, Any]] = (obs, info)
            for n, entry in enumerate(log.entries, 1):
                if entry.kind == "oracle":
                    self.oracle_actions(entry.value)
                else:
                    # The agent's clock: a step the time budget ended ends so again, no other does.
                    budget = self._task.config.agent.timeout_sec
                    self._t0 = time.monotonic() - (budget + 1.0 if entry.timed_out else 0.0)
                    step = self.step(_rebase(entry.value, moved))
                    result = (step[0], step[4])
                if n in log.hashes:
                    state_hash = self._hash_now()
                    _expect(snap, n, state_hash)
            if self._step_count != snap.step_count or self._ended != snap.ended:
                raise NotDeterministicError(
                    f"{snap.env_class}: replaying {log.task.full_id} (seed {log.seed}) ended at step "
                    f"{self._step_count} (episode over: {self._ended}), not at step {snap.step_count} "
                    f"(episode over: {snap.ended})"
                )
            if snap.state_hash is None and snap.result[1].get("score") != result[1].get("score"):
                raise NotDeterministicError(
                    f"{snap.env_class}: replaying {log.task.full_id} (seed {log.seed}) scored "
                    f"{result[1].get('score')}, not {snap.result[1].get('score')}"
                )
        except BaseException:
            self._ended = True
            raise
        # The observation is the replay's own (in a fork it names the fork's addresses); the info
        # is the one the caller saw at the snapshot.
        if len(log.entries) not in log.hashes:
            state_hash = self._hash_now()
        return result[0], copy.deepcopy(snap.result[1]), state_hash


def _expect(snap: Snapshot, n: int, actual: str | None) -> None:
    """The replay's hash after ``n`` entries must be the one recorded there."""
    log = snap.log
    wanted = log.hashes[n]
    if actual == wanted:
        return
    earlier = max((k for k in log.hashes if k < n), default=None)
    where = (
        "at reset: the same seed does not give the same initial state"
        if earlier is None
        else f"between step {log.steps_in(earlier)} and step {log.steps_in(n)}"
    )
    raise NotDeterministicError(
        f"{snap.env_class}: replaying {log.task.full_id} (seed {log.seed}) did not reproduce the episode: "
        f"the state first differs {where} (hash {actual}, recorded {wanted}). The family or the task is not "
        "deterministic under replay (a clock, randomness, the network?)"
    )


def _rebase(value: Any, moved: dict[str, str]) -> Any:
    """``value`` with each of this env's old addresses replaced by the new env's."""
    if not moved:
        return value
    if isinstance(value, str):
        for old, new in moved.items():
            value = value.replace(old, new)
        return value
    if isinstance(value, dict):
        return {k: _rebase(v, moved) for k, v in value.items()}
    if isinstance(value, list):
        return [_rebase(v, moved) for v in value]
    if type(value) is tuple:
        return tuple(_rebase(v, moved) for v in value)
    return value


def _copied(action: Any) -> Any:
    """The action as passed, safe from later changes by the caller (one nested too deep to copy is
    a malformed action whose step changed nothing but the count: kept as it is)."""
    try:
        return copy.deepcopy(action)
    except RecursionError:
        return action


def _recorded(oracle_actions: Any) -> Any:
    """Wrap a family's ``oracle_actions`` so that each outermost call is recorded for replay."""

    @functools.wraps(oracle_actions)
    def wrapper(self: Any, variant: str = "oracle") -> Any:
        depth = self._oracle_depth
        self._oracle_depth = depth + 1
        try:
            actions = oracle_actions(self, variant)
        finally:
            self._oracle_depth = depth
        if depth == 0 and self.oracle_changes_state and self._log is not None and not self._ended:
            self._log.entries.append(Entry("oracle", variant))
        return actions

    wrapper._records = True  # type: ignore[attr-defined]
    return wrapper


def _class_name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


__all__ = ["Branching", "Entry", "EpisodeLog", "Snapshot"]
