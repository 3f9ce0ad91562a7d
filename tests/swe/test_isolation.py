"""The hidden tests run isolated, on both backends.

The "hidden test" here is a probe: it asserts, from inside the test run, what
the code under test can see. The sandbox is primed the way an attacker would
prime it (PYTHONPATH and PYTEST_ADDOPTS in its environment, a usercustomize in
the user site); the probe passes only if none of it reaches the run.
"""

from __future__ import annotations

import pytest

from agentenvs.core.errors import TaskFormatError
from agentenvs.envs.swe.grading import grade_patch
from agentenvs.envs.swe.instance import DEFAULT_IMAGE, bundle_path, instance_of, parse_instance
from agentenvs.envs.swe.interop import SWEBENCH_TEST_CMD
from agentenvs.envs.swe.isolation import split_test_cmd
from agentenvs.envs.swe.repo import checkout_bundle
from agentenvs.sandbox import create_sandbox
from agentenvs.sandbox.base import SandboxSpec

PROBE = """import os
import sys
import sysconfig


def test_isolated():
    assert sys.flags.isolated and sys.flags.no_user_site and sys.flags.ignore_environment
    leaked = [k for k in os.environ if k.startswith(("PYTHON", "PYTEST_"))]
    assert sorted(set(leaked) - {"PYTEST_CURRENT_TEST", "PYTEST_VERSION"}) == ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"]
    assert "AGENTENVS_PLANTED" not in os.environ and "evil" not in sys.modules
    assert "/tmp/evil" not in sys.path and "" not in sys.path
    repo, stdlib = os.getcwd(), sysconfig.get_paths()["stdlib"]
    assert sys.path.index(stdlib) < sys.path.index(repo)
    assert sys.flags.dont_write_bytecode
    home, tmp = os.environ["HOME"], os.environ["TMPDIR"]
    assert home not in ("/root", "/") and tmp != "/tmp" and os.path.dirname(home) == os.path.dirname(tmp)
    assert os.listdir(home) == []
    cmdline = open("/proc/self/cmdline", "rb").read()
    assert b"record" not in cmdline and b"junit" not in cmdline.lower() and b"seal" in cmdline
    seal = [a for a in cmdline.split(b"\\0") if b"seal-" in a][0].decode()
    assert not os.path.exists(seal)  # read and deleted before any code under test ran
"""


def _new_file_patch(path: str, text: str) -> str:
    body = "".join(f"+{line}\n" for line in text.splitlines())
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
        f"@@ -0,0 +1,{len(text.splitlines())} @@\n{body}"
    )


@pytest.fixture
def primed(backend, task):
    """A grading sandbox with an attacker's environment variables and a usercustomize in place."""
    instance = instance_of(task)
    workdir = task.config.environment.workdir
    env = {"PYTHONPATH": "/tmp/evil", "PYTEST_ADDOPTS": "-p evil", "PYTHONSTARTUP": "/tmp/evil/evil.py"}
    sandbox = create_sandbox(backend, SandboxSpec(image=DEFAULT_IMAGE, workdir=workdir, env=env))
    checkout_bundle(sandbox, bundle_path(task), workdir, instance.base_commit)
    plant = "import os\nos.environ['AGENTENVS_PLANTED'] = '1'\n"
    user_site = sandbox.exec(["python3", "-c", "import site; print(site.getusersitepackages())"]).stdout.strip()
    sandbox.put(plant.encode(), f"{user_site}/usercustomize.py")
    sandbox.put(b"raise SystemExit('evil plugin loaded')\n", "/tmp/evil/evil.py")
    yield sandbox
    sandbox.close()


def test_the_tests_run_isolated(primed, task):
    instance = instance_of(task)
    probe = instance.model_copy(
        update={
            "test_patch": _new_file_patch("tests/test_probe.py", PROBE),
            "FAIL_TO_PASS": ["tests/test_probe.py::test_isolated"],
            "PASS_TO_PASS": [],
        }
    )
    report = grade_patch(primed, probe, "", task.config.environment.workdir)
    assert report.resolved, report.detail + "\n" + report.test_output


@pytest.mark.parametrize(
    ("test_cmd", "head", "args"),
    [
        ("python3 -m pytest -p no:cacheprovider", "python3", " -p no:cacheprovider"),
        ("cd sub && pytest -rA", 'cd sub && "$(command -v python3 || command -v python)"', " -rA"),
        (SWEBENCH_TEST_CMD, SWEBENCH_TEST_CMD.removesuffix(" -m pytest"), ""),
    ],
)
def test_the_interpreter_is_found_in_every_test_cmd_form(test_cmd, head, args):
    assert split_test_cmd(test_cmd) == (head, args)


def test_a_test_cmd_the_grader_cannot_isolate_is_a_task_error():
    fields = {"instance_id": "x", "base_commit": "abcdef0", "FAIL_TO_PASS": ["t.py::t"], "test_cmd": "tox -e py"}
    with pytest.raises(TaskFormatError, match="does not run pytest"):
        parse_instance(fields, "task.toml")
