"""Run a repository's test suite inside a sandbox, for the bug synthesizer.

The synthesizer runs the suite of a repository someone pointed it at, once
clean and once per mutant: that is untrusted code, so it never runs on this
host. Each worker gets one sandbox (local by default, docker on request)
holding a copy of the pristine tree at ``/repo``; a mutant is a file written
over the copy, the suite runs with a JUnit report in a fresh path under
``/tmp``, and the file is put back. The sandbox's cgroups bound memory and
processes; a run past its timeout is killed with everything it started.
"""

from __future__ import annotations

import secrets
import shlex
from dataclasses import dataclass
from pathlib import Path

from agentenvs.envs.swe.instance import DEFAULT_IMAGE
from agentenvs.envs.swe.junit import Case, JUnitError, parse_junit
from agentenvs.sandbox import create_sandbox
from agentenvs.sandbox.base import Sandbox, SandboxSpec

REPO = "/repo"
SUITE_MEMORY_MB = 2048
SUITE_ENV = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


@dataclass(frozen=True)
class SuiteRun:
    exit_code: int
    cases: list[Case]
    output: str

    @property
    def passed(self) -> set[str]:
        return {c.nodeid for c in self.cases if c.outcome in ("passed", "xfail")}


class SuiteSandbox:
    """One sandbox holding a copy of the repository, in which its suite runs again and again."""

    def __init__(
        self,
        tree: Path,
        *,
        backend: str = "local",
        python: str = "python3",
        image: str = DEFAULT_IMAGE,
        pytest_args: tuple[str, ...] = (),
    ):
        spec = SandboxSpec(image=image, workdir=REPO, memory_mb=SUITE_MEMORY_MB, pids=512)
        self.python = python
        self.pytest_args = pytest_args
        self.sandbox: Sandbox = create_sandbox(backend, spec)
        try:
            self.sandbox.put(tree, REPO)
        except BaseException:
            self.sandbox.close()
            raise

    def write(self, path: str, data: bytes) -> None:
        """Replace one file of the copy (a mutant, or the original put back)."""
        self.sandbox.put(data, f"{REPO}/{path}")

    def run(self, timeout: float = 120.0, files: list[str] | None = None) -> SuiteRun:
        """The suite (or the test ``files``) with a JUnit report (xunit1 names the files); bounded.

        A test file that fails to import is reported and the others still run
        (``--continue-on-collection-errors``): a test needing a package the
        sandbox lacks is left out, not fatal.
        """
        report = f"/tmp/suite-{secrets.token_hex(8)}.xml"
        args = [*self.pytest_args, "--", *files] if files else list(self.pytest_args)
        command = (
            f"rm -f /tmp/suite-*.xml; {shlex.quote(self.python)} -m pytest -q -p no:cacheprovider "
            f"--continue-on-collection-errors --junitxml={report} -o junit_family=xunit1 {shlex.join(args)}"
        )
        result = self.sandbox.exec(["bash", "-c", command], timeout=timeout, cwd=REPO, env=SUITE_ENV)
        if result.timed_out:
            self.sandbox.kill_all()
            return SuiteRun(-1, [], f"timed out after {timeout:g}s")
        try:
            cases = parse_junit(self.sandbox.get(report))
        except (FileNotFoundError, JUnitError):
            cases = []
        return SuiteRun(result.exit_code, cases, result.output[-2000:])

    def run_python(self, script: str, timeout: float = 30.0) -> str:
        """Run a Python script in the repository (as a user would, importable from its root); its output."""
        path = f"/tmp/probe-{secrets.token_hex(8)}.py"
        self.sandbox.put(script.encode("utf-8"), path)
        env = {**SUITE_ENV, "PYTHONPATH": f"{REPO}/src:{REPO}"}
        result = self.sandbox.exec([self.python, path], timeout=timeout, cwd=REPO, env=env)
        if result.timed_out:
            self.sandbox.kill_all()
            return ""
        return result.output

    def close(self) -> None:
        self.sandbox.close()


def run_suite(tree: Path, *, backend: str = "local", python: str = "python3", timeout: float = 120.0) -> SuiteRun:
    """Run the suite of ``tree`` once, in a sandbox of its own."""
    box = SuiteSandbox(tree, backend=backend, python=python)
    try:
        return box.run(timeout)
    finally:
        box.close()
