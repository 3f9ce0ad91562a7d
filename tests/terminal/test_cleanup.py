"""Nothing is left behind: after close(), and after the env's process is killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from agentenvs.sandbox.local_resources import SANDBOX_PARENT, sweep_local_sandboxes


def _docker_leftovers(owner_pid: int) -> list[str]:
    import docker

    api = docker.from_env(timeout=30).api
    return [c["Id"] for c in api.containers(all=True, filters={"label": f"agentenvs.owner_pid={owner_pid}"})]


def _sandbox_dirs(owner_pid: int) -> list[Path]:
    return list(SANDBOX_PARENT.glob(f"{owner_pid}-*")) if SANDBOX_PARENT.is_dir() else []


def _processes_of(owner_pid: int) -> list[int]:
    """Processes whose environment says they belong to a sandbox of ``owner_pid`` (bwrap children)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if f"{SANDBOX_PARENT}/{owner_pid}-".encode() in cmdline:
            found.append(int(proc.name))
    return found


def test_close_leaves_nothing(make_env: Any, backend: str) -> None:
    env = make_env()
    env.reset(seed=0)
    env.step("sleep 300 &")
    env.close()
    me = os.getpid()
    if backend == "docker":
        assert _docker_leftovers(me) == []
    else:
        assert _sandbox_dirs(me) == []
        assert _processes_of(me) == []


def test_a_reset_that_fails_gives_its_sandbox_back(tmp_path: Path, make_env: Any, backend: str) -> None:
    from pytest import raises

    from agentenvs.core.errors import SandboxError
    from agentenvs.core.task import load_task
    from tests.terminal.harbor_tasks import write_task

    broken = write_task(
        tmp_path / "bench" / "broken-setup",
        toml='[[steps]]\nname = "first"\n',
        instruction=None,
        files={"steps/first/instruction.md": "Do it.", "steps/first/workdir/setup.sh": "exit 3\n"},
    )
    env = make_env(load_task(broken))
    with raises(SandboxError, match="setup.sh exited with 3"):
        env.reset(seed=0)
    me = os.getpid()
    if backend == "docker":
        assert _docker_leftovers(me) == [], "the failed reset's container is removed at once"
    else:
        assert _sandbox_dirs(me) == []


def test_crashed_env_process_leaves_nothing(backend: str) -> None:
    script = textwrap.dedent(
        f"""
        import os, sys, agentenvs
        env = agentenvs.make("terminal/log-error-summary", backend={backend!r})
        env.reset(seed=0)
        env.step("sleep 300 & echo started")
        print(os.getpid(), flush=True)
        sys.stdin.read()
        """
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        pid = int(child.stdout.readline())
        assert _docker_leftovers(pid) if backend == "docker" else _sandbox_dirs(pid), "the sandbox never started"
        os.kill(pid, signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    if backend == "docker":
        from agentenvs.sandbox.docker_engine import sweep_docker

        sweep_docker()
        assert _docker_leftovers(pid) == []
    else:
        sweep_local_sandboxes()
        assert _sandbox_dirs(pid) == []
        assert _processes_of(pid) == []
