"""Dense checks outside the sandbox: right answers whatever the agent does to its own tools and files."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from agentenvs.core.errors import SandboxError
from agentenvs.core.task import CheckSpec
from agentenvs.sandbox import create_sandbox
from agentenvs.sandbox.base import SandboxSpec
from agentenvs.sandbox.checks import run_checks
from agentenvs.sandbox.state_checker import CheckerSlot, StateChecker

FAKE_PYTHON = '#!/bin/sh\necho \'[{"passed": true, "score": 1.0, "detail": "faked"}]\'\n'
CHECKS = [
    CheckSpec(check="file_exists", args={"path": "/app/answer.txt"}),
    CheckSpec(check="text_equals", args={"path": "/app/answer.txt", "expected": "42\n"}),
]


@pytest.fixture(params=["local", "docker"])
def sandbox(request: pytest.FixtureRequest) -> Any:
    if request.param == "docker":
        request.getfixturevalue("docker_client")
    box = create_sandbox(request.param, SandboxSpec())
    yield box
    box.close()


def passed(box: Any) -> list[bool]:
    return [r.passed for r in run_checks(box, CHECKS)]


def test_checks_see_the_agents_files(sandbox: Any) -> None:
    assert passed(sandbox) == [False, False]
    sandbox.exec("echo 41 > /app/answer.txt")
    assert passed(sandbox) == [True, False]
    sandbox.exec("echo 42 > /app/answer.txt")
    assert passed(sandbox) == [True, True]


def test_a_replaced_interpreter_or_planted_modules_change_nothing(sandbox: Any) -> None:
    plant = (
        f"for p in /usr/local/bin/python3 /usr/bin/python3 /usr/bin/python3.11; do "
        f"(printf '%s' '{FAKE_PYTHON}' > $p && chmod +x $p) 2>/dev/null; done; "
        "mkdir -p /app/evaluators && cp /dev/null /app/evaluators/__init__.py; "
        "d=/root/.local/lib/python3.11/site-packages; mkdir -p $d && echo 'raise SystemExit' > $d/usercustomize.py; true"
    )
    sandbox.exec(plant)
    assert passed(sandbox) == [False, False]


def test_the_checker_is_invisible_from_inside(sandbox: Any) -> None:
    run_checks(sandbox, CHECKS)  # the checker process is running now
    seen = sandbox.exec("cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '").stdout
    assert "run_batch" not in seen and "AGENTENVS_STATE_ROOT" not in seen


def test_links_out_of_the_sandbox_resolve_inside_it(sandbox: Any, tmp_path: Any) -> None:
    secret = tmp_path / "host-secret.txt"
    secret.write_text("host secret 7f3a\n")
    sandbox.exec(f"ln -s {secret} /app/abs; ln -s ../../../../../../..{secret} /app/rel")
    probes = [CheckSpec(check="file_contains", args={"path": p, "text": "secret"}) for p in ("/app/abs", "/app/rel")]
    results = run_checks(sandbox, probes)
    assert [r.passed for r in results] == [False, False]
    assert "7f3a" not in " ".join(r.detail for r in results)


def test_the_checker_follows_a_restore(sandbox: Any) -> None:
    sandbox.exec("echo 42 > /app/answer.txt")
    ref = sandbox.snapshot()
    sandbox.exec("rm /app/answer.txt")
    assert passed(sandbox) == [False, False]
    sandbox.restore(ref)
    assert passed(sandbox) == [True, True]


def processes_reading(root: Path) -> list[str]:
    return subprocess.run(["pgrep", "-af", str(root)], capture_output=True, text=True).stdout.splitlines()


def none_left_reading(root: Path, timeout: float = 10.0) -> bool:
    """Whether every process reading ``root`` is gone within ``timeout``: a checker closed while its
    bubblewrap was still forking leaves the child to die of the parent's death signal a moment later."""
    deadline = time.monotonic() + timeout
    while processes_reading(root):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_a_checker_held_past_close_never_starts_again(sandbox: Any) -> None:
    run_checks(sandbox, CHECKS)
    held = sandbox.state_checker()
    root = held.state_root
    assert processes_reading(root)
    sandbox.close()
    assert none_left_reading(root)
    assert "closed" in held.run([])  # a thread that still had it gets a reason, not a new process
    held.start()
    assert not processes_reading(root)
    with pytest.raises(SandboxError, match="closed"):
        sandbox.state_checker()


def test_a_checker_made_while_the_sandbox_closes_goes_with_it(tmp_path: Path) -> None:
    """The race behind an orphaned checker: one thread makes a checker while another releases the slot."""
    slot, making, go = CheckerSlot(), threading.Event(), threading.Event()
    made: list[StateChecker] = []

    def make() -> StateChecker:
        making.set()
        go.wait(10)
        checker = StateChecker(tmp_path)
        checker.start()
        made.append(checker)
        return checker

    maker = threading.Thread(target=slot.get, args=("root", make))
    maker.start()
    assert making.wait(10)
    releaser = threading.Thread(target=slot.release)
    releaser.start()
    go.set()
    maker.join(10)
    releaser.join(10)
    assert made and none_left_reading(tmp_path)
    assert "closed" in made[0].run([])
    with pytest.raises(SandboxError, match="closed"):
        slot.get("root", make)
