"""A small sandbox on each backend, for tests of what every backend must do alike."""

from __future__ import annotations

import pytest

from agentenvs.sandbox import SandboxSpec, create_sandbox


@pytest.fixture(params=["local", pytest.param("docker", marks=pytest.mark.docker)])
def either_sandbox(request):
    if request.param == "docker":
        request.getfixturevalue("docker_client")
    sb = create_sandbox(request.param, SandboxSpec(memory_mb=256, pids=128))
    yield sb
    sb.close()
