"""Faults on a real desktop: each is bounded, and blamed on the agent only when its action caused it.

The faults not caused by the agent are injected from outside the desktop's
user (root in the container, through the sandbox), as a crash would happen.
"""

from __future__ import annotations

import os
import signal

import pytest

import agentenvs
from agentenvs.envs.gui.env import GuiEnv

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def outside(env: GuiEnv, command: str) -> None:
    done = env.desktop.sandbox.exec(["sh", "-c", command], timeout=20)
    assert done.exit_code == 0, done.output


def desktop_env(backend: str):
    env = GuiEnv("mousepad-append-line", backend=backend, screen_size=(800, 600), observation_type="screenshot")
    env.reset(seed=0)
    return env


@pytest.fixture
def env(gui_image):
    env = desktop_env("docker")
    yield env
    env.close()


@pytest.fixture(params=["docker", "local"])
def either_env(gui_image, request):
    env = desktop_env(request.param)
    yield env
    env.close()


def test_the_daemon_killed_inside_the_desktop_is_the_agents_failure_not_infra(either_env):
    env = either_env
    """Only the desktop's own processes (the agent's terminal, sudo) can do this: infra would dodge the score."""
    outside(env, "pkill -9 -f 'gui/[d]aemon.py'")
    *_, info = env.step("pyautogui.click(10, 10)")
    assert info["error_kind"] == "agent" and "stopped answering" in info["error"]
    assert info["score"] == 0.0
    env.reset(seed=0)
    *_, info = env.step("pyautogui.click(10, 10)")
    assert info["action_error"] is None


def test_the_container_gone_from_outside_is_infra(either_env):
    sandbox = either_env.desktop.sandbox
    if sandbox.backend == "docker":
        sandbox._api.kill(sandbox._live())
    else:  # the local sandbox's namespaces, ended from the host
        os.kill(sandbox._res.holder.init_pid, signal.SIGKILL)
    *_, info = either_env.step("pyautogui.click(10, 10)")
    assert info["error_kind"] == "infra"


def test_an_action_that_kills_its_runner_is_the_agents_error_and_the_next_action_runs(env):
    *_, info = env.step("import os, signal; os.kill(os.getppid(), signal.SIGKILL)")
    assert info["error_kind"] == "agent" and "action runner" in info["action_error"]
    obs, _, terminated, _, info = env.step("import os; print('alive', os.getuid())")
    assert info["action_error"] is None and not terminated and "alive 1002" in obs["text"]


def test_an_action_that_never_returns_is_stopped_at_the_step_limit(env):
    head, _ = env.desktop.client.call("execute", code="while True: pass", timeout=2)  # the env passes step_timeout_sec
    assert head["timed_out"] and "limit" in head["error"]
    *_, info = env.step("pyautogui.press('a')")
    assert info["action_error"] is None


def test_an_app_crashing_mid_episode_leaves_a_scored_episode(either_env):
    env = either_env
    env.step({"action_type": "TYPING", "text": "half done"})
    outside(env, "pkill -9 -x mousepad")
    *_, info = env.step("pyautogui.hotkey('ctrl', 's')")
    assert info["action_error"] is None
    *_, info = env.step("DONE")
    assert info["score"] == 0.0 and info.get("error_kind") != "infra"
    assert env.desktop.sandbox.get("/home/user/Desktop/todo.txt") == b"buy milk\ncall bob\n"


def test_a_blocked_accessibility_walk_is_reported_not_waited_on(gui_image):
    env = GuiEnv("mousepad-append-line", screen_size=(800, 600), observation_type="a11y_tree", a11y_timeout=1.0)
    try:
        obs, _ = env.reset(seed=0)
        assert "todo.txt" in obs["text"]
        outside(env, "pkill -STOP -f 'at-spi2-[r]egistryd'; pkill -STOP -x mousepad")
        obs, *_, info = env.step("pyautogui.moveTo(5, 5)")
        assert info["action_error"] is None
        assert "accessibility tree unavailable" in obs["text"] and "todo.txt" not in obs["text"]
    finally:
        env.close()


def test_a_hung_display_is_bounded_and_the_agents_failure(gui_image):
    """A stopped X server blocks the action and the screenshot; both give up at their deadlines."""
    task = agentenvs.get_task("gui/mousepad-append-line")
    limits = task.config.limits.model_copy(update={"step_timeout_sec": 3})
    task = task.model_copy(update={"config": task.config.model_copy(update={"limits": limits})})
    env = GuiEnv(task=task, screen_size=(800, 600), observation_type="screenshot", settle_timeout=1.0)
    try:
        env.reset(seed=0)
        outside(env, "pkill -STOP -x Xvfb")
        *_, info = env.step("pyautogui.click(10, 10)")
        assert info["error_kind"] == "agent" and "stopped answering" in info["error"]
        assert info["score"] == 0.0
        env.reset(seed=0)  # a new desktop: the episode after is unaffected
        *_, info = env.step("pyautogui.click(10, 10)")
        assert info["action_error"] is None
    finally:
        env.close()


def test_a_window_that_does_not_show_is_reported_with_what_the_desktop_had(env):
    """A reset whose app never shows its window raises infra naming the windows and processes present
    (``GuiEnv._fresh_desktop``); here the wait is cut to nothing, so the editor has not drawn yet."""
    head, _ = env.desktop.client.call("open", path="second.txt", timeout=0.0)
    assert head["window"] is None
    assert any(title.endswith("Mousepad") for title in head["windows"]), head["windows"]
    assert any(name.startswith("mousepad:") for name in head["processes"]), head["processes"]
