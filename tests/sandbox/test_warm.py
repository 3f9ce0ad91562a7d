"""``Sandbox.warm``: a pooled sandbox has the episode's shells open and its state checker running
before any reset takes it, on both backends; they are the sandbox's own and die with it."""

from __future__ import annotations

import pytest

from agentenvs.core.task import CheckSpec
from agentenvs.sandbox import SandboxSpec
from agentenvs.sandbox.checks import run_checks
from agentenvs.sandbox.provision import EPISODE_SHELLS, Provisioner


@pytest.fixture
def sandbox(either_sandbox):
    return either_sandbox


def _checker_process(sb):
    return sb.state_checker()._proc


def test_warm_opens_the_shells_and_starts_the_checker(sandbox):
    sandbox.warm(2)
    checker = _checker_process(sandbox)
    assert checker is not None and checker.poll() is None
    first, second = sandbox.shell(), sandbox.shell()
    assert first is not second
    assert first.alive and second.alive, "a warm shell is already running bash"
    third = sandbox.shell()
    assert not third.alive, "past the spares, shell() opens a new one lazily"
    assert first.run("cd /tmp && echo $PWD", timeout=30).stdout == "/tmp\n"
    assert second.run("echo ok", timeout=30).stdout == "ok\n"
    assert third.run("echo ok", timeout=30).stdout == "ok\n"
    [passed] = run_checks(sandbox, [CheckSpec(check="dir_exists", args={"path": "/tmp"})])
    assert passed.passed
    assert _checker_process(sandbox) is checker, "the checks ran in the checker warm() started"


def test_kill_all_closes_the_spares_too(sandbox):
    sandbox.warm(2)
    sandbox.kill_all()
    shell = sandbox.shell()
    assert not shell.alive, "a spare killed with the sandbox's processes is never handed out"
    assert shell.run("echo again", timeout=30).stdout == "again\n"


def test_a_pool_hands_out_warm_sandboxes(tmp_path):
    env = tmp_path / "environment"
    env.mkdir()
    (env / "Dockerfile").write_text("FROM agentenvs/base\nWORKDIR /app\n")
    provisioner = Provisioner("local", pool_size=1)
    try:
        spec = SandboxSpec(image=str(env), memory_mb=256, pids=128)
        assert provisioner._pool is not None
        assert provisioner._pool.wait_ready("local", spec, timeout=120)
        sandbox = provisioner._pool.acquire("local", spec)
        shells = [sandbox.shell() for _ in range(EPISODE_SHELLS)]
        assert all(s.alive for s in shells)
        assert _checker_process(sandbox).poll() is None
        provisioner.release(sandbox)
    finally:
        provisioner.close()
