"""The env contract: Gymnasium's checker, the observation, tool calls, tabs, screenshots, dense rewards."""

from __future__ import annotations

import re

import gymnasium
import numpy as np
from gymnasium.utils.env_checker import check_env

import agentenvs
from agentenvs.validate import play


def test_check_env_on_a_site_task_and_miniwob() -> None:
    for task_id in ("web/forum-top-post-0", "web/miniwob.click-button"):
        env = gymnasium.make("agentenvs/web-v0", task_id=task_id)
        try:
            check_env(env.unwrapped, skip_render_check=True)
        finally:
            env.close()


def test_observation_is_a_pruned_tree_with_bids(web_env) -> None:
    obs, info = web_env.reset(seed=0, options={"task_id": "web/shop-order-count-0"})
    assert obs["url"].startswith(web_env.site("shop").origin) and obs["last_action_error"] == ""
    assert "Tab 0 (active)" in obs["tabs"]
    assert re.search(r"^\s*\[\d+\] link 'Orders'", obs["text"], re.M)
    assert "Signed in as" in obs["text"] and "<script" not in obs["text"]
    assert len(info["state_hash"]) == 64


def test_tool_calls_and_strings_act_the_same(web_env) -> None:
    web_env.reset(seed=0, options={"task_id": "web/shop-price-0"})
    url = web_env.site_url("shop:/search?q=kettle")
    by_string, *_ = web_env.step(f"goto({url!r})")
    web_env.reset(seed=0, options={"task_id": "web/shop-price-0"})
    by_tool, *_ = web_env.step({"type": "function", "function": {"name": "goto", "arguments": f'{{"url": "{url}"}}'}})
    assert by_string["text"] == by_tool["text"] and "kettle" in by_tool["text"].lower()


def test_tabs_open_focus_and_close(web_env) -> None:
    web_env.reset(seed=0, options={"task_id": "web/shop-price-0"})
    obs, *_ = web_env.step("new_tab()")
    assert "Tab 1 (active)" in obs["tabs"] and obs["url"] == "about:blank"
    obs, *_ = web_env.step(f"goto({web_env.site_url('shop:/cart')!r})")
    obs, *_ = web_env.step("tab_focus(0)")
    assert "Tab 0 (active)" in obs["tabs"] and obs["url"].endswith("/")
    obs, *_ = web_env.step("tab_focus(1)\ntab_close()")
    assert "Tab 1" not in obs["tabs"]


def test_tabs_are_capped(web_env) -> None:
    """Ten new_tab() a step for 30 steps made 300 renderers (about 18 MB each): one episode could
    exhaust the machine's memory. new_tab() past the cap is refused, and tabs the page opens past it
    (a Ctrl-click on a link) are closed again."""
    from agentenvs.envs.web.session import MAX_TABS

    web_env.reset(seed=0, options={"task_id": "web/shop-price-0"})
    for _ in range(MAX_TABS - 1):
        obs, _, _, _, info = web_env.step("new_tab()")
        assert info["action_error"] is None
    assert obs["tabs"].count("Tab ") == MAX_TABS
    obs, _, terminated, _, info = web_env.step("new_tab()")
    assert "at most" in info["action_error"] and obs["tabs"].count("Tab ") == MAX_TABS and not terminated
    obs, *_ = web_env.step("tab_focus(0)")
    link = re.search(r"^\s*\[(\d+)\] link 'Cart'", obs["text"], re.M).group(1)
    web_env.step(f"click('{link}', modifiers=['Control'])")
    obs, *_ = web_env.step("noop()")
    assert obs["tabs"].count("Tab ") == MAX_TABS and "Tab 0 (active)" in obs["tabs"]
    assert web_env._session.tabs_refused >= 1


def test_a_long_url_stays_within_the_observation_space(web_env) -> None:
    web_env.reset(seed=0, options={"task_id": "web/shop-price-0"})
    obs, _, _, _, info = web_env.step(f"goto({web_env.site_url('shop:/search?q=' + 'a' * 20_000)!r})")
    assert info["action_error"] is None and obs["url"].endswith("[... cut ...]")
    assert web_env.observation_space.contains(obs)


def test_screenshot_observation() -> None:
    env = agentenvs.make("web/miniwob.click-test", screenshot=True, viewport=(400, 300)).unwrapped
    try:
        obs, _ = env.reset(seed=0)
        assert obs["screenshot"].shape == (300, 400, 3) and obs["screenshot"].dtype == np.uint8
        assert obs["screenshot"].std() > 0, "the page was drawn"
        assert env.observation_space.contains(obs)
    finally:
        env.close()


def test_dense_rewards_sum_to_progress_plus_score() -> None:
    env = agentenvs.make("web/shop-buy-1", reward_mode="dense").unwrapped
    try:
        env.reset(seed=0)
        total = 0.0
        for action in env.oracle_actions():
            _, reward, terminated, truncated, info = env.step(action)
            total += reward
        _, reward, terminated, _, info = env.step("done")
        total += reward
        assert terminated and info["score"] == 1.0 and info["progress"] == 1.0
        assert abs(total - 2.0) < 1e-9
    finally:
        env.close()


def test_submit_and_fail_count_as_answer_and_infeasible(web_env) -> None:
    web_env.reset(seed=0, options={"task_id": "web/shop-cheapest-0"})
    answer = web_env.task.config.evaluator.checks[0].args["expected"]
    info, _ = play(web_env, [{"name": "submit", "arguments": {"answer": answer}}])
    assert info["score"] == 1.0
    web_env.reset(seed=0, options={"task_id": "web/shop-buy-out-of-stock-0"})
    info, _ = play(web_env, [{"name": "fail", "arguments": {"reason": "out of stock"}}])
    assert info["score"] == 1.0


def _contexts() -> int:
    """Contexts open in this process's browsers (both lanes)."""
    from agentenvs.envs.web.browser import LANES, shared_browser

    return sum(shared_browser(lane).call(lambda b: len(b.contexts)) for lane in range(LANES))


def test_prepared_page_is_used_by_the_next_reset_of_its_task() -> None:
    env = agentenvs.make("web/miniwob.click-test").unwrapped
    try:
        env.reset(seed=0)
        assert env._lanes.spare is None, "an env's first episode prepares nothing: it may be its only one"
        env.reset(seed=2)
        spare = env._lanes.spare
        assert spare is not None and spare.lane != env._lanes.lane
        prepared = spare.future.result(timeout=60)
        assert prepared.page.url.endswith("/miniwob/click-test.html")
        first = env._session
        obs, _ = env.reset(seed=1)
        assert env._session is prepared and env._session is not first and env._lanes.lane == spare.lane
        info, _ = play(env, env.oracle_actions())
        assert info["score"] == 1.0
        assert obs["text"] and "click-test" in env._session.page.url
    finally:
        env.close()


def test_prepared_page_for_another_task_is_discarded_and_nothing_outlives_close() -> None:
    before = _contexts()
    env = agentenvs.make("web/miniwob.click-test").unwrapped
    try:
        env.reset(seed=0)
        env.reset(seed=1)
        prepared = env._lanes.spare.future.result(timeout=60)
        obs, _ = env.reset(seed=0, options={"task_id": "web/miniwob.enter-text"})
        assert env._session is not prepared and env._session.page.url.endswith("/miniwob/enter-text.html")
        assert "textbox" in obs["text"]
        info, _ = play(env, env.oracle_actions())
        assert info["score"] == 1.0
        # A site task takes the context prepared for any task, with its persona's cookie set at reset.
        env.reset(seed=0, options={"task_id": "web/shop-order-count-0"})
        assert "Signed in as" in env.step("noop()")[0]["text"]
    finally:
        env.close()
    assert _contexts() == before


def test_without_prepare_ahead_one_lane_does_everything() -> None:
    env = agentenvs.make("web/miniwob.click-test", prepare_ahead=False).unwrapped
    try:
        env.reset(seed=0)
        env.reset(seed=1)
        assert env._lanes.spare is None and env._lanes.lane == 0
        info, _ = play(env, env.oracle_actions())
        assert info["score"] == 1.0
    finally:
        env.close()


def test_async_vector_env_runs_web_envs_in_worker_processes() -> None:
    from gymnasium.vector import AsyncVectorEnv

    ids = ["web/miniwob.click-test", "web/forum-top-post-0"]
    venv = AsyncVectorEnv([lambda t=t: gymnasium.make("agentenvs/web-v0", task_id=t) for t in ids], shared_memory=False)
    try:
        obs, _ = venv.reset(seed=0)
        assert obs["url"][0].endswith("/miniwob/click-test.html") and obs["url"][1] == "http://forum.web.test/"
        _, _, terminated, truncated, info = venv.step(["noop()", "done"])
        assert list(terminated) == [False, True] and not any(truncated)
        assert info["score"][1] == 0.0
    finally:
        venv.close()
