"""MiniWoB++ through the same env and actions: scripted solutions succeed, wrong ones do not,
and the raw and time-decayed rewards are reported apart."""

from __future__ import annotations

import pytest

import agentenvs
from agentenvs.envs.web.miniwob_solutions import SOLVERS
from agentenvs.validate import play


@pytest.fixture(scope="module")
def mw_env():
    env = agentenvs.make("web/miniwob.click-button")
    yield env.unwrapped
    env.close()


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_scripted_solution_succeeds_and_wrong_fails(mw_env, name: str) -> None:
    for seed in (1, 2):
        obs, _ = mw_env.reset(seed=seed, options={"task_id": f"web/miniwob.{name}"})
        assert obs["instruction"].strip().splitlines()[-1], "the page's utterance is the instruction"
        info, _ = play(mw_env, mw_env.oracle_actions("oracle"))
        assert info["success"] and info["score"] == 1.0, info["verifier_detail"]
        metrics = info["verifier_metrics"]
        assert metrics["raw_reward"] == 1.0
        assert 0.0 <= metrics["decayed_reward"] <= metrics["raw_reward"]
        mw_env.reset(seed=seed, options={"task_id": f"web/miniwob.{name}"})
        info, _ = play(mw_env, mw_env.oracle_actions("wrong"))
        assert info["score"] < 1.0 and not info["success"]


def test_same_seed_same_problem_and_noop_scores_zero(mw_env) -> None:
    first, _ = mw_env.reset(seed=11, options={"task_id": "web/miniwob.login-user"})
    again, _ = mw_env.reset(seed=11, options={"task_id": "web/miniwob.login-user"})
    other, _ = mw_env.reset(seed=12, options={"task_id": "web/miniwob.login-user"})
    assert first["instruction"] == again["instruction"] and first["text"] == again["text"]
    assert other["instruction"] != first["instruction"]
    _, reward, terminated, _, info = mw_env.step("done")
    assert terminated and reward == 0.0 and info["score"] == 0.0


def test_partial_reward_is_not_success(mw_env) -> None:
    """click-checkboxes pays partial credit for some boxes right; MiniWoB++ counts only a full reward."""
    for seed in range(1, 40):
        mw_env.reset(seed=seed, options={"task_id": "web/miniwob.click-checkboxes"})
        oracle = mw_env.oracle_actions("oracle")
        if len(oracle) >= 3:  # at least two boxes to tick: tick one of them, then submit
            break
    info, _ = play(mw_env, [oracle[0], oracle[-1]])
    raw = info["verifier_metrics"]["raw_reward"]
    assert 0.0 < raw < 1.0
    assert info["score"] == 0.0 and not info["success"]


def test_another_miniwob_episode_does_not_score(mw_env) -> None:
    """Every MiniWoB++ page shares the origin: winning click-test (its START cover, then its button) in the
    task's tab, in a new tab, or re-rolling the task's own page, must not pass as the task's episode."""
    easy = "goto('http://miniwob.web.test/miniwob/click-test.html')"
    won = ["mouse_click(80, 130)", "click('3')"]
    for prefix in ([], ["new_tab()"]):
        mw_env.reset(seed=0, options={"task_id": "web/miniwob.book-flight"})
        for action in [*prefix, easy, *won]:
            _, _, terminated, _, info = mw_env.step(action)
            assert info["action_error"] is None, (action, info["action_error"])
            assert not terminated and not info["miniwob"]["raw_reward"]
        _, _, _, _, info = mw_env.step("done")
        assert info["score"] == 0.0 and info.get("error_kind") != "infra", info
    # The task's own tab closed: nothing to score, and no crash.
    mw_env.reset(seed=0, options={"task_id": "web/miniwob.click-button"})
    _, _, terminated, _, info = mw_env.step("tab_close()")
    assert not terminated and info["miniwob"]["reason"] == "the episode's page was left"
    _, _, _, _, info = mw_env.step("done")
    assert info["score"] == 0.0 and info.get("error_kind") != "infra", info


def test_going_back_to_the_episode_still_scores(mw_env) -> None:
    """Leaving the page and coming back reloads it (a new, unstarted document): only the task's own
    episode, on the page the env started, counts; while the agent stays there the oracle still wins."""
    mw_env.reset(seed=1, options={"task_id": "web/miniwob.click-button"})
    mw_env.step("new_tab()")
    mw_env.step("tab_close()")
    info, _ = play(mw_env, mw_env.oracle_actions("oracle"))
    assert info["success"] and info["score"] == 1.0, info["verifier_detail"]
