"""The AgentEnv base contract, on a tiny in-process family (no sandbox needed).

Real families are tested against the same contract in their own suites;
this pins down the base's bookkeeping: budgets, dense rewards, bad actions.
"""

from __future__ import annotations

from typing import Any

import pytest
from gymnasium.utils.env_checker import check_env

from agentenvs.core import AgentEnv, ParsedAction, StepOutcome, Task, TaskConfig, Verdict
from agentenvs.core.actions import require_string_argument

GOAL = 3


class CounterEnv(AgentEnv):
    """Count up to GOAL with "inc"; checkpoints at 1 and 2."""

    family = "counter"
    native_tools = [
        {
            "type": "function",
            "function": {
                "name": "add",
                "description": "add n",
                "parameters": {"type": "object", "properties": {"n": {"type": "string"}}, "required": ["n"]},
            },
        }
    ]

    def _begin(self, task: Task, seed: int) -> StepOutcome:
        self.count = 0
        return StepOutcome(text="count=0")

    def _act(self, action: ParsedAction) -> StepOutcome:
        if action.kind == "tool":
            self.count += int(require_string_argument(action, "n"))
        elif action.text.strip() == "inc":
            self.count += 1
        else:
            return StepOutcome(text=f"unknown command {action.text!r}")
        return StepOutcome(text=f"count={self.count}")

    def _check(self, task: Task) -> dict[str, bool]:
        return {"one": self.count >= 1, "two": self.count >= 2}

    def _verify(self, task: Task, final_action: ParsedAction | None) -> Verdict:
        return Verdict(score=float(self.count == GOAL), success=self.count == GOAL)

    def _state_hash(self) -> str:
        return str(self.count)


def make_task(max_steps: int = 10) -> Task:
    config = TaskConfig.model_validate(
        {
            "limits": {"max_steps": max_steps},
            "checkpoints": [
                {"name": "one", "check": "x", "weight": 1},
                {"name": "two", "check": "x", "weight": 3},
            ],
        }
    )
    return Task(id="count", family="counter", instruction="count to three", config=config)


@pytest.fixture
def env() -> CounterEnv:
    e = CounterEnv(task=make_task())
    yield e
    e.close()


def run(env: CounterEnv, actions: list[Any]) -> tuple[list[float], dict[str, Any], bool, bool]:
    env.reset(seed=0)
    rewards: list[float] = []
    info: dict[str, Any] = {}
    terminated = truncated = False
    for action in actions:
        _, reward, terminated, truncated, info = env.step(action)
        rewards.append(reward)
        if terminated or truncated:
            break
    return rewards, info, terminated, truncated


def test_sparse_reward_is_the_final_score(env: CounterEnv) -> None:
    rewards, info, terminated, truncated = run(env, ["inc", "inc", "inc", "done"])
    assert rewards == [0.0, 0.0, 0.0, 1.0]
    assert terminated and not truncated
    assert info["score"] == 1.0 and info["success"] is True
    assert info["checks"] == {"one": True, "two": True}
    assert info["progress"] == 1.0
    assert info["final_action"] == "done"


def test_dense_rewards_sum_to_final_progress_plus_score() -> None:
    env = CounterEnv(task=make_task(), reward_mode="dense")
    rewards, info, _, _ = run(env, ["inc", "noop", "inc", "done"])
    assert rewards[0] == pytest.approx(0.25)
    assert rewards[2] == pytest.approx(0.75)
    assert sum(rewards) - info["score"] == pytest.approx(info["progress"])
    assert info["score"] == 0.0


class CountedChecks(CounterEnv):
    checked = 0

    def _check(self, task: Task) -> dict[str, bool]:
        self.checked += 1
        return super()._check(task)


def test_without_dense_checks_no_checkpoint_runs_and_the_score_stands() -> None:
    env = CountedChecks(task=make_task(), dense_checks=False)
    rewards, info, _, _ = run(env, ["inc", "inc", "inc", "done"])
    assert env.checked == 0
    assert info["checks"] == {} and info["progress"] == 0.0
    assert rewards[-1] == 1.0 and info["score"] == 1.0
    counted = CountedChecks(task=make_task())
    run(counted, ["inc", "done"])
    assert counted.checked == 3  # the reset and each of the two steps


def test_dense_rewards_need_dense_checks() -> None:
    with pytest.raises(ValueError, match="dense_checks"):
        CounterEnv(task=make_task(), reward_mode="dense", dense_checks=False)


def test_step_budget_truncates_and_grades() -> None:
    env = CounterEnv(task=make_task(max_steps=2))
    rewards, info, terminated, truncated = run(env, ["inc"] * 5)
    assert len(rewards) == 2
    assert truncated and not terminated
    assert info["score"] == 0.0 and "success" in info


@pytest.mark.parametrize(
    "junk",
    [b"\x80\x81", "x" * (3 << 20), {"name": "nope"}, {"name": "add", "arguments": {"n": 5}}, 12.5, ""],
)
def test_junk_action_costs_a_step_and_env_still_works(env: CounterEnv, junk: Any) -> None:
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(junk)
    assert info["action_error"]
    assert info["error_kind"] == "agent"
    assert "Invalid action" in obs["text"]
    assert info["step"] == 1
    assert not terminated and not truncated and reward == 0.0
    obs, *_, info = env.step({"name": "add", "arguments": {"n": "3"}})
    assert obs["text"] == "count=3" and info["action_error"] is None


def test_info_keys_and_step_after_end(env: CounterEnv) -> None:
    obs, info = env.reset(seed=5)
    for key in ("task_id", "episode_id", "step", "elapsed_sec", "action_error", "checks", "progress", "state_hash"):
        assert key in info
    assert info["task_id"] == "counter/count"
    assert obs["instruction"] == "count to three"
    env.step("done")
    obs, reward, terminated, _, info = env.step("inc")
    assert terminated and reward == 0.0 and "reset" in info["action_error"]


def test_passes_gymnasium_env_checker(env: CounterEnv) -> None:
    check_env(env, skip_render_check=True)


def test_episode_ids_follow_the_seed(env: CounterEnv) -> None:
    _, a = env.reset(seed=1)
    _, b = env.reset(seed=1)
    _, c = env.reset()
    _, d = env.reset()
    assert a["episode_id"] == b["episode_id"]
    assert len({a["episode_id"], c["episode_id"], d["episode_id"]}) == 3
    assert a["state_hash"] == b["state_hash"] and a["seed"] == b["seed"] == 1
    assert c["seed"] != d["seed"]
