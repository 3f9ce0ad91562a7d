"""``SWEEnv``: fix an issue in a repository, graded by hidden tests as SWE-bench grades.

The agent works in the repository (checked out at ``base_commit``) with a
persistent bash and a file editor; every observation lists the files that
differ from the base commit. On ``submit`` (or ``done``) the agent's change is
read as ``git diff`` against the base commit and graded in a fresh sandbox that
the agent never touched (:mod:`.grading`). The gold patch and the tests never
enter the agent's sandbox.

Dense checkpoints (one per hidden ``FAIL_TO_PASS`` test, named by its number
only, "the repository still imports", "no ``PASS_TO_PASS`` test broken") are
graded the same way in a separate checker sandbox, only when the diff has
changed since the last step; before each check the checker is put back to the
snapshot taken right after its checkout, so code an earlier check ran cannot
rig a later one.

Nothing carries over between episodes: when the sandbox is reused, every
process in it is killed and what the agent could have left outside the
repository (/tmp, HOME, the staging directories) is wiped before re-cloning.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from agentenvs.core.actions import ParsedAction, require_string_argument
from agentenvs.core.checks import Verdict
from agentenvs.core.env import MAX_TEXT_CHARS, AgentEnv, StepOutcome
from agentenvs.core.errors import AgentFault, SandboxError
from agentenvs.core.spaces import Unicode
from agentenvs.core.task import Checkpoint, Task
from agentenvs.envs.swe import branching
from agentenvs.envs.swe.editor import Editor
from agentenvs.envs.swe.grading import GradeReport, grade_patch
from agentenvs.envs.swe.hacks import SWE_HACKS
from agentenvs.envs.swe.instance import SWEInstance, instance_of, wrong_patch
from agentenvs.envs.swe.repo import SCRUB, SETUP_TIMEOUT, RepoState, UngradableRepository, repo_state
from agentenvs.envs.swe.sandboxes import RepoSandboxes, checkout
from agentenvs.envs.swe.tools import BASH_TOOL, EDITOR_TOOL, PROMPT
from agentenvs.sandbox.base import Sandbox, SandboxSpec, Shell

ORACLE_DIR = "/tmp/.agentenvs-oracle"
IMPORTS = "repository imports"
P2P_INTACT = "no PASS_TO_PASS test broken"


def f2p_checkpoint(index: int, total: int) -> str:
    """The name of the check on the ``index``-th (from 1) hidden test: its number, never its id."""
    return f"hidden test {index} of {total}"


def swe_checkpoints(instance: SWEInstance) -> list[Checkpoint]:
    """The family's dense checks: each F2P test (by number), the suite still collects, P2P intact."""
    total = len(instance.FAIL_TO_PASS)
    cps = [
        Checkpoint(name=f2p_checkpoint(i, total), check="pytest_report", args={"hidden_test": i})
        for i in range(1, total + 1)
    ]
    cps.append(Checkpoint(name=IMPORTS, check="command_exit", args={}))
    if instance.PASS_TO_PASS:
        cps.append(Checkpoint(name=P2P_INTACT, check="pytest_report", args={}))
    return cps


def checks_of(instance: SWEInstance, report: GradeReport | None) -> dict[str, bool]:
    """Checkpoint values from a grade report; ``None`` means the unchanged base commit."""
    total = len(instance.FAIL_TO_PASS)
    if report is None:
        return {**{f2p_checkpoint(i, total): False for i in range(1, total + 1)}, IMPORTS: True, P2P_INTACT: True}
    checks = {f2p_checkpoint(i, total): report.fail_to_pass[t] for i, t in enumerate(instance.FAIL_TO_PASS, 1)}
    checks[IMPORTS] = report.ran
    checks[P2P_INTACT] = all(report.pass_to_pass.values())
    return checks


class SWEEnv(AgentEnv):
    """An SWE task. ``backend`` is ``"local"`` (bubblewrap, the default) or ``"docker"``.

    ``fresh_sandbox=False`` (the default) resets by re-cloning the repository in
    the same sandbox (a fraction of a second); ``True`` takes a new sandbox per
    episode (from a warm pool when ``pool_size > 0``). Grading always uses a
    fresh sandbox.
    """

    family = "swe"
    native_tools = [BASH_TOOL, EDITOR_TOOL]
    family_hacks = SWE_HACKS
    prompt_description = PROMPT

    def __init__(
        self,
        task_id: str | None = None,
        *,
        backend: str = "local",
        pool_size: int = 0,
        fresh_sandbox: bool = False,
        **kwargs: Any,
    ):
        super().__init__(task_id, **kwargs)
        self._sandboxes = RepoSandboxes(backend, pool_size)
        self.backend = backend
        self.fresh_sandbox = fresh_sandbox
        #: The state hash of this episode's start, while no action has run (``None``: read it).
        self._reset_digest: str | None = None
        self._sandbox: Sandbox | None = None
        self._spec: SandboxSpec | None = None
        self._checker: Sandbox | None = None
        self._checker_snapshot: str | None = None
        self._checker_used = False
        #: Every process in the agent's sandbox was killed and none could have started since.
        self._agent_stopped = False
        self._shell: Shell | None = None
        self._editor: Editor | None = None
        self._instance: SWEInstance | None = None
        self._state = RepoState(status="", diff="")
        self._checked: tuple[str, dict[str, bool]] | None = None
        self.last_report: GradeReport | None = None

    def _extra_spaces(self) -> dict[str, spaces.Space[Any]]:
        return {
            "exit_code": spaces.Box(low=-1, high=255, shape=(), dtype=np.int64),
            "changed_files": Unicode(MAX_TEXT_CHARS),
        }

    # -- sandboxes ----------------------------------------------------------------

    @property
    def sandbox(self) -> Sandbox:
        if self._sandbox is None:
            raise SandboxError("no sandbox: call reset() first")
        return self._sandbox

    def _scrubbed(self, sandbox: Sandbox) -> Sandbox:
        """Kill every process the last episode left and wipe what it could write outside the repository."""
        self._stop_agent()
        result = sandbox.exec(["bash", "-c", SCRUB], timeout=SETUP_TIMEOUT, cwd="/")
        if result.timed_out or result.exit_code != 0:
            raise SandboxError(f"could not wipe the sandbox between episodes: {result.output[-400:]}")
        return sandbox

    def _drop_checker(self) -> None:
        self._sandboxes.release(self._checker)
        self._checker, self._checker_snapshot, self._checker_used = None, None, False

    # -- episode ------------------------------------------------------------------

    def _begin(self, task: Task, seed: int) -> StepOutcome:
        instance = instance_of(task)
        spec = self._sandboxes.spec_for(task, instance)
        # The family's own checkpoints, so ``info["progress"]`` weighs them.
        self._task = task.model_copy(
            update={"config": task.config.model_copy(update={"checkpoints": swe_checkpoints(instance)})}
        )
        # Every episode gets its own checker, snapshotted after its checkout.
        self._drop_checker()
        reuse = not self.fresh_sandbox and self._sandbox is not None and self._spec == spec and self._sandbox.alive()
        if reuse:
            try:
                checkout(self._scrubbed(self.sandbox), task, instance, spec.workdir)
            except SandboxError:
                reuse = False  # the agent left something that would not go: start afresh
        if not reuse:
            self._sandboxes.release(self._sandbox)
            self._sandbox = None
            self._sandbox = self._sandboxes.checked_out(spec, task, instance)
            self._spec = spec
        prepared = self._sandboxes.prepared(self._sandbox) if not reuse else None
        self._reset_digest = prepared.digest if prepared is not None else None
        self._instance = instance
        self._agent_stopped = False
        self._shell = self.sandbox.shell()
        self._editor = Editor(self.sandbox, spec.workdir, max_chars=task.config.limits.max_output_bytes)
        self._state = RepoState(status="", diff="")
        self._checked = None
        self.last_report = None
        text = (
            f"The repository is checked out at {spec.workdir} (commit {instance.base_commit[:12]}).\n"
            "Fix the issue described in the instruction, then call submit."
        )
        return StepOutcome(text=text, extras=self._extras(0))

    def _extras(self, exit_code: int) -> dict[str, Any]:
        return {
            "exit_code": np.array(max(-1, min(255, exit_code)), dtype=np.int64),
            "changed_files": self._state.status,
        }

    def _act(self, action: ParsedAction) -> StepOutcome:
        assert self._task is not None and self._shell is not None and self._editor is not None
        self._reset_digest = None
        limits = self._task.config.limits
        info: dict[str, Any] = {}
        if action.kind == "tool" and action.name == "str_replace_editor":
            text, exit_code = self._editor.run(action.arguments), 0
        else:
            command = require_string_argument(action, "command") if action.kind == "tool" else action.text
            result = self._shell.run(command, timeout=limits.step_timeout_sec, max_output_bytes=limits.max_output_bytes)
            text, exit_code = result.output, result.exit_code
            if result.timed_out:
                text += f"\n[command interrupted: it ran longer than {limits.step_timeout_sec:g}s]"
            info = {"exit_code": result.exit_code, "timed_out": result.timed_out, "output_truncated": result.truncated}
        before = self._state.status
        self._state, unread = self._state_while_agent_runs()
        if unread:
            text = f"{text.rstrip()}\n{unread}"
        elif self._state.status != before:
            changed = self._state.status or "(none: the repository matches the base commit again)"
            text = f"{text.rstrip()}\n[files changed since the base commit]\n{changed}"
        if len(text) > MAX_TEXT_CHARS:
            text = text[-MAX_TEXT_CHARS:]
        return StepOutcome(text=text, extras=self._extras(exit_code), info=info)

    def _state_while_agent_runs(self) -> tuple[RepoState, str]:
        """The diff after a step, and a note when it could not be read.

        The agent's own processes are still running here: one rewriting a file
        while git reads it makes the read fail. That is not the environment's
        failure, so it never ends the episode; the last state stands (it only
        feeds the observation and the dense checks), and the final diff is read
        after every agent process is killed.
        """
        why = ""
        for _ in range(3):
            try:
                return self._read_state(), ""
            except SandboxError as exc:
                if not self.sandbox.alive():
                    raise
                why = str(exc)
        return self._state, f"[the repository's changes could not be read after this step: {why}]"

    def _read_state(self) -> RepoState:
        assert self._instance is not None and self._spec is not None
        return repo_state(self.sandbox, self._spec.workdir, self._instance.base_commit)

    def _check(self, task: Task) -> dict[str, bool]:
        instance = self._instance
        assert instance is not None and self._spec is not None
        if not self._state.diff.strip():
            return checks_of(instance, None)
        if self._checked is not None and self._checked[0] == self._state.digest:
            return dict(self._checked[1])
        report = grade_patch(
            self._clean_checker(task, instance),
            instance,
            self._state.diff,
            self._spec.workdir,
            timeout=task.config.verifier.timeout_sec,
        )
        self._checker_used = True
        checks = checks_of(instance, report)
        self._checked = (self._state.digest, checks)
        return dict(checks)

    def _clean_checker(self, task: Task, instance: SWEInstance) -> Sandbox:
        """The checker as it was right after its checkout: no file or process an earlier check left."""
        assert self._spec is not None
        if self._checker is not None and not self._checker.alive():
            self._drop_checker()
        if self._checker is None:
            self._checker = self._sandboxes.checked_out(self._spec, task, instance)
            self._checker_snapshot = self._checker.snapshot()
        elif self._checker_used:
            assert self._checker_snapshot is not None
            self._checker.kill_all()
            self._checker.restore(self._checker_snapshot)
        self._checker_used = False
        return self._checker

    def _verify(self, task: Task, final_action: ParsedAction | None) -> Verdict:
        instance = self._instance
        assert instance is not None and self._spec is not None
        self._stop_agent()  # nothing the agent started may change the repository while it is read
        try:
            patch = self._read_state().diff
        except UngradableRepository as exc:
            raise AgentFault(f"the agent left a repository no patch can be taken from: {exc}") from exc
        report = self.grade(patch)
        metrics = {
            "resolved": float(report.resolved),
            "fail_to_pass": report.fraction("f2p"),
            "pass_to_pass": report.fraction("p2p"),
            "applied": float(report.applied),
        }
        extra: dict[str, Any] = {
            "model_patch": report.applied_patch if report.applied else patch,
            "instance_id": instance.instance_id,
            "swe_report": report.swebench_report(),
            "reverted_paths": report.reverted_paths(),
        }
        if report.integrity_flags:
            extra["integrity_flags"] = list(report.integrity_flags)
        return Verdict(
            score=float(report.resolved),
            success=report.resolved,
            detail=report.detail,
            metrics=metrics,
            extra=extra,
        )

    def grade(self, patch: str) -> GradeReport:
        """Grade ``patch`` for the current task in a fresh sandbox, as the final verifier does."""
        task, instance, spec = self._task, self._instance, self._spec
        if task is None or instance is None or spec is None:
            raise RuntimeError("call reset() before grade()")
        grader = self._sandboxes.checked_out(spec, task, instance)
        try:
            report = grade_patch(grader, instance, patch, spec.workdir, timeout=task.config.verifier.timeout_sec)
        finally:
            self._sandboxes.release(grader)
        self.last_report = report
        return report

    def _state_hash(self) -> str:
        return self._reset_digest or self._read_state().digest

    def _save_state(self) -> branching.Position | None:
        """The repository's changes as one diff (see ``branching.py``); an ended episode replays."""
        return branching.save(self)

    def _load_state(self, state: branching.Position) -> None:
        self._reset_digest = None
        branching.load(self, state)

    def oracle_actions(self, variant: str = "oracle") -> list[Any]:
        """Apply the gold patch (or ``solution/wrong.diff``) with ``git apply``, then submit."""
        task, instance = self._task, self._instance
        if task is None or instance is None:
            raise RuntimeError("call reset() before oracle_actions()")
        if variant == "oracle":
            patch = instance.patch
        elif variant == "wrong":
            patch = wrong_patch(task) or ""
        else:
            raise NotImplementedError(f"unknown solution variant {variant!r}; use 'oracle' or 'wrong'")
        if not patch.strip():
            raise NotImplementedError(f"{task.full_id} has no {variant} patch")
        staged = f"{ORACLE_DIR}/{variant}.diff"
        self.sandbox.put(patch.encode("utf-8"), staged)
        command = f"git apply --whitespace=nowarn {staged} && rm -rf {ORACLE_DIR}"
        return [{"name": "bash", "arguments": {"command": command}}, "submit"]

    def _stop_agent(self) -> None:
        """Kill every process in the agent's sandbox, its shell included.

        The shell goes with the rest (``kill_all`` closes it): closing it first
        would leave zombies the sandbox's init must wait for.
        """
        if self._sandbox is not None and not self._agent_stopped:
            self._sandbox.kill_all()
        self._shell = None
        self._agent_stopped = True

    def _end(self) -> None:
        if self.fresh_sandbox:
            self._shell = None
            self._sandboxes.release(self._sandbox)
            self._sandbox = None
        else:
            self._stop_agent()

    def _release(self) -> None:
        self._drop_checker()
        self._sandboxes.release(self._sandbox)
        self._sandbox = None
        self._sandboxes.close()
