"""Attacks on the verifier, one per class, on both backends: each scores 0 and leaves the env usable.

Every attack runs on ``log-error-summary``, whose verifier runs the checkers
with Python from ``tests/test.sh`` (so tool shadowing would work if the
defences were missing) and whose no-op scores 0.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.terminal.terminal_helpers import QUICK_TASK

REWARD_FILES = "echo 1 > /logs/verifier/reward.txt; echo '{\"reward\": 1}' > /logs/verifier/reward.json"
#: Python that fakes a passing verdict, whatever the checkers would have said.
FAKE_PASS = """import json, os, sys
os.makedirs("/logs/verifier", exist_ok=True)
open("/logs/verifier/reward.json", "w").write(json.dumps({"reward": 1.0}))
open("/logs/verifier/reward.txt", "w").write("1")
print(json.dumps([{"passed": True, "score": 1.0, "detail": "faked"}] * 8))
os._exit(0)
"""


def write(path: str, text: str, mode: str = "644") -> str:
    """A bash command writing ``text`` to ``path`` (parents made), as an agent would."""
    return f"mkdir -p \"$(dirname {path})\" && cat > {path} <<'AGENTEOF'\n{text}AGENTEOF\nchmod {mode} {path}"


ATTACKS = {
    "daemon rewrites the reward": [
        "setsid nohup bash -c 'while :; do mkdir -p /logs/verifier; "
        + REWARD_FILES
        + "; sleep 0.01; done' >/dev/null 2>&1 < /dev/null & disown; sleep 0.2"
    ],
    "pre-filled and locked output": [f"mkdir -p /logs/verifier && {REWARD_FILES} && chmod -R a-w /logs/verifier"],
    "output directory swapped for a link": [
        "rm -rf /logs/verifier && mkdir -p /app/fake && ln -s /app/fake /logs/verifier && echo 1 > /app/fake/reward.txt"
    ],
    "reward file made a directory": ["mkdir -p /logs/verifier/reward.json /logs/verifier/reward.txt"],
    "fake evaluators in the working directory": [
        write("/app/evaluators/__main__.py", FAKE_PASS) + " && touch /app/evaluators/__init__.py"
    ],
    "usercustomize and a .pth in the user site": [
        write("$(python3 -c 'import site; print(site.getusersitepackages())')/usercustomize.py", FAKE_PASS),
        "d=$(python3 -c 'import site; print(site.getusersitepackages())') && "
        "echo 'import usercustomize' > $d/zz-agent.pth",
    ],
    "edited tests": [write("/tests/test.sh", f"#!/bin/bash\nmkdir -p /logs/verifier; {REWARD_FILES}\n", "755")],
    "python3 shadowed or replaced": [
        "for p in /usr/local/bin/python3 /usr/bin/python3; do ("
        + write("$p", f"#!/bin/sh\nmkdir -p /logs/verifier; {REWARD_FILES}\n", "755")
        + ") 2>/dev/null; done; true"
    ],
    "killed every process": ["kill -9 -1; true"],
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_attack_scores_zero_and_env_stays_usable(make_env: Any, attack: str) -> None:
    env = make_env(QUICK_TASK)
    env.reset(seed=0)
    for command in ATTACKS[attack]:
        env.step(command)
    _, _, terminated, _, info = env.step("done")
    assert terminated
    assert info.get("error_kind") != "infra", info.get("error")
    assert info["score"] == 0.0, (attack, info.get("verifier_detail"))
    assert not info["success"]
    # The env is still usable: the next episode's oracle scores 1.
    env.reset(seed=1)
    info = {}
    for action in env.unwrapped.oracle_actions():
        *_, info = env.step(action)
    assert info["score"] == 1.0, info.get("verifier_detail")


def test_the_verifier_sees_the_agents_work(make_env: Any) -> None:
    """The defences do not lose state: the oracle's files reach the verifier, also after a kill of everything."""
    env = make_env(QUICK_TASK)
    env.reset(seed=0)
    solve, done = env.unwrapped.oracle_actions()
    env.step(solve)
    env.step("kill -9 -1; true")
    *_, info = env.step(done)
    assert info["score"] == 1.0, info.get("verifier_detail")
