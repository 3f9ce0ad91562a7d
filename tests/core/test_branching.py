"""Snapshot, restore and fork (``core/branching.py``): the contract on a tiny in-process family, both
strategies (the family's own copy, and replay), then on real text games and a local terminal sandbox."""

from __future__ import annotations

import itertools
import pickle
import time
from typing import Any

import gymnasium as gym
import pytest

import agentenvs
from agentenvs.core import AgentEnv, ParsedAction, StepOutcome, Task, TaskConfig, Verdict
from agentenvs.core.errors import NotDeterministicError, UnknownSnapshotError
from agentenvs.validate import play

GOAL = 6
_ROLLS = itertools.count(100)
_ORIGINS = itertools.count(1)


class TallyEnv(AgentEnv):
    """Add numbers up to GOAL. ``stage`` needs ``oracle_actions`` first (it stages a key, as real
    families stage solution files); ``visit <url>`` counts only this env's own origin; ``roll``
    adds a number that differs on every call (not deterministic); ``sleep`` outlasts a short budget."""

    family = "tally"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.origin = f"http://site:{next(_ORIGINS)}"
        self.begins = 0

    def _begin(self, task: Task, seed: int) -> StepOutcome:
        self.items: list[Any] = []
        self.staged = False
        self.begins += 1
        return StepOutcome(text="total=0")

    def _act(self, action: ParsedAction) -> StepOutcome:
        verb, _, arg = action.text.partition(" ")
        if verb == "add":
            self.items.append(int(arg))
        elif verb == "stage" and self.staged:
            self.items.append("staged")
        elif verb == "visit":
            self.items.append("visited" if arg.startswith(self.origin + "/") else "elsewhere")
        elif verb == "roll":
            self.items.append(next(_ROLLS))
        elif verb == "sleep":
            time.sleep(float(arg))
        return StepOutcome(text=f"total={self.total} items={self.items}")

    @property
    def total(self) -> int:
        return sum(i for i in self.items if isinstance(i, int))

    def _check(self, task: Task) -> dict[str, bool]:
        return {"half": self.total >= GOAL // 2, "all": self.total >= GOAL}

    def _verify(self, task: Task, final_action: ParsedAction | None) -> Verdict:
        return Verdict(score=float(self.total == GOAL), success=self.total == GOAL)

    def _state_hash(self) -> str:
        return repr(self.items)

    def _addresses(self) -> dict[str, str]:
        return {"site": self.origin}

    def oracle_actions(self, variant: str = "oracle") -> list[Any]:
        self.staged = True
        return ["add 1", "add 2", "add 3", "done"] if variant == "oracle" else ["add 1", "done"]


class CopyingTallyEnv(TallyEnv):
    """The same family copying its own state: a restore or fork never starts a new episode."""

    def _save_state(self) -> Any:
        return (list(self.items), self.staged)

    def _load_state(self, state: Any) -> None:
        items, self.staged = state
        self.items = list(items)


def make_task(max_steps: int = 20, timeout: float = 600.0) -> Task:
    config = TaskConfig.model_validate(
        {
            "limits": {"max_steps": max_steps},
            "agent": {"timeout_sec": timeout},
            "checkpoints": [{"name": "half", "check": "x", "weight": 1}, {"name": "all", "check": "x", "weight": 1}],
        }
    )
    return Task(id="tally", family="tally", instruction="add up to six", config=config)


@pytest.fixture(params=[TallyEnv, CopyingTallyEnv], ids=["replay", "copy"])
def kind(request: pytest.FixtureRequest) -> type[TallyEnv]:
    return request.param


def test_each_needs_a_reset_first(kind: type[TallyEnv]) -> None:
    env = kind(task=make_task())
    for call in (env.snapshot, env.fork, lambda: env.restore("snap-0")):
        with pytest.raises(gym.error.ResetNeeded):
            call()


def test_restore_gives_back_the_state_the_counts_and_the_rewards(kind: type[TallyEnv]) -> None:
    env = kind(task=make_task(), reward_mode="dense")
    env.reset(seed=3)
    paid = [env.step("add 1")[1], env.step("add 2")[1]]
    obs_k, info_k = env._last_result
    ref = env.snapshot()
    hash_k = env._state_hash()
    begins = env.begins
    env.step("add 3")
    *_, info = env.step("done")
    assert info["score"] == 1.0 and env._ended

    obs, info = env.restore(ref)
    assert info["state_hash"] == hash_k == repr([1, 2])
    assert info["restored"]["strategy"] == ("copy" if kind is CopyingTallyEnv else "replay")
    assert env.begins == begins + (kind is TallyEnv), "only a replay starts a new episode"
    assert obs["text"] == obs_k["text"] == "total=3 items=[1, 2]"
    assert info["step"] == info_k["step"] == 2 and info["episode_id"] == info_k["episode_id"]
    assert not env._ended and env._step_count == 2
    # Nothing counted twice: steps go on from 2, and the rewards still sum to progress + score.
    _, reward, _, _, info = env.step("add 3")
    assert info["step"] == 3
    paid.append(reward)
    _, reward, terminated, _, info = env.step("done")
    paid.append(reward)
    assert terminated and info["score"] == 1.0
    assert sum(paid) == pytest.approx(info["progress"] + info["score"])


def test_a_fork_diverges_and_never_touches_its_parent(kind: type[TallyEnv]) -> None:
    parent = kind(task=make_task(max_steps=9), reward_mode="dense")
    parent.reset(seed=0)
    parent.step("add 1")
    parent.step("add 2")
    before = parent._state_hash()
    child = parent.fork()
    try:
        assert type(child) is kind and child is not parent
        assert child.reward_mode == "dense" and child.max_steps == 9, "made with the parent's arguments"
        assert child._state_hash() == before and child._step_count == 2
        wrong, _ = play(child, ["add 5", "add 5"])
        assert wrong["score"] == 0.0 and wrong["step"] == 5
        assert parent._state_hash() == before and parent._step_count == 2 and not parent._ended
        right, _ = play(parent, ["add 3"])
        assert right["score"] == 1.0 and right["step"] == 4
        assert child._state_hash() == repr([1, 2, 5, 5])
    finally:
        child.close()


def test_a_snapshot_after_the_end_restores_an_ended_episode(kind: type[TallyEnv]) -> None:
    env = kind(task=make_task())
    env.reset(seed=0)
    play(env, ["add 6"])
    ref = env.snapshot()
    env.reset(seed=1)
    env.step("add 1")
    obs, info = env.restore(ref)
    assert info["score"] == 1.0 and info["final_action"] == "done" and env._ended
    obs, reward, terminated, _, info = env.step("add 1")
    assert terminated and reward == 0.0 and "episode is over" in obs["text"]
    assert env._state_hash() == repr([6])


def test_a_replay_stages_what_oracle_actions_staged() -> None:
    env = TallyEnv(task=make_task())
    env.reset(seed=0)
    env.oracle_actions()
    env.step("stage")
    assert env.items == ["staged"]
    child = env.fork()
    try:
        assert child.items == ["staged"] and child.staged
    finally:
        child.close()


def test_a_replay_sends_recorded_addresses_to_the_new_envs_own() -> None:
    env = TallyEnv(task=make_task())
    env.reset(seed=0)
    env.step(f"visit {env.origin}/cart")
    env.step({"name": "visit", "arguments": {}})  # a malformed action: a spent step, replayed as such
    child = env.fork()
    try:
        assert child.origin != env.origin
        assert child.items == env.items == ["visited"] and child._step_count == 2
    finally:
        child.close()


def test_a_replay_that_differs_names_where_and_leaves_the_env_ended() -> None:
    env = TallyEnv(task=make_task())
    env.reset(seed=0)
    env.step("add 1")
    env.step("add 1")
    env.snapshot()  # the hash after step 2 is recorded: the replay is checked there too
    env.step("roll")
    env.step("add 1")
    ref = env.snapshot()
    with pytest.raises(NotDeterministicError, match="between step 2 and step 4"):
        env.restore(ref)
    obs, *_ = env.step("add 1")
    assert "episode is over" in obs["text"]


def test_a_start_that_differs_is_named_too() -> None:
    class Jittery(TallyEnv):
        def _begin(self, task: Task, seed: int) -> StepOutcome:
            outcome = super()._begin(task, seed)
            self.items.append(next(_ROLLS))
            return outcome

    env = Jittery(task=make_task())
    env.reset(seed=0)
    env.step("add 1")
    with pytest.raises(NotDeterministicError, match="at reset"):
        env.fork()


def test_references_are_bounded_and_can_be_dropped() -> None:
    env = TallyEnv(task=make_task())
    env.max_snapshots = 2
    env.reset(seed=0)
    first, second, third = env.snapshot(), env.snapshot(), env.snapshot()
    with pytest.raises(UnknownSnapshotError, match="last 2"):
        env.restore(first)
    env.drop_snapshot(second)
    with pytest.raises(UnknownSnapshotError):
        env.restore(second)
    assert env.restore(third)[1]["step"] == 0
    with pytest.raises(ValueError, match="cannot be adopted"):
        CopyingTallyEnv(task=make_task()).adopt(env.snapshot_object(third))


def test_a_step_the_time_budget_ended_ends_so_again_on_replay() -> None:
    env = TallyEnv(task=make_task(timeout=1.0))
    env.reset(seed=0)
    env.step("add 2")
    _, _, terminated, truncated, info = env.step("sleep 1.2")
    assert truncated and not terminated and info["error_kind"] == "timeout"
    ref = env.snapshot()
    env.reset(seed=0)
    obs, info = env.restore(ref)
    assert env._ended and env._step_count == 2 and info["error_kind"] == "timeout"
    assert env.items == [2]


# -- real families --------------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", ["copy", "replay"])
def test_text_game_fork_and_restore(strategy: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentenvs.envs.textgame.env import TextGameEnv

    if strategy == "replay":
        monkeypatch.setattr(TextGameEnv, "_save_state", lambda self: None)
    env = agentenvs.make("textgame/coin-hard-0", distance_signal=False)
    parent = env.unwrapped
    parent.reset(seed=0)
    plan = parent.oracle_actions()
    k = 4
    for action in plan[:k]:
        parent.step(action)
    ref = parent.snapshot()
    at_k = parent._state_hash()
    child = parent.fork()
    try:
        assert child.distance_signal is False and child._state_hash() == at_k
        wrong, _ = play(child, child.oracle_actions("wrong"))
        assert wrong["score"] == 0.0
        assert parent._state_hash() == at_k and parent._step_count == k
        right, _ = play(parent, plan[k:])
        assert right["score"] == 1.0
        obs, info = parent.restore(ref)
        assert info["state_hash"] == at_k and info["step"] == k and info["restored"]["strategy"] == strategy
        assert parent._step_count == k and not parent._ended
        again, _ = play(parent, plan[k:])
        assert again["score"] == 1.0 and again["step"] == right["step"]
        assert pickle.loads(pickle.dumps(parent)).restore(ref)[1]["state_hash"] == at_k
    finally:
        child.close()
        env.close()


def test_terminal_fork_and_restore_on_the_local_backend() -> None:
    env = agentenvs.make("terminal/log-error-summary", backend="local", pool_size=1)
    parent = env.unwrapped
    child = None
    try:
        parent.reset(seed=0)
        parent.step("cd /app && echo draft > error_counts.txt")
        ref = parent.snapshot()
        at_k = parent._state_hash()
        child = parent.fork()
        assert child.sandbox is not parent.sandbox and child._state_hash() == at_k
        assert child._made_with[1]["pool_size"] == 0 and child.backend == "local", "no warm pool in a fork"
        child.step("echo 'fork only' > fork.txt")
        assert parent._state_hash() == at_k, "the fork's writes stay in its own sandbox"
        right, _ = play(parent, parent.oracle_actions())
        wrong, _ = play(child, child.oracle_actions("wrong"))
        assert right["score"] == 1.0 and wrong["score"] == 0.0
        obs, info = parent.restore(ref)
        assert info["state_hash"] == at_k and obs["cwd"] == "/app" and parent._step_count == 1
        again, _ = play(parent, parent.oracle_actions())
        assert again["score"] == 1.0
    finally:
        if child is not None:
            child.close()
        env.close()
