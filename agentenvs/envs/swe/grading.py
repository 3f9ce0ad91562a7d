"""Grade a patch as SWE-bench does, inside a sandbox holding the repository at ``base_commit``.

1. The patch is landed (:mod:`.landing`): applied with SWE-bench's fallbacks,
   the paths it changed listed by git, and every change to how tests are
   collected or run (:mod:`.protected`) put back, with a note. Paths outside
   the repository get the patch refused.
2. The hidden test patch is applied, and the test files holding the
   ``FAIL_TO_PASS`` and ``PASS_TO_PASS`` tests run under the sealed launcher
   (:mod:`.isolation`, :mod:`.sealed_pytest`): an isolated interpreter, a
   clean environment, fresh HOME and TMPDIR, no plugin autoload.
3. When the run ends every process in the sandbox is killed, then the
   launcher's record is read: outcomes and exit code under an HMAC only this
   run knew the key of. A missing or forged record, tampering seen during the
   run, or an exit code that disagrees with the outcomes makes the run
   untrusted. Resolved only if every named test passed in a trusted run.
4. The landed diff is audited for references to the framework's internals
   (:mod:`.audit`); such flags are reported, never scored.
"""

from __future__ import annotations

import secrets
import shlex
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentenvs.envs.swe.audit import audit_diff
from agentenvs.envs.swe.instance import SWEInstance
from agentenvs.envs.swe.isolation import LAUNCHER, RecordError, Seal, TestCommandError, read_record, test_command
from agentenvs.envs.swe.junit import test_files, test_passed
from agentenvs.envs.swe.landing import land
from agentenvs.envs.swe.patches import OutsideRepoError, PatchError, check_inside_repo, split_patch
from agentenvs.envs.swe.protected import Refusal
from agentenvs.envs.swe.repo import GIT, WORK
from agentenvs.sandbox.base import Sandbox

APPLY_TIMEOUT = 60.0
#: pytest's exit codes 0 (all passed) and 1 (some failed) mean the suite was collected and ran.
RAN_EXIT_CODES = (0, 1)


@dataclass
class GradeReport:
    """Everything the grader found; ``resolved`` is SWE-bench's RESOLVED_FULL."""

    instance_id: str
    applied: bool = False
    applied_patch: str = ""
    reverted: list[Refusal] = field(default_factory=list)
    fail_to_pass: dict[str, bool] = field(default_factory=dict)
    pass_to_pass: dict[str, bool] = field(default_factory=dict)
    test_exit_code: int | None = None
    report_consistent: bool = False
    tampered: list[str] = field(default_factory=list)
    integrity_flags: list[str] = field(default_factory=list)
    detail: str = ""
    test_output: str = ""

    @property
    def ran(self) -> bool:
        """The tests were collected and ran (the repository still imports)."""
        return self.test_exit_code in RAN_EXIT_CODES

    @property
    def resolved(self) -> bool:
        return (
            self.applied
            and self.ran
            and self.report_consistent
            and not self.tampered
            and bool(self.fail_to_pass)
            and all(self.fail_to_pass.values())
            and all(self.pass_to_pass.values())
        )

    def fraction(self, which: str) -> float:
        outcomes = self.fail_to_pass if which == "f2p" else self.pass_to_pass
        return sum(outcomes.values()) / len(outcomes) if outcomes else 1.0

    def reverted_paths(self) -> list[dict[str, str]]:
        """The refused changes as ``{"path", "rule", "why"}`` records, for ``info``."""
        return [r.as_dict() for r in self.reverted]

    def swebench_report(self) -> dict[str, Any]:
        """The shape of SWE-bench's ``report.json`` for one instance."""

        def split(outcomes: dict[str, bool]) -> dict[str, list[str]]:
            return {
                "success": [t for t, ok in outcomes.items() if ok],
                "failure": [t for t, ok in outcomes.items() if not ok],
            }

        return {
            self.instance_id: {
                "patch_is_None": False,
                "patch_exists": bool(self.applied_patch.strip()),
                "patch_successfully_applied": self.applied,
                "resolved": self.resolved,
                "tests_status": {
                    "FAIL_TO_PASS": split(self.fail_to_pass),
                    "PASS_TO_PASS": split(self.pass_to_pass),
                    "FAIL_TO_FAIL": {"success": [], "failure": []},
                    "PASS_TO_FAIL": {"success": [], "failure": []},
                },
            }
        }


def _refuse(report: GradeReport, why: str) -> GradeReport:
    report.detail = why + _reverted_note(report)
    report.fail_to_pass = dict.fromkeys(report.fail_to_pass or [], False)
    return report


def _reverted_note(report: GradeReport) -> str:
    if not report.reverted:
        return ""
    return "; put back as at the base commit: " + ", ".join(str(r) for r in report.reverted)


def _stage_files(stage_dir: Path, patch: str, test_patch: str, seal: Seal) -> str:
    """Write what the grading run needs into ``stage_dir`` (put into the sandbox at once); returns the seal's name."""
    (stage_dir / "model.patch").write_bytes(patch.encode("utf-8", "surrogateescape"))
    (stage_dir / "test.patch").write_bytes(test_patch.encode("utf-8", "surrogateescape"))
    (stage_dir / "launcher.py").write_bytes(LAUNCHER.read_bytes())
    seal_name = f"seal-{secrets.token_hex(8)}.json"
    (stage_dir / seal_name).write_bytes(seal.file_content())
    return seal_name


def grade_patch(
    sandbox: Sandbox, instance: SWEInstance, patch: str, workdir: str, *, timeout: float = 600.0
) -> GradeReport:
    """Grade ``patch`` in ``sandbox``, whose ``workdir`` must be a clean checkout of ``base_commit``.

    The sandbox runs the patched code: afterwards it holds nothing to trust,
    and every process in it has been killed.
    """
    report = GradeReport(
        instance.instance_id,
        fail_to_pass=dict.fromkeys(instance.FAIL_TO_PASS, False),
        pass_to_pass=dict.fromkeys(instance.PASS_TO_PASS, False),
    )
    try:
        check_inside_repo(split_patch(instance.test_patch))
    except (OutsideRepoError, PatchError) as exc:
        return _refuse(report, f"the task's test patch is unusable: {exc}")
    stage = f"{WORK}/grade-{secrets.token_hex(6)}"
    seal = Seal.new(stage)
    with tempfile.TemporaryDirectory(prefix="agentenvs-grade-") as tmp:
        seal_name = _stage_files(Path(tmp), patch, instance.test_patch, seal)
        sandbox.put(Path(tmp), stage)
    landing = land(sandbox, stage, workdir, instance.test_cmd, patch)
    report.reverted = landing.reverted
    if not landing.applied:
        return _refuse(report, landing.refused)
    report.applied, report.applied_patch = True, landing.diff
    report.integrity_flags = audit_diff(landing.diff)
    s = shlex.quote(stage)
    tests_in = sandbox.exec(
        ["bash", "-c", f"[ ! -s {s}/test.patch ] || {GIT} apply --whitespace=nowarn {s}/test.patch"],
        timeout=APPLY_TIMEOUT,
        cwd=workdir,
    )
    if tests_in.exit_code != 0:
        return _refuse(report, f"the test patch did not apply on top of the patch: {tests_in.output[-600:]}")
    try:
        script = test_command(
            instance.test_cmd,
            workdir=workdir,
            launcher=f"{stage}/launcher.py",
            seal=seal,
            seal_file=f"{stage}/{seal_name}",
            args=["-p", "no:cacheprovider", "-q", *test_files(instance.test_ids)],
        )
    except TestCommandError as exc:
        return _refuse(report, str(exc))
    run = sandbox.exec(["bash", "-c", script], timeout=timeout, cwd="/")
    sandbox.kill_all()  # nothing the tests started may touch the record while we read it
    report.test_output = run.output[-4000:]
    if run.timed_out:
        return _refuse(report, f"the tests timed out after {timeout:g}s")
    return _score(report, instance, sandbox, seal, run.exit_code)


def _score(report: GradeReport, instance: SWEInstance, sandbox: Sandbox, seal: Seal, exit_code: int) -> GradeReport:
    try:
        record = read_record(sandbox.get(seal.record), seal)
    except FileNotFoundError:
        return _refuse(
            report,
            f"no sealed record: the test process ended before pytest finished (exit {exit_code}; killed, crashed "
            f"or exited early): {report.test_output[-300:]}",
        )
    except RecordError as exc:
        return _refuse(report, f"the test record is not trusted: {exc}")
    report.test_exit_code = record.exit_code
    report.tampered = record.tampered
    report.integrity_flags += [f"runtime-tampering: {t}" for t in record.tampered]
    report.integrity_flags += [f"runtime-observed: {t}" for t in record.observed]
    outcomes = {t: test_passed(t, record.cases) for t in instance.test_ids}
    report.fail_to_pass = {t: outcomes[t] for t in instance.FAIL_TO_PASS}
    report.pass_to_pass = {t: outcomes[t] for t in instance.PASS_TO_PASS}
    report.report_consistent = (record.exit_code == 0) == all(c.ok for c in record.cases)
    f2p, p2p = sum(report.fail_to_pass.values()), sum(report.pass_to_pass.values())
    report.detail = (
        f"FAIL_TO_PASS {f2p}/{len(report.fail_to_pass)}, PASS_TO_PASS {p2p}/{len(report.pass_to_pass)}, "
        f"pytest exit {record.exit_code}" + _reverted_note(report)
    )
    if not report.report_consistent:
        report.detail += "; the outcomes and the runner's exit code disagree, so the run is not trusted"
    if report.tampered:
        report.detail += "; the test framework was tampered with during the run, so it is not trusted: " + "; ".join(
            report.tampered[:3]
        )
    return report
