"""The docker backend's end of the agent phase: kill_all, seal and the disk guard, on a real engine."""

from __future__ import annotations

import time
from typing import Any

import pytest

from agentenvs.sandbox.base import SandboxSpec
from agentenvs.sandbox.docker import DockerSandbox

pytestmark = pytest.mark.docker


@pytest.fixture
def sandbox(docker_client: Any):
    with DockerSandbox(SandboxSpec(), client=docker_client) as box:
        yield box


def test_the_agent_cannot_stop_its_container(sandbox: DockerSandbox) -> None:
    shell = sandbox.shell()
    shell.run("kill -9 -1; kill -9 1; true", timeout=30)
    assert sandbox.alive()
    assert shell.run("echo still here", timeout=30).stdout.strip().endswith("still here")


def test_orphans_are_reaped(sandbox: DockerSandbox) -> None:
    shell = sandbox.shell()
    shell.run("for i in $(seq 20); do (sleep 0.05 &) ; done; sleep 0.5", timeout=30)
    zombies = shell.run("ps -eo stat= | grep -c '^Z' || true", timeout=30).stdout.strip()
    assert zombies == "0"


def test_kill_all_stops_daemons_and_keeps_files(sandbox: DockerSandbox) -> None:
    shell = sandbox.shell()
    shell.run(
        "setsid bash -c 'trap \"\" TERM; while :; do echo x >> /app/log; sleep 0.02; done' "
        ">/dev/null 2>&1 </dev/null & disown; sleep 0.3",
        timeout=30,
    )
    sandbox.kill_all()
    before = sandbox.exec("wc -l < /app/log").stdout
    time.sleep(0.3)
    assert sandbox.exec("wc -l < /app/log").stdout == before != ""
    processes = sandbox.exec("ps -eo comm=").stdout.split()
    assert "bash" not in processes[:-1], processes  # only the keeper (sh), its sleep and this ps
    assert sandbox.shell().run("echo fresh", timeout=30).stdout.strip() == "fresh"


def test_kill_all_does_not_chase_the_keepers_own_sleep(sandbox: DockerSandbox) -> None:
    """The keeper starts a new ``sleep`` as soon as its old one dies; the kill loop once chased it, round after
    round, until its 10 s deadline. Now a round that finds only the keeper's session's processes is the last."""
    sandbox.shell().run("setsid sleep 300 >/dev/null 2>&1 </dev/null & disown; true", timeout=30)
    procs = sandbox._processes()
    if procs is None:
        pytest.skip("no cgroup view of the container from this host")
    killed = procs.kill_all_but_init()
    assert 2 <= killed <= 5, killed  # the agent's sleep, its shell and the keeper's sleep (twice at most)
    assert "300" not in sandbox.exec("ps -eo args=").stdout


def test_seal_copies_work_and_leaves_out_toolchain_changes(sandbox: DockerSandbox) -> None:
    shell = sandbox.shell()
    shell.run(
        "echo work > /app/out.txt && mkdir -p /data/deep && echo d > /data/deep/f && rm /app/.keep 2>/dev/null; "
        "echo tool > /usr/local/bin/mytool && chmod +x /usr/local/bin/mytool && "
        "printf '#!/bin/sh\\necho fake\\n' > /usr/local/bin/python3 && chmod +x /usr/local/bin/python3 && "
        "printf '#!/bin/sh\\necho fake\\n' > /usr/bin/sha256sum && "
        "echo 'import os' > /usr/lib/python3/dist-packages/zz.pth && echo 1 > /pytest.ini && "
        "echo /evil.so > /etc/ld.so.preload && mkdir -p /tests && echo x > /tests/test.sh",
        timeout=30,
    )
    sealed = sandbox.seal()
    try:
        assert not sandbox.alive()
        seen = sealed.exec(
            "cat /app/out.txt /data/deep/f /usr/local/bin/mytool; python3 -c 'print(2 + 2)'; "
            "echo abc | sha256sum | cut -c1-8; ls /usr/lib/python3/dist-packages/zz.pth /pytest.ini "
            "/etc/ld.so.preload /tests/test.sh 2>&1 | grep -c 'No such file'"
        ).stdout.split()
        assert seen == ["work", "d", "tool", "4", "edeaaff3", "4"], seen
        for refused in ("/usr/local/bin/python3", "/usr/bin/sha256sum", "/etc/ld.so.preload", "/pytest.ini"):
            assert refused in sealed.sealed_note
    finally:
        sealed.close()


def test_disk_use_is_held_to_storage_mb(docker_client: Any) -> None:
    with DockerSandbox(SandboxSpec(storage_mb=64), client=docker_client) as box:
        shell = box.shell()
        # A writer that would go on for 20 GB: the guard must stop it, however late its thread gets to run.
        writer = "for i in $(seq 200); do head -c 100M /dev/zero >> /app/big || break; done; echo finished"
        result = shell.run(writer, timeout=300)
        assert "finished" not in result.output
        if "disk limit" not in result.output:  # the note comes with the next command when the kill fell between two
            result = shell.run("true", timeout=30)
        assert "disk limit" in result.output
        size_mb = int(shell.run("du -sm /app/big | cut -f1", timeout=30).stdout.split()[-1])
        assert size_mb < 20000
        assert shell.run("rm /app/big && echo usable", timeout=30).stdout.strip() == "usable"
