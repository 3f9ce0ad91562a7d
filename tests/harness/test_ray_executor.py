"""The ray executor on a real three-node Ray cluster on loopback (`ray start --head` plus two nodes)."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_config
from typer.testing import CliRunner

from agentenvs.core.errors import InfraError
from agentenvs.harness.rundir import RunDir
from agentenvs.harness.runner import Runner

ray = pytest.importorskip("ray", reason="the ray executor's tests need Ray: pip install 'agentenvs[ray]'")

TASKS = [
    "textgame/maze-hard-2000001",
    "textgame/household-medium-1000004",
    "terminal/log-error-summary",
    "terminal/background-worker",
]


def _ray_cli() -> str:
    found = Path(sys.executable).with_name("ray")
    return str(found) if found.exists() else shutil.which("ray") or "ray"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A head and two more nodes, each with one CPU, on 127.0.0.1; stopped afterwards."""
    port = _free_port()
    address = f"127.0.0.1:{port}"
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    common = ["--num-cpus=1", "--node-ip-address=127.0.0.1", "--disable-usage-stats"]
    head = [_ray_cli(), "start", "--head", f"--port={port}", "--include-dashboard=false", *common]
    try:
        subprocess.run(head, check=True, capture_output=True, env=env, timeout=180)
        for _ in range(2):
            subprocess.run(
                [_ray_cli(), "start", f"--address={address}", *common],
                check=True,
                capture_output=True,
                env=env,
                timeout=180,
            )
        ray.init(address=address, log_to_driver=False, configure_logging=False)
        yield address
    finally:
        ray.shutdown()
        subprocess.run([_ray_cli(), "stop", "--force"], capture_output=True, env=env, timeout=180)


def _results(out: Path) -> dict[tuple[str, int], tuple]:
    episodes = RunDir(out).read_episodes()
    failed = [(e["task_id"], e.get("error")) for e in episodes if e["status"] != "scored"]
    assert not failed, f"{out.name}: {failed}"
    return {
        (e["task_id"], int(e["trial"])): (e["status"], e["score"], e["steps"], e["seed"], e.get("final_action"))
        for e in episodes
    }


@pytest.mark.parametrize("policy", ["oracle", "random"])
def test_a_suite_on_the_cluster_scores_as_on_the_local_executor(cluster, tmp_path, policy):
    alive = [n for n in ray.nodes() if n.get("Alive")]
    assert len(alive) == 3
    common = {"trials": 2, "concurrency": 4, "backend": "local", "options": {"seed": 7} if policy == "random" else {}}
    local = run_config(TASKS, policy, **common)
    remote = run_config(TASKS, policy, executor="ray", executor_options={"address": cluster}, **common)
    asyncio.run(Runner(local, str(tmp_path / "local")).run())
    asyncio.run(Runner(remote, str(tmp_path / "ray")).run())
    here, there = _results(tmp_path / "local"), _results(tmp_path / "ray")
    assert len(here) == len(TASKS) * 2
    assert there == here
    if policy == "oracle":
        assert all(score == 1.0 for _, score, *_ in there.values())
    recorded = RunDir(tmp_path / "ray").read_run()
    assert recorded["executor"]["name"] == "ray" and recorded["executor"]["nodes"] == 3


def test_envs_spread_over_the_nodes_and_a_dead_actor_is_an_infra_error(cluster):
    from agentenvs.harness.ray_executor import RayExecutor

    executor = RayExecutor(max_workers=6, address=cluster)
    handles = [executor.open_blocking("textgame/maze-hard-2000001", {}) for _ in range(6)]
    try:
        assert len({h.node for h in handles}) >= 2, [h.node for h in handles]
        obs, info = handles[0].reset_blocking(3)
        assert info["seed"] == 3 and obs["text"]
        ray.kill(handles[0]._actor, no_restart=True)
        with pytest.raises(InfraError, match="died"):
            handles[0].step_blocking("look")
    finally:
        for handle in handles:
            handle.close_blocking()
        asyncio.run(executor.aclose())
    assert ray.is_initialized(), "an executor that joined a running Ray leaves it running"


def test_a_task_that_does_not_exist_fails_as_it_does_locally(cluster):
    from agentenvs.core.errors import TaskNotFoundError
    from agentenvs.harness.ray_executor import RayExecutor

    executor = RayExecutor(max_workers=1, address=cluster)
    with pytest.raises(TaskNotFoundError):
        executor.open_blocking("textgame/no-such-task", {})


def test_the_cli_refuses_bad_executor_options(tmp_path):
    from agentenvs.cli import app

    runner = CliRunner()
    wrong = runner.invoke(
        app, ["run", "textgame/maze-hard-2000001", "--executor", "spark", "--out", str(tmp_path / "a")]
    )
    assert wrong.exit_code != 0 and "unknown --executor 'spark'" in wrong.output
    stray = runner.invoke(
        app, ["run", "textgame/maze-hard-2000001", "--ray-address", "x:1", "--out", str(tmp_path / "b")]
    )
    assert stray.exit_code != 0 and "--ray-address is for --executor ray" in stray.output
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_an_env_pool_on_the_cluster_plays_as_with_threads(cluster):
    from agentenvs import EnvPool
    from agentenvs.pool.ray_workers import RayPoolExecutor

    def play(pool: EnvPool, nodes: set[str]) -> dict[int, tuple]:
        plans: dict[int, list] = {}
        ends: dict[int, tuple] = {}

        def answer(result) -> None:
            assert result.error is None, result.error
            if result.is_reset:
                plans[result.env_id] = list(result.oracle_actions or [])
            if result.terminated or result.truncated:
                ends[result.episode] = (result.task_id, result.info["score"], result.step)
            if result.needs_action:
                plan = plans[result.env_id]
                pool.submit(result.env_id, plan.pop(0) if plan else "done")

        for result in pool.reset_all(timeout=300):
            answer(result)
        nodes.update(getattr(slot.worker.runner, "node", "here") for slot in pool._slots)
        while not pool.done:
            for result in pool.poll(timeout=120):
                answer(result)
        return ends

    games = ["textgame/maze-hard-2000001", "textgame/household-medium-1000004", "terminal/log-error-summary"]
    options = {"size": 3, "seed": 5, "episodes": 6, "oracle": True, "backend": "local"}
    with EnvPool(games, **options) as pool:
        with_threads = play(pool, set())
    nodes: set[str] = set()
    with EnvPool(games, executor=RayPoolExecutor(address=cluster), **options) as pool:
        on_ray = play(pool, nodes)
    assert len(with_threads) == 6 and on_ray == with_threads
    assert all(score == 1.0 for _, score, _ in on_ray.values())
    assert len(nodes) >= 2, nodes
