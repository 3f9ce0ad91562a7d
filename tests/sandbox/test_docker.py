"""The docker backend against a real engine: exec, limits, shell, files, snapshots, sweeping."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentenvs.core.errors import SandboxError
from agentenvs.sandbox.base import Sandbox, SandboxSpec
from agentenvs.sandbox.docker import DockerSandbox
from agentenvs.sandbox.docker_container import KEEPER
from agentenvs.sandbox.docker_engine import OWNER_PID_LABEL, sweep_docker

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def sandbox(docker_client):
    """One container shared by the read-mostly tests of this module."""
    with DockerSandbox(SandboxSpec(memory_mb=256, pids=128), client=docker_client) as sb:
        yield sb


@pytest.fixture
def fresh(docker_client):
    """A container of its own for tests that change state or break things."""
    made: list[DockerSandbox] = []

    def make(**spec) -> DockerSandbox:
        made.append(DockerSandbox(SandboxSpec(**spec), client=docker_client))
        return made[-1]

    yield make
    for sb in made:
        sb.close()


def test_is_a_sandbox(sandbox):
    assert isinstance(sandbox, Sandbox)
    caps = sandbox.capabilities
    assert caps.backend == "docker" and caps.isolated_network and caps.snapshot


def test_exec_streams_and_exit_code(sandbox):
    result = sandbox.exec("echo out; echo err >&2; exit 3", timeout=30)
    assert (result.stdout, result.stderr, result.exit_code, result.timed_out) == ("out\n", "err\n", 3, False)
    assert sandbox.exec(["python3", "-c", "print(6 * 7)"], timeout=30).stdout == "42\n"


def test_exec_cwd_env_and_user(sandbox):
    assert sandbox.exec("pwd", timeout=30).stdout == "/app\n"
    assert sandbox.exec("pwd", timeout=30, cwd="/tmp").stdout == "/tmp\n"
    assert sandbox.exec("echo $GREETING", timeout=30, env={"GREETING": "hi"}).stdout == "hi\n"
    assert sandbox.exec("id -un", timeout=30, user="agent").stdout == "agent\n"


def test_exec_timeout_kills_the_command_and_keeps_the_container(sandbox):
    result = sandbox.exec("echo started; sleep 1000", timeout=1)
    assert result.timed_out and result.exit_code == -1
    assert result.stdout == "started\n"
    assert "sleep 1000" not in sandbox.exec("ps -eo args", timeout=30).stdout
    assert sandbox.exec("echo alive", timeout=30).stdout == "alive\n"


def test_network_is_off(sandbox):
    assert sandbox.exec("ls /sys/class/net", timeout=30).stdout.split() == ["lo"]
    probe = "import socket; socket.create_connection(('1.1.1.1', 53), timeout=3)"
    result = sandbox.exec(["python3", "-c", probe], timeout=30)
    assert result.exit_code != 0 and "unreachable" in result.stderr.lower()


def test_limits_and_labels_are_applied(sandbox, docker_client):
    info = docker_client.api.inspect_container(sandbox.container_id)
    host = info["HostConfig"]
    assert host["NetworkMode"] == "none" and not host.get("Init")
    assert info["Config"]["Entrypoint"] == ["/bin/sh", "-c", KEEPER]  # PID 1 that kill -9 -1 cannot end
    assert host["Memory"] == 256 * 1024 * 1024 and host["NanoCpus"] == 1_000_000_000 and host["PidsLimit"] == 128
    assert info["Config"]["Labels"][OWNER_PID_LABEL] == str(os.getpid())


def test_out_of_memory_exits_137(fresh):
    sb = fresh(memory_mb=64)
    result = sb.exec(["python3", "-c", "b = bytearray(400 * 1024 * 1024)"], timeout=60)
    assert result.exit_code == 137 and not result.timed_out
    assert sb.exec("echo fine", timeout=30).stdout == "fine\n"


def test_fork_bomb_is_bounded_by_the_pids_limit(fresh):
    sb = fresh(pids=48)
    bomb = (
        "import os, time\n"
        "n = 0\n"
        "try:\n"
        "    while n < 500:\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(60); os._exit(0)\n"
        "        n += 1\n"
        "except OSError as e:\n"
        "    print('stopped', n, e.errno, flush=True)\n"
        "os.killpg(0, 9)\n"
    )
    result = sb.exec(["python3", "-c", bomb], timeout=30)
    stopped, forks, errno = result.stdout.split()
    assert stopped == "stopped" and int(forks) < 48 and int(errno) == 11
    assert sb.exec("echo recovered", timeout=30).stdout == "recovered\n"


def _process_count(sb: DockerSandbox) -> int:
    return len(sb.exec(["ps", "-e", "--no-headers"], timeout=30).stdout.splitlines())


def test_shell_fork_bomb_is_ended_and_the_shell_keeps_working(fresh):
    sb = fresh(pids=64)
    shell = sb.shell()
    assert shell.run("cd /tmp", timeout=30).exit_code == 0
    texts = [shell.run(":(){ :|:& };:", timeout=2).stdout, shell.run("sleep 3", timeout=2).stdout]
    after = shell.run("echo ok; pwd", timeout=30)
    texts.append(after.stdout)
    assert "reached its limit of 64 processes" in "".join(texts)
    assert after.stdout.endswith("ok\n/tmp\n") and not after.timed_out
    assert sb.exec(["true"], timeout=30).exit_code == 0
    # docker-init, its sleep, the shell and ps: the bomb is gone
    assert _process_count(sb) <= 5
    shell.close()


def test_exec_fork_bomb_is_ended_and_the_container_keeps_working(fresh):
    sb = fresh(pids=64)
    # every generation leaves a sleeper behind, so the bomb does not burn out by itself
    sb.exec("f() { sleep 600 & f & }; f", timeout=2)
    time.sleep(1)  # let the orphaned bomb fill the pids limit
    for _ in range(3):
        assert sb.exec(["true"], timeout=30).exit_code == 0
    assert _process_count(sb) <= 4
    shell = sb.shell()
    assert shell.run("echo ok", timeout=30).stdout.endswith("ok\n")
    shell.close()


def test_a_shell_that_cannot_start_is_a_clear_error(sandbox, docker_client):
    from agentenvs.sandbox.docker_exec import DockerExecTransport

    with pytest.raises(SandboxError, match="bash did not start"):
        DockerExecTransport(docker_client.api, sandbox.container_id, user="no-such-user")


def test_persistent_shell_keeps_state_and_survives_a_timeout(sandbox):
    shell = sandbox.shell()
    try:
        assert shell.run("cd /tmp && export COLOR=teal", timeout=30).exit_code == 0
        assert shell.run("echo $COLOR; pwd", timeout=30).stdout == "teal\n/tmp\n"
        assert shell.cwd() == "/tmp"
        assert shell.run("sleep 300 > /dev/null & echo started", timeout=30).stdout == "started\n"
        time.sleep(0.3)
        timed = shell.run("echo before; sleep 1000", timeout=1)
        assert timed.timed_out and timed.exit_code == -1 and timed.stdout.startswith("before\n")
        after = shell.run("echo $COLOR; pwd; pgrep -fx 'sleep 300' | wc -l; pgrep -fx 'sleep 1000' | wc -l", timeout=30)
        assert after.stdout == "teal\n/tmp\n1\n0\n"
        assert shell.run("false", timeout=30).exit_code == 1
    finally:
        shell.close()
    assert sandbox.exec("pgrep -fx 'sleep 300' | wc -l", timeout=30).stdout == "0\n"


def test_put_and_get(sandbox, tmp_path: Path):
    sandbox.put(b"raw bytes", "deep/dir/raw.txt")
    assert sandbox.get("/app/deep/dir/raw.txt") == b"raw bytes"
    (tmp_path / "tree" / "sub").mkdir(parents=True)
    (tmp_path / "tree" / "sub" / "a.txt").write_text("alpha")
    script = tmp_path / "tree" / "run.sh"
    script.write_text("#!/bin/sh\necho ran\n")
    script.chmod(0o755)
    sandbox.put(tmp_path / "tree", "/srv/tree")
    assert sandbox.get("/srv/tree/sub/a.txt") == b"alpha"
    assert sandbox.exec("/srv/tree/run.sh", timeout=30).stdout == "ran\n"
    sandbox.put(script, "/srv/single.sh")
    assert sandbox.get("/srv/single.sh") == script.read_bytes()
    with pytest.raises(FileNotFoundError):
        sandbox.get("/no/such/file")
    with pytest.raises(IsADirectoryError):
        sandbox.get("/srv/tree")
    with pytest.raises(FileNotFoundError):
        sandbox.put(tmp_path / "missing", "/srv/x")


def test_snapshot_and_restore(fresh, docker_client):
    sb = fresh()
    sb.put(b"v1", "state.txt")
    shell = sb.shell()
    assert shell.run("cd /tmp", timeout=30).exit_code == 0
    ref = sb.snapshot()
    sb.exec("echo v2 > state.txt && touch extra.txt", timeout=30)
    old_container = sb.container_id
    sb.restore(ref)
    assert sb.container_id != old_container and sb.alive()
    assert sb.get("state.txt") == b"v1"
    assert sb.exec("test -e extra.txt", timeout=30).exit_code == 1
    assert shell.run("pwd; cat state.txt", timeout=30).stdout == "/app\nv1"
    with pytest.raises(SandboxError, match="unknown snapshot"):
        sb.restore("sha256:not-mine")
    sb.close()
    import docker.errors

    with pytest.raises(docker.errors.ImageNotFound):
        docker_client.api.inspect_image(ref)


def test_close_removes_the_container(fresh, docker_client):
    sb = fresh()
    container = sb.container_id
    sb.close()
    sb.close()
    assert not sb.alive()
    assert not docker_client.api.containers(all=True, filters={"id": container})
    with pytest.raises(SandboxError, match="closed"):
        sb.exec("true", timeout=30)


def test_missing_image_says_how_to_build_it(docker_client):
    with pytest.raises(SandboxError, match="make install"):
        DockerSandbox(SandboxSpec(image="agentenvs/swe:no-such-tag"), client=docker_client)
    with pytest.raises(SandboxError, match="nothing is pulled"):
        DockerSandbox(SandboxSpec(image="example.invalid/nope:1"), client=docker_client)


def test_sweep_removes_what_a_killed_process_left(docker_client, tmp_path: Path):
    script = (
        "from agentenvs.sandbox.docker import DockerSandbox\n"
        "sb = DockerSandbox()\n"
        "sb.snapshot()\n"
        "print(sb.container_id, flush=True)\n"
        "import time; time.sleep(600)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        container = proc.stdout.readline().strip()
        assert container, "the child did not create a sandbox"
        sweep_docker()
        assert docker_client.api.containers(filters={"id": container}), "swept a live owner's container"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        proc.stdout.close()
    owner = {"label": f"{OWNER_PID_LABEL}={proc.pid}"}
    assert len(docker_client.api.containers(all=True, filters=owner)) == 1
    assert sweep_docker() >= 2
    assert not docker_client.api.containers(all=True, filters=owner)
    assert not docker_client.api.images(filters=owner)
