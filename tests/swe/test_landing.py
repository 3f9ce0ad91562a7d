"""The submitted diff is read the way git reads it, on both backends.

A gold patch is submitted together with changes the grader must put back,
spelled the hard ways: renames and copies (``git diff -M -C``), a mode
change, quoted and escaped file names, binary patches. The fix still lands
and resolves; every refused path is put back and listed with its rule.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentenvs.envs.swe.grading import grade_patch
from agentenvs.envs.swe.instance import DEFAULT_IMAGE, bundle_path, instance_of
from agentenvs.envs.swe.repo import checkout_bundle
from agentenvs.sandbox import create_sandbox
from agentenvs.sandbox.base import SandboxSpec
from tests.swe.swe_helpers import host_clone, host_git, submission


@pytest.fixture
def clone(tmp_path, task) -> Path:
    return host_clone(task, tmp_path / "repo")


@pytest.fixture
def grader(backend, task):
    instance = instance_of(task)
    sandbox = create_sandbox(backend, SandboxSpec(image=DEFAULT_IMAGE, workdir=task.config.environment.workdir))
    checkout_bundle(sandbox, bundle_path(task), task.config.environment.workdir, instance.base_commit)
    yield sandbox
    sandbox.close()


def test_git_reads_the_diff_and_refused_paths_are_put_back(clone, grader, task):
    instance = instance_of(task)
    host_git(clone, "apply", data=instance.patch.encode())
    package = next(p.parent for p in sorted((clone / "src").glob("*/__init__.py")))
    tests = sorted((clone / "tests").glob("test_*.py"))
    pkg = package.relative_to(clone).as_posix()
    # A rename out of the tests into a pass-everything conftest.py, a copy of the package into a shadow of
    # the standard library, a mode change on a test file, a quoted and escaped name, bytecode, a binary file.
    host_git(clone, "mv", tests[-1].relative_to(clone).as_posix(), f"{pkg}/conftest.py")
    (clone / "src" / "json.py").write_bytes((package / "__init__.py").read_bytes())
    tests[0].chmod(0o755)
    odd = clone / pkg / 'notes "quoted"\tname\u00e9.txt'
    odd.write_text("legitimate data\n")
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "core.cpython-311.pyc").write_bytes(bytes(range(256)))
    host_git(clone, "add", "-f", f"{pkg}/__pycache__")  # .gitignore may ignore it: an agent's diff would not
    (package / "data.bin").write_bytes(bytes(range(256)) * 2)
    patch = submission(clone, task, "-M", "-C", "--find-copies-harder")
    assert "rename from" in patch and "copy from" in patch and "old mode" in patch and "GIT binary patch" in patch
    assert '\\"quoted\\"\\t' in patch  # git quoted and escaped the name

    report = grade_patch(grader, instance, patch, task.config.environment.workdir)

    rules = {r["path"]: r["rule"] for r in report.reverted_paths()}
    moved = tests[-1].relative_to(clone).as_posix()
    assert rules == {
        f"{pkg}/conftest.py": "conftest",
        moved: "test-file",
        "src/json.py": "shadow-module",
        tests[0].relative_to(clone).as_posix(): "test-file",
        f"{pkg}/__pycache__/core.cpython-311.pyc": "bytecode",
    }, rules
    assert report.resolved, report.detail  # the fix itself landed, and every test ran as written
    landed = report.applied_patch
    assert "data.bin" in landed and "quoted" in landed and "conftest" not in landed and "json.py" not in landed
    assert "binary: " + f"{pkg}/data.bin" in " ".join(report.integrity_flags)
    # The grading checkout really holds the base versions: the moved test file is back, with its mode.
    workdir = task.config.environment.workdir
    out = grader.exec(
        ["bash", "-c", f"git status --porcelain -- tests; stat -c %a {tests[0].relative_to(clone)}"], cwd=workdir
    )
    assert out.stdout.split()[-1] == "644" and moved.split("/")[-1] not in out.stdout


def test_a_patch_git_refuses_is_not_applied_by_other_means(clone, grader, task):
    """A path outside the repository spelled the way only git reads it (a quoted name) is refused."""
    instance = instance_of(task)
    sneaky = (
        'diff --git "a/src/\\056\\056/\\056\\056/escape.txt" "b/src/\\056\\056/\\056\\056/escape.txt"\n'
        "new file mode 100644\n"
        "index 0000000..1111111\n"
        "--- /dev/null\n"
        '+++ "b/src/\\056\\056/\\056\\056/escape.txt"\n'
        "@@ -0,0 +1 @@\n"
        "+owned\n"
    )
    report = grade_patch(grader, instance, instance.patch + sneaky, task.config.environment.workdir)
    assert not report.applied and not report.resolved
    assert (
        grader.exec(["bash", "-c", "ls /escape.txt /testbed/../escape.txt 2>/dev/null | wc -l"]).stdout.strip() == "0"
    )
