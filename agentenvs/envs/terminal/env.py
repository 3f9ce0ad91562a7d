"""``TerminalEnv``: shell tasks in Harbor's layout, on the local or Docker backend.

The agent drives a persistent bash; checkpoints and the state hash run in a
second shell of their own, so a step starts no process beyond the checkers'.
After the agent is done, the task's ``tests/`` are uploaded (never before)
and ``tests/test.sh`` writes ``/logs/verifier/reward.txt`` or
``reward.json`` as Harbor's verifier does. The checkers are mounted
read-only in every sandbox, so the agent cannot tamper with them. A
multi-step task is graded step by step (see :mod:`.steps`), each step
after a seal, so no step's verifier runs beside an agent process.
"""

from __future__ import annotations

import posixpath
import shlex
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from gymnasium import spaces

from agentenvs.core.actions import ParsedAction, require_string_argument
from agentenvs.core.checks import Verdict, combine
from agentenvs.core.env import MAX_TEXT_CHARS, AgentEnv, StepOutcome
from agentenvs.core.errors import MachineLacksError, SandboxError
from agentenvs.core.spaces import Unicode
from agentenvs.core.task import Task, TaskStep
from agentenvs.envs.terminal.artifacts import collect_artifacts
from agentenvs.envs.terminal.hacks import TERMINAL_HACKS
from agentenvs.envs.terminal.steps import StepResult, below_minimum, payment, roll_up
from agentenvs.envs.terminal.tools import BASH_TOOL, PROMPT
from agentenvs.envs.terminal.verifier import TESTS_DIR, VERIFIER_LOGS, machine_lacks, run_verifier
from agentenvs.sandbox.base import Sandbox, Shell
from agentenvs.sandbox.checks import run_checks, run_in
from agentenvs.sandbox.egress import EgressGate, verifier_allow_list
from agentenvs.sandbox.images import image_search_dirs
from agentenvs.sandbox.provision import Provisioner

LOG_DIRS = "/logs/agent /logs/verifier /logs/artifacts"
SOLUTION_DIR = "/solution"
SOLUTION_SCRIPTS = {"oracle": "solve.sh", "wrong": "wrong.sh"}
STATE_HASH_SCRIPT = (
    "{ find . -xdev -printf '%P\\t%y\\t%m\\t%U:%G\\t%l\\n' | LC_ALL=C sort;"
    " find . -xdev -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum; } | sha256sum"
)


@dataclass
class Start:
    """What a pooled sandbox's episode starts from: its checks (until the reset reads them) and state hash."""

    checks: dict[str, bool] | None
    state_hash: str


def _prepare(sandbox: Sandbox, task: Task) -> Start | None:
    """Run in the pool's thread while the sandbox waits: the log directories, the first checks and the
    state hash, which nothing changes before an episode takes it. A multi-step task's first step changes
    the files at reset, so its sandbox is prepared no further."""
    if task.steps:
        return None
    _make_log_dirs(sandbox, None)
    return Start(checks=_checks(sandbox, None, task), state_hash=_workdir_hash(sandbox, None))


def _make_log_dirs(sandbox: Sandbox, shell: Shell | None) -> None:
    """Harbor's log directories, writable by any user, as Harbor makes them."""
    made = run_in(sandbox, shell, ["bash", "-c", f"mkdir -p {LOG_DIRS} && chmod 777 {LOG_DIRS}"], timeout=30)
    if made.exit_code != 0:
        raise SandboxError(f"could not make {LOG_DIRS}: {made.output[-300:]}")


def _checks(sandbox: Sandbox, shell: Shell | None, task: Task) -> dict[str, bool]:
    checkpoints = task.config.checkpoints
    results = run_checks(sandbox, checkpoints, shell=shell)
    return {c.name: r.passed for c, r in zip(checkpoints, results, strict=True)}


def _workdir_hash(sandbox: Sandbox, shell: Shell | None) -> str:
    """Names, types, modes, owners, link targets and contents under the workdir.

    Shell and coreutils only, so it works in any task image (Harbor tasks
    bring their own); modification times are left out on purpose.
    """
    script = f"cd {shlex.quote(sandbox.spec.workdir)} && {STATE_HASH_SCRIPT}"
    result = run_in(sandbox, shell, ["bash", "-c", script], timeout=60)
    lines = result.stdout.strip().splitlines()
    digest = lines[-1].split()[0] if result.exit_code == 0 and lines and lines[-1].split() else ""
    if len(digest) != 64:
        raise SandboxError(f"could not hash the workdir: {result.output[-300:]}")
    return digest


class TerminalEnv(AgentEnv):
    """A shell task. ``backend`` is ``"local"`` (bubblewrap, the default) or ``"docker"``."""

    family = "terminal"
    native_tools = [BASH_TOOL]
    prompt_description = PROMPT
    family_hacks = TERMINAL_HACKS

    def __init__(
        self,
        task_id: str | None = None,
        *,
        backend: str = "local",
        pool_size: int = 0,
        network: str = "task",
        **kwargs: Any,
    ):
        """``network="task"`` gives a task the network it asks for where the machine has one;
        ``"off"`` never does (both say so in ``info["warnings"]``)."""
        super().__init__(task_id, **kwargs)
        self.backend = backend
        self._provisioner = Provisioner(backend, pool_size=pool_size, network=network, prepare=_prepare)
        self._sandbox: Sandbox | None = None
        self._shell: Shell | None = None
        self._checker: Shell | None = None
        self._warnings: list[str] = []
        self._artifacts: dict[str, bytes] = {}
        self._step_index = 0
        self._step_results: list[StepResult] = []
        self._stopped_early = ""
        #: The start's checks and state hash, computed while the sandbox waited in the pool (see ``_prepare``).
        self._pooled_start: Start | None = None

    def _extra_spaces(self) -> dict[str, spaces.Space[Any]]:
        return {
            "exit_code": spaces.Box(low=-1, high=255, shape=(), dtype=np.int64),
            "cwd": Unicode(4096),
        }

    @property
    def sandbox(self) -> Sandbox:
        if self._sandbox is None:
            raise SandboxError("no sandbox: call reset() first")
        return self._sandbox

    def _begin(self, task: Task, seed: int) -> StepOutcome:
        self._warnings = [*task.warnings, *self._provisioner.warnings_for(task)]
        self._artifacts, self._step_index, self._step_results, self._stopped_early = {}, 0, [], ""
        self._sandbox = self._provisioner.acquire(task)
        try:
            self._pooled_start = self._provisioner.prepared(self._sandbox)
            self._open_shells(make_log_dirs=self._pooled_start is None)
            if task.steps:
                self._start_step(task.steps[0])
        except BaseException:
            self._end()  # a reset that fails gives its sandbox back at once, not at garbage collection
            raise
        info = {"warnings": list(self._warnings)} if self._warnings else {}
        return StepOutcome(text="", extras=self._extras(0, self._sandbox.spec.workdir), info=info)

    def _open_shells(self, make_log_dirs: bool = True) -> None:
        """The agent's shell and ours, and Harbor's log directories (unless the pool made them)."""
        self._shell = self.sandbox.shell()
        self._checker = self.sandbox.shell()
        if make_log_dirs:
            _make_log_dirs(self.sandbox, self._checker)

    def _instruction(self) -> str:
        assert self._task is not None
        steps = self._task.steps
        return steps[self._step_index].instruction if steps else self._task.instruction

    def _start_step(self, step: TaskStep) -> None:
        """Harbor's step setup: ``steps/<name>/workdir/`` merged into the workdir, then its ``setup.sh`` run."""
        files = step.dir("workdir")
        if files is None:
            return
        workdir = self.sandbox.spec.workdir
        self.sandbox.put(files, workdir)
        if (files / "setup.sh").is_file():
            script = posixpath.join(workdir, "setup.sh")
            done = self.sandbox.exec(["bash", script], timeout=self._task_timeout(), cwd=workdir)
            self.sandbox.exec(["rm", "-f", script], timeout=30)
            if done.exit_code != 0:
                raise SandboxError(f"step {step.name}: setup.sh exited with {done.exit_code}: {done.output[-500:]}")

    def _task_timeout(self) -> float:
        assert self._task is not None
        return self._task.config.environment.build_timeout_sec

    def _extras(self, exit_code: int, cwd: str) -> dict[str, Any]:
        return {"exit_code": np.array(max(-1, min(255, exit_code)), dtype=np.int64), "cwd": cwd}

    def _act(self, action: ParsedAction) -> StepOutcome:
        assert self._task is not None and self._shell is not None
        self._pooled_start = None
        command = require_string_argument(action, "command") if action.kind == "tool" else action.text
        limits = self._task.config.limits
        result = self._shell.run(command, timeout=limits.step_timeout_sec, max_output_bytes=limits.max_output_bytes)
        text = result.output
        if len(text) > MAX_TEXT_CHARS:
            text = text[-MAX_TEXT_CHARS:]
        info = {"exit_code": result.exit_code, "timed_out": result.timed_out, "output_truncated": result.truncated}
        return StepOutcome(text=text, extras=self._extras(result.exit_code, self._shell.cwd()), info=info)

    def _check(self, task: Task) -> dict[str, bool]:
        if self._pooled_start is not None and self._pooled_start.checks is not None:
            checks, self._pooled_start.checks = self._pooled_start.checks, None  # the reset's own checks, once
            return checks
        return _checks(self.sandbox, self._checker, task)

    def _advance(self, action: ParsedAction) -> StepOutcome | None:
        """In a multi-step task, ``done``/``submit`` grades the step and goes on to the next one."""
        task = self._task
        assert task is not None
        if not task.steps or self._step_index + 1 >= len(task.steps):
            return None
        step = task.steps[self._step_index]
        verdict = self._grade(task, step, resume=True)
        result = StepResult(step.name, verdict.score, dict(verdict.metrics or {}), verdict.detail)
        self._step_results.append(result)
        self._stopped_early = below_minimum(step, verdict)
        if self._stopped_early:
            return None
        self._step_index += 1
        upcoming = task.steps[self._step_index]
        self._start_step(upcoming)
        text = (
            f"Step {step.name} is done: reward {verdict.score:.2f}.\n\n"
            f"Step {self._step_index + 1} of {len(task.steps)} ({upcoming.name}):\n{upcoming.instruction}"
        )
        info = {"task_step": upcoming.name, "task_steps": [r.as_info() for r in self._step_results]}
        extras = self._extras(0, self.sandbox.spec.workdir)
        return StepOutcome(text=text, extras=extras, info=info, reward=payment(task, step, verdict.score))

    def _verify(self, task: Task, final_action: ParsedAction | None) -> Verdict:
        """Seal the sandbox (every agent process killed, a toolchain the agent never touched), then grade."""
        if not task.steps:
            verdict = self._grade(task, None, resume=False)
        elif self._stopped_early:
            last = self._step_results[-1]
            note = f"stopped after step {last.name}: {self._stopped_early}"
            verdict = roll_up(task, self._step_results, Verdict(0.0, False, note))
        else:
            step = task.steps[self._step_index]
            last = self._grade(task, step, resume=False)
            self._step_results.append(StepResult(step.name, last.score, dict(last.metrics or {}), last.detail))
            verdict = roll_up(task, self._step_results, last)
        warnings = [*self._warnings, *((verdict.extra or {}).get("warnings") or [])]
        if warnings:
            verdict = replace(verdict, extra={**(verdict.extra or {}), "warnings": warnings})
        return verdict

    def _grade(self, task: Task, step: TaskStep | None, *, resume: bool) -> Verdict:
        """Seal, run the (step's) verifier, collect the artifacts; with ``resume`` the agent goes on after."""
        tests = [d for d in (task.dir("tests"), step.dir("tests") if step else None) if d is not None]
        if not any((d / "test.sh").is_file() for d in tests) and task.config.evaluator is None:
            raise SandboxError(f"{task.full_id} has neither tests/test.sh nor an [evaluator] section")
        self._shell = self._checker = None
        sealed = self.sandbox.seal()
        try:
            if tests:
                verifier = task.config.verifier
                timeout = (step.config.verifier.timeout_sec if step else None) or verifier.timeout_sec
                env = {**verifier.env, **(step.config.verifier.env if step else {})}
                with EgressGate(sealed.network_namespace(), verifier_allow_list(task)) as gate:
                    verdict = run_verifier(
                        sealed,
                        tests,
                        timeout=timeout,
                        env={**gate.env(sealed.network_peers()), **env},
                        workdir=sealed.spec.workdir,
                        image_dirs=image_search_dirs(sealed.spec.image),
                    )
                lacks = machine_lacks(gate, tests, task, image=sealed.spec.image, env=env) if verdict.score < 1 else ""
                if lacks:
                    raise MachineLacksError(f"{lacks}: an environment error, not the agent's failure")
            else:
                assert task.config.evaluator is not None
                verdict = combine(task.config.evaluator, run_checks(sealed, task.config.evaluator.checks))
            prefix = f"steps/{step.name}/" if step and task.steps else ""
            found, problems = collect_artifacts(sealed, task.config.artifacts)
            self._artifacts.update({prefix + k: v for k, v in found.items()})
            self._warnings += problems
            if resume:
                wiped = sealed.exec(["find", TESTS_DIR, VERIFIER_LOGS, "-mindepth", "1", "-delete"], cwd="/")
                if wiped.exit_code != 0:
                    raise SandboxError(f"clearing the step's verifier files failed: {wiped.output[-300:]}")
        finally:
            if sealed is not self.sandbox:
                sealed.close()
        if resume:
            # Docker stopped the agent's container at the seal; locally its namespaces are simply new.
            resume_agent = getattr(self.sandbox, "resume", None)
            if callable(resume_agent):
                resume_agent()
            self._open_shells()
        note = sealed.sealed_note
        return replace(verdict, detail=f"{verdict.detail}\n[{note}]".strip()) if note else verdict

    def episode_artifacts(self) -> dict[str, bytes]:
        """The last episode's ``/logs/artifacts`` and ``artifacts`` paths (``steps/<name>/...`` per step)."""
        return dict(self._artifacts)

    def _state_hash(self) -> str:
        if self._pooled_start is not None:
            return self._pooled_start.state_hash
        return _workdir_hash(self.sandbox, self._checker)

    def oracle_actions(self, variant: str = "oracle") -> list[Any]:
        """Stage ``solution/`` at ``/solution`` (as Harbor's oracle agent does) and run the script; in a
        multi-step task each step's ``steps/<name>/solution`` in turn, each followed by ``done``."""
        task = self._task
        if task is None:
            raise RuntimeError("call reset() before oracle_actions()")
        script = SOLUTION_SCRIPTS.get(variant)
        places = [(s.dir("solution"), f"steps/{s.name}/solution") for s in task.steps[self._step_index :]]
        places = places or [(task.dir("solution"), "solution")]
        actions: list[Any] = []
        for solution, where in places:
            if script is None or solution is None or not (solution / script).is_file():
                raise NotImplementedError(f"no oracle: {task.full_id} has no {where}/{script or variant}")
            target = posixpath.join(SOLUTION_DIR, where) if task.steps else SOLUTION_DIR
            self.sandbox.put(solution, target)
            actions += [{"name": "bash", "arguments": {"command": f"bash {target}/{script}"}}, "done"]
        return actions

    def _end(self) -> None:
        self._pooled_start = None
        # The sandbox closes its own shells; closing ours first would make that slower
        # on the local backend (the namespace then takes about a second to die).
        self._shell = self._checker = None
        if self._sandbox is not None:
            self._provisioner.release(self._sandbox)
            self._sandbox = None

    def _release(self) -> None:
        self._provisioner.close()
