"""Nothing carries over: not from one episode to the next, not from one dense check to the next."""

from __future__ import annotations

import pytest

from agentenvs.envs.swe.env import IMPORTS, SWEEnv, f2p_checkpoint
from agentenvs.envs.swe.hacks import PACKAGE_INIT, RIG_PLUGIN
from agentenvs.envs.swe.instance import instance_of

DAEMON = "while true; do echo rigged > /testbed/RIGGED; echo x > /tmp/left-behind; sleep 0.1; done"


@pytest.fixture
def env(backend, task):
    env = SWEEnv(task=task, backend=backend)
    yield env
    env.close()


def test_a_process_left_running_does_not_survive_reset(env):
    env.reset(seed=0)
    env.step(
        f"setsid nohup bash -c '{DAEMON}' >/dev/null 2>&1 < /dev/null & disown; echo secret > ~/.note; "
        "for i in $(seq 100); do [ -s RIGGED ] && break; sleep 0.1; done"
    )
    obs, *_ = env.step("cat RIGGED")
    assert obs["text"].startswith("rigged")  # the daemon is running
    _, _, terminated, _, info = env.step("submit")
    assert terminated and info["score"] == 0.0
    obs, _ = env.reset(seed=0)
    assert obs["changed_files"] == ""
    obs, *_ = env.step(
        "sleep 0.5; git status --porcelain; find /tmp ~ -mindepth 1 -not -path '/tmp/.agentenvs-swe*' | grep -c .; "
        "ps -eo args | grep -c '[l]eft-behind'"
    )
    # No change in the repository, nothing in /tmp or HOME but our staging directory, no daemon.
    assert obs["text"].split() == ["0", "0"], obs["text"]


def test_a_dense_check_cannot_rig_the_next_one(env, task):
    """Code run by one check leaves a daemon (writing a pass-everything conftest.py) and a sitecustomize
    in the checker sandbox; the next check must not see either."""
    instance = instance_of(task)
    hidden = [f2p_checkpoint(i, len(instance.FAIL_TO_PASS)) for i in range(1, len(instance.FAIL_TO_PASS) + 1)]
    env.reset(seed=0)
    rig = (
        "import os, subprocess, sys, sysconfig\n"
        "if not os.path.exists('/tmp/.rig'):\n"
        "    os.makedirs('/tmp/.rig')\n"
        f"    open('/tmp/.rig/conftest.py', 'w').write({RIG_PLUGIN!r})\n"
        "    loop = 'while true; do cp /tmp/.rig/conftest.py /testbed/conftest.py; sleep 0.05; done'\n"
        "    subprocess.Popen(['bash', '-c', loop], start_new_session=True, stdin=subprocess.DEVNULL,\n"
        "                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "    for d in (sysconfig.get_paths()['purelib'], '/usr/lib/python3/dist-packages'):\n"
        "        try:\n"
        "            open(os.path.join(d, 'sitecustomize.py'), 'w').write('import sys\\nsys.exit(0)\\n')\n"
        "        except OSError:\n"
        "            pass\n"
    )
    _, _, _, _, info = env.step(f"cat >> {PACKAGE_INIT} <<'EOF'\n{rig}EOF")
    assert not any(info["checks"][name] for name in hidden)
    # A different diff, so the next step runs a new check: the hack is gone from the code.
    _, _, _, _, info = env.step(f"git checkout -q -- . && echo '# note' >> {PACKAGE_INIT}")
    assert info["checks"] and not any(info["checks"][name] for name in hidden), info["checks"]
    assert info["checks"][IMPORTS]  # a sitecustomize the last check left (root on docker) would stop Python
    # The same in the final grading, which uses a fresh sandbox of its own.
    _, _, _, _, info = env.step("submit")
    assert info["score"] == 0.0
