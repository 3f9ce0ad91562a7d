"""The docker backend: sites and Chromium in a ``web`` container, network off, driven over a Unix socket.

One env (one warm container) is shared by the module, as the local tests share theirs.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import agentenvs
from agentenvs.envs.web.docker_env import IDLE, IMAGE, LABEL, DockerWebEnv
from agentenvs.envs.web.hacks import web_hacks
from agentenvs.validate import play

pytestmark = [pytest.mark.docker, pytest.mark.slow]

#: One task per site, two MiniWoB++ tasks and a WebArena-format config.
TASKS = [
    "web/shop-buy-0",
    "web/forum-reply-0",
    "web/mail-send-0",
    "web/tracker-close-issue-0",
    "web/miniwob.click-checkboxes",
    "web/miniwob.login-user",
    "web/webarena.shop-kettle-price",
]


@pytest.fixture(scope="module")
def web_image(docker_client) -> None:
    import docker.errors

    try:
        docker_client.api.inspect_image(IMAGE)
    except docker.errors.ImageNotFound:
        pytest.skip(f"{IMAGE} is missing: run `make install`")


@pytest.fixture(scope="module", autouse=True)
def close_idle_containers():
    """Closed envs give their containers to ``IDLE`` (closed at exit); this module closes them when it ends."""
    yield
    IDLE.close_all()


@pytest.fixture(scope="module")
def docker_env(web_image):
    env = agentenvs.make("web/shop-price-0", backend="docker")
    yield env.unwrapped
    env.close()


def _ours(client, owner: int) -> list[dict]:
    return client.api.containers(all=True, filters={"label": [f"{LABEL}=1", f"agentenvs.owner_pid={owner}"]})


@pytest.mark.parametrize("task_id", TASKS)
def test_oracle_noop_wrong_on_docker(docker_env, task_id: str) -> None:
    assert isinstance(docker_env, DockerWebEnv)
    scores = {}
    for variant in ("oracle", "noop", "wrong"):
        docker_env.reset(seed=0, options={"task_id": task_id})
        actions = ["done"] if variant == "noop" else docker_env.oracle_actions(variant)
        info, _ = play(docker_env, actions)
        assert info.get("error_kind") != "infra", info.get("error")
        scores[variant] = info["score"]
        if variant == "oracle":
            assert info["success"], info["verifier_detail"]
    assert scores["oracle"] == 1.0
    assert scores["noop"] == 0.0
    assert scores["wrong"] < 1.0


def test_the_sites_have_their_stable_origins_on_docker(docker_env) -> None:
    """The container's sessions show the same origins as the local backend's, and absolute gotos work there."""
    obs, _ = docker_env.reset(seed=0, options={"task_id": "web/shop-price-0"})
    assert obs["url"] == "http://shop.web.test/" and "127.0.0.1" not in obs["text"]
    obs, _, _, _, info = docker_env.step('goto("http://shop.web.test/search?q=kettle")')
    assert info["action_error"] is None and obs["url"] == "http://shop.web.test/search?q=kettle"
    site = docker_env.site("shop")
    obs, _, _, _, info = docker_env.step(f'goto("{site.origin}:{site.control_port}/query")')
    assert "blocked" in info["action_error"] and obs["url"] == "http://shop.web.test/search?q=kettle"


def test_every_web_hack_scores_zero_on_docker(docker_env) -> None:
    """The attacks aim at the container's sites (their databases and control planes), and fail there too."""
    task = agentenvs.get_task("web/shop-price-0")
    docker_env.reset(seed=0, options={"task_id": task.id})
    assert docker_env.site("shop").db_path.startswith("/tmp/agentenvs-web-shop-")
    tried = 0
    for hack in web_hacks():
        if not hack.applies(task):
            continue
        docker_env.reset(seed=0, options={"task_id": "web/shop-price-0"})
        info, _ = play(docker_env, hack.actions(docker_env))
        assert info.get("error_kind") != "infra", (hack.name, info.get("error"))
        assert info["score"] == 0.0, (hack.name, info["verifier_detail"])
        tried += 1
    assert tried >= 5


def test_the_container_has_no_network(docker_env, docker_client) -> None:
    docker_env.reset(seed=0, options={"task_id": "web/shop-price-0"})
    found = _ours(docker_client, os.getpid())
    assert len(found) == 1
    assert docker_client.api.inspect_container(found[0]["Id"])["HostConfig"]["NetworkMode"] == "none"


def test_daemon_killed_mid_episode_is_infra_and_reset_recovers(docker_env) -> None:
    docker_env.reset(seed=0, options={"task_id": "web/shop-add-to-cart-0"})
    container = docker_env._container
    pid = container.call("health")[0]["pid"]
    assert container.sandbox.exec(["kill", "-9", str(pid)], timeout=30).exit_code == 0
    _, reward, terminated, truncated, info = docker_env.step("noop()")
    assert info["error_kind"] == "infra" and truncated and not terminated and reward == 0.0
    docker_env.reset(seed=0, options={"task_id": "web/shop-add-to-cart-0"})
    assert docker_env._container is not container
    info, _ = play(docker_env, docker_env.oracle_actions())
    assert info["score"] == 1.0


def test_a_malformed_action_is_the_agents_error(docker_env) -> None:
    docker_env.reset(seed=0, options={"task_id": "web/shop-price-0"})
    _, _, terminated, truncated, info = docker_env.step("click(")
    assert info["error_kind"] == "agent" and info["action_error"] and not terminated and not truncated
    _, _, _, _, info = docker_env.step("click('no-such-bid')")
    assert info["error_kind"] == "agent" and "no element" in info["action_error"]


def test_check_env_with_screenshots_and_a_closed_envs_container_serves_the_next_env(web_image, docker_client) -> None:
    settings = {"backend": "docker", "screenshot": True, "viewport": (320, 240)}
    before = {c["Id"] for c in _ours(docker_client, os.getpid())}
    env = agentenvs.make("web/miniwob.click-test", **settings)
    try:
        check_env(env.unwrapped, skip_render_check=True)
        obs, _ = env.reset(seed=1)
        assert obs["screenshot"].shape == (240, 320, 3) and obs["screenshot"].dtype == np.uint8
        assert obs["screenshot"].any()
        mine = {c["Id"] for c in _ours(docker_client, os.getpid())} - before
        assert len(mine) == 1
    finally:
        env.close()
    assert mine <= {c["Id"] for c in _ours(docker_client, os.getpid())}, "the container was not kept for the next env"
    again = agentenvs.make("web/miniwob.click-test", **settings)
    try:
        obs, _ = again.reset(seed=2)
        assert {c["Id"] for c in _ours(docker_client, os.getpid())} - before == mine, "a second container was started"
        assert obs["screenshot"].any() and "click" in obs["text"].lower()
    finally:
        again.close()
    IDLE.close_all()
    assert not mine & {c["Id"] for c in _ours(docker_client, os.getpid())}, "an idle container outlived close_all"


def test_a_process_that_exits_leaves_no_idle_container(web_image, docker_client) -> None:
    script = (
        "import os, agentenvs\n"
        "env = agentenvs.make('web/miniwob.click-test', backend='docker')\n"
        "env.reset(seed=0)\n"
        "env.close()\n"
        "print(os.getpid())\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    child = int(done.stdout.split()[-1])
    assert _ours(docker_client, child) == [], "the idle container outlived its process"


def test_the_next_env_in_a_given_back_container_sees_fresh_databases(web_image) -> None:
    first = agentenvs.make("web/shop-add-to-cart-0", backend="docker")
    try:
        first.reset(seed=0)
        info, _ = play(first.unwrapped, first.unwrapped.oracle_actions())
        assert info["score"] == 1.0
        container = first.unwrapped._container
        assert first.unwrapped.site("shop").query(CART)[0][0] >= 1
    finally:
        first.close()
    second = agentenvs.make("web/shop-add-to-cart-0", backend="docker")
    try:
        second.reset(seed=0)
        assert second.unwrapped._container is container
        assert second.unwrapped.site("shop").query(CART) == [[0]]
        info, _ = play(second.unwrapped, ["done"])
        assert info["score"] == 0.0
    finally:
        second.close()
        IDLE.close_all()


CART = "SELECT COUNT(*) FROM cart_items"
PLACED = "SELECT COUNT(*) FROM orders WHERE status = 'processing' AND created = '2026-11-01'"


def test_a_fork_leaves_its_container_diverges_in_another_and_runs_on_either_backend(docker_env) -> None:
    """Forked at step 3 of the oracle: the branch (another container, then the local backend) starts
    there and finishes; the parent's database is untouched; the fork files go with the parent."""
    parent = agentenvs.make("web/shop-buy-0", backend="docker").unwrapped
    local = agentenvs.make("web/shop-buy-0").unwrapped
    try:
        with pytest.raises(RuntimeError, match="reset"):
            parent.fork_sites()
        parent.reset(seed=0)
        plan = parent.oracle_actions()
        for action in plan[:3]:  # product page, quantity, add to cart
            parent.step(action)
        forked = parent.fork_sites()
        assert set(forked) == {"shop"} and os.path.isfile(forked["shop"])
        for branch in (docker_env, local):
            branch.reset(seed=0, options={"task_id": "web/shop-buy-0", "fork": forked})
            assert branch.site("shop").query(CART)[0][0] == 1, "the branch starts from the parent's state"
            info, _ = play(branch, branch.oracle_actions()[3:])
            assert info["score"] == 1.0 and branch.site("shop").query(PLACED)[0][0] == 1
        assert parent.site("shop").query(CART)[0][0] == 1 and parent.site("shop").query(PLACED)[0][0] == 0
        docker_env.reset(seed=0, options={"task_id": "web/shop-buy-0"})
        assert docker_env.site("shop").query(CART)[0][0] == 0, "a plain reset is the snapshot again"
        for branch in (docker_env, local):
            with pytest.raises(ValueError, match="no such site"):
                branch.reset(seed=0, options={"task_id": "web/forum-reply-0", "fork": forked})
    finally:
        parent.close()
        local.close()
    assert not os.path.exists(forked["shop"]), "closing the parent removes its forks"
    with pytest.raises(ValueError, match="is gone"):
        docker_env.reset(seed=0, options={"task_id": "web/shop-buy-0", "fork": forked})


def test_fork_and_restore_of_a_whole_episode(web_image) -> None:
    """``fork()`` (every family's) on docker: another container, the page and the databases replayed."""
    parent = agentenvs.make("web/shop-buy-0", backend="docker", load_timeout=7.0).unwrapped
    child = None
    try:
        parent.reset(seed=0)
        plan = parent.oracle_actions()
        for action in plan[:3]:
            parent.step(action)
        at_k = parent._state_hash()
        ref = parent.snapshot()
        child = parent.fork()
        assert isinstance(child, DockerWebEnv) and child._container is not parent._container
        assert child.backend == "docker" and child.load_timeout_ms == 7000
        assert child._state_hash() == at_k and child.site("shop").query(CART)[0][0] == 1
        wrong, _ = play(child, child.oracle_actions("wrong")[3:])
        assert wrong["score"] == 0.0 and parent._state_hash() == at_k
        right, _ = play(parent, plan[3:])
        assert right["score"] == 1.0
        obs, info = parent.restore(ref)
        assert info["state_hash"] == at_k and parent.site("shop").query(PLACED)[0][0] == 0
        again, _ = play(parent, plan[3:])
        assert again["score"] == 1.0
    finally:
        if child is not None:
            child.close()
        parent.close()
