"""``Sandbox.wait_idle``: it returns once the sandbox's processes stop using the CPU, and never
later than its bound, on both backends (the GUI verifier waits on it for an app's save)."""

from __future__ import annotations

import pytest

SPIN = "sh -c 'while :; do :; done'"


@pytest.fixture
def sandbox(either_sandbox):
    return either_sandbox


def _running(sb, pidfile: str) -> bool:
    return sb.exec(f"kill -0 $(cat {pidfile}) 2>/dev/null", timeout=10).exit_code == 0


def test_waits_for_a_busy_process_to_finish(sandbox):
    started = sandbox.exec(f"(timeout 2 {SPIN}) >/dev/null 2>&1 & echo $! > /tmp/busy.pid", timeout=10)
    assert started.exit_code == 0, started.stderr
    assert _running(sandbox, "/tmp/busy.pid")
    assert sandbox.wait_idle(timeout=60) is True
    assert not _running(sandbox, "/tmp/busy.pid"), "idle was reported while the process still spun"


def test_gives_up_at_its_bound_on_a_process_that_never_stops(sandbox):
    started = sandbox.exec(f"{SPIN} >/dev/null 2>&1 & echo $! > /tmp/spin.pid", timeout=10)
    assert started.exit_code == 0, started.stderr
    assert sandbox.wait_idle(timeout=1.5) is False
    assert _running(sandbox, "/tmp/spin.pid")
    sandbox.kill_all()


def test_an_idle_sandbox_is_idle(sandbox):
    assert sandbox.wait_idle(timeout=30) is True
