"""The warm pool with real docker sandboxes: acquire, release, refill, close."""

from __future__ import annotations

import os
import threading
import time

import pytest

from agentenvs.core.errors import SandboxError
from agentenvs.sandbox.base import SandboxSpec
from agentenvs.sandbox.docker_engine import OWNER_PID_LABEL
from agentenvs.sandbox.pool import WarmPool

pytestmark = pytest.mark.docker

SPEC = SandboxSpec(memory_mb=128)


def _ours(client) -> set[str]:
    return {c["Id"] for c in client.api.containers(all=True, filters={"label": f"{OWNER_PID_LABEL}={os.getpid()}"})}


def test_acquire_release_refill_and_close_leave_nothing(docker_client):
    before = _ours(docker_client)
    pool = WarmPool(size=2)
    try:
        assert pool.wait_ready("docker", SPEC, timeout=60)
        assert pool.ready_count("docker", SPEC) == 2
        first = pool.acquire("docker", SPEC)
        assert first.alive() and first.exec("echo ready", timeout=30).stdout == "ready\n"
        assert pool.wait_ready("docker", SPEC, timeout=60)
        first.put(b"dirty", "mark.txt")
        second = pool.swap(first, "docker", SPEC)
        assert second.container_id != first.container_id
        with pytest.raises(FileNotFoundError):
            second.get("mark.txt")
        assert pool.wait_ready("docker", SPEC, timeout=60)
        deadline = time.monotonic() + 60
        while first.alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not first.alive(), "a released sandbox must be closed, never reused"
    finally:
        pool.close()
    assert _ours(docker_client) == before
    assert not second.alive()
    with pytest.raises(SandboxError, match="closed"):
        pool.acquire("docker", SPEC)


def test_an_empty_pool_creates_on_demand(docker_client):
    with WarmPool(size=0) as pool:
        sandbox = pool.acquire("docker", SPEC)
        assert sandbox.exec("true", timeout=30).exit_code == 0
        assert pool.ready_count("docker", SPEC) == 0
        pool.release(sandbox)
    assert not sandbox.alive()


def test_keys_are_bounded_and_concurrent_acquires_get_distinct_sandboxes(docker_client):
    small, other = SPEC, SandboxSpec(memory_mb=192)
    with WarmPool(size=1, max_keys=1) as pool:
        assert pool.wait_ready("docker", small, timeout=60)
        pool.prewarm("docker", other)
        assert pool.ready_count("docker", small) == 0
        got = []
        threads = [threading.Thread(target=lambda: got.append(pool.acquire("docker", other))) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert len({sb.container_id for sb in got}) == 3
        for sb in got:
            pool.release(sb)


def test_a_failing_factory_is_reported_not_retried_forever():
    calls = []

    def broken(backend, spec):
        calls.append(backend)
        raise SandboxError("engine on fire")

    with WarmPool(size=1, factory=broken, retry_after=0.01) as pool:
        with pytest.raises(SandboxError, match="engine on fire"):
            pool.wait_ready("docker", SPEC, timeout=30)
        with pytest.raises(SandboxError, match="engine on fire"):
            pool.acquire("docker", SPEC)
    assert len(calls) >= 3
