"""One server per test module, which must have closed every session when the module ends."""

from __future__ import annotations

import pytest

from agentenvs.serve import BackgroundServer


@pytest.fixture(scope="module")
def server():
    with BackgroundServer(max_sessions=6) as running:
        yield running
    assert running.manager.live == 0
