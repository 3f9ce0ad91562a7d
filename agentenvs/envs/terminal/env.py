"""``TerminalEnv``: shell tasks in Harbor's layout, on the local or Docker backend.

The agent drives a persistent bash; checkpoints and the state hash run in a
second shell of their own, so a step starts no process beyond the checkers'.
After the agent is done, the task's ``tests/`` are uploaded (never before)
and ``tests/test.sh`` writes ``/logs/verifier/reward.txt`` or
``reward.json`` as Harbor's verifier does. The checkers are mounted
read-only in every sandbox, so the agent cannot tamper with them.
"""

from __future__ import annotations

import json
import secrets
import shlex
from dataclasses import replace
from typing import Any

import numpy as np
from gymnasium import spaces

from agentenvs.core.actions import ParsedAction, require_string_argument
from agentenvs.core.checks import Verdict, combine
from agentenvs.core.env import MAX_TEXT_CHARS, AgentEnv, StepOutcome
from agentenvs.core.errors import SandboxError
from agentenvs.core.spaces import Unicode
from agentenvs.core.task import Task
from agentenvs.envs.terminal.hacks import TERMINAL_HACKS
from agentenvs.envs.terminal.tools import BASH_TOOL, PROMPT
from agentenvs.sandbox.agent_state import verifier_env
from agentenvs.sandbox.base import Sandbox, Shell
from agentenvs.sandbox.checks import EVALUATORS_ENV, run_checks, run_in
from agentenvs.sandbox.provision import Provisioner

TESTS_DIR = "/tests"
VERIFIER_LOGS = "/logs/verifier"
SOLUTION_DIR = "/solution"
SOLUTION_SCRIPTS = {"oracle": "solve.sh", "wrong": "wrong.sh"}
STATE_HASH_SCRIPT = (
    "{ find . -xdev -printf '%P\\t%y\\t%m\\t%U:%G\\t%l\\n' | LC_ALL=C sort;"
    " find . -xdev -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum; } | sha256sum"
)


class TerminalEnv(AgentEnv):
    """A shell task. ``backend`` is ``"local"`` (bubblewrap, the default) or ``"docker"``."""

    family = "terminal"
    native_tools = [BASH_TOOL]
    prompt_description = PROMPT
    family_hacks = TERMINAL_HACKS

    def __init__(self, task_id: str | None = None, *, backend: str = "local", pool_size: int = 0, **kwargs: Any):
        super().__init__(task_id, **kwargs)
        self.backend = backend
        self._provisioner = Provisioner(backend, pool_size=pool_size)
        self._sandbox: Sandbox | None = None
        self._shell: Shell | None = None
        self._checker: Shell | None = None

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
        self._sandbox = self._provisioner.acquire(task)
        self._shell = self._sandbox.shell()
        self._checker = self._sandbox.shell()
        workdir = task.config.environment.workdir
        return StepOutcome(text="", extras=self._extras(0, workdir))

    def _extras(self, exit_code: int, cwd: str) -> dict[str, Any]:
        return {"exit_code": np.array(max(-1, min(255, exit_code)), dtype=np.int64), "cwd": cwd}

    def _act(self, action: ParsedAction) -> StepOutcome:
        assert self._task is not None and self._shell is not None
        command = require_string_argument(action, "command") if action.kind == "tool" else action.text
        limits = self._task.config.limits
        result = self._shell.run(command, timeout=limits.step_timeout_sec, max_output_bytes=limits.max_output_bytes)
        text = result.output
        if len(text) > MAX_TEXT_CHARS:
            text = text[-MAX_TEXT_CHARS:]
        info = {"exit_code": result.exit_code, "timed_out": result.timed_out, "output_truncated": result.truncated}
        return StepOutcome(text=text, extras=self._extras(result.exit_code, self._shell.cwd()), info=info)

    def _check(self, task: Task) -> dict[str, bool]:
        checkpoints = task.config.checkpoints
        results = run_checks(self.sandbox, checkpoints, shell=self._checker)
        return {c.name: r.passed for c, r in zip(checkpoints, results, strict=True)}

    def _verify(self, task: Task, final_action: ParsedAction | None) -> Verdict:
        """Seal the sandbox (every agent process killed, a toolchain the agent never touched), then grade."""
        tests = task.dir("tests")
        if not (tests is not None and (tests / "test.sh").is_file()) and task.config.evaluator is None:
            raise SandboxError(f"{task.full_id} has neither tests/test.sh nor an [evaluator] section")
        self._shell = self._checker = None
        sealed = self.sandbox.seal()
        try:
            if tests is not None and (tests / "test.sh").is_file():
                verdict = self._run_harbor_verifier(task, sealed)
            else:
                assert task.config.evaluator is not None
                verdict = combine(task.config.evaluator, run_checks(sealed, task.config.evaluator.checks))
        finally:
            if sealed is not self.sandbox:
                sealed.close()
        note = getattr(sealed, "sealed_note", "")
        return replace(verdict, detail=f"{verdict.detail}\n[{note}]".strip()) if note else verdict

    def _run_harbor_verifier(self, task: Task, sandbox: Sandbox) -> Verdict:
        """Harbor's verifier: ``tests/`` uploaded now, ``test.sh`` run, the reward read from ``/logs/verifier``.

        ``/tests``, ``/logs/verifier`` and the run's HOME and TMPDIR are made
        fresh after every agent process is gone, so only this run writes there.
        """
        tests = task.dir("tests")
        assert tests is not None
        scratch = f"/tmp/.agentenvs-verifier-{secrets.token_hex(12)}"
        prepare = (
            f"for d in {TESTS_DIR} {VERIFIER_LOGS}; do "
            'if [ -L "$d" ] || { [ -e "$d" ] && [ ! -d "$d" ]; }; then rm -f -- "$d"; fi; '
            'mkdir -p -- "$d" && chmod -R u+rwX -- "$d" && find "$d" -mindepth 1 -delete || exit 1; done; '
            f"mkdir -m 700 {scratch} && mkdir {scratch}/home {scratch}/tmp"
        )
        ready = sandbox.exec(["bash", "--noprofile", "--norc", "-c", prepare], timeout=30, cwd="/")
        if ready.exit_code != 0:
            # Only the agent shaped these paths (it can never reach them once sealed): its failure.
            return Verdict(score=0.0, success=False, detail=f"the verifier's directories: {ready.output[-300:]}")
        sandbox.put(tests, TESTS_DIR)
        verifier = task.config.verifier
        env = verifier_env(f"{scratch}/home", f"{scratch}/tmp", {**EVALUATORS_ENV, **verifier.env})
        result = sandbox.exec(
            ["bash", "--noprofile", "--norc", f"{TESTS_DIR}/test.sh"],
            timeout=verifier.timeout_sec,
            cwd=task.config.environment.workdir,
            env=env,
        )
        tail = result.output[-2000:]
        if result.timed_out:
            return Verdict(score=0.0, success=False, detail=f"verifier timed out after {verifier.timeout_sec:g}s")
        return _read_reward(sandbox, tail)

    def _state_hash(self) -> str:
        """Names, types, modes, owners, link targets and contents under the workdir.

        Shell and coreutils only, so it works in any task image (Harbor tasks
        bring their own); modification times are left out on purpose.
        """
        assert self._task is not None
        workdir = self._task.config.environment.workdir
        script = f"cd {shlex.quote(workdir)} && {STATE_HASH_SCRIPT}"
        result = run_in(self.sandbox, self._checker, ["bash", "-c", script], timeout=60)
        lines = result.stdout.strip().splitlines()
        digest = lines[-1].split()[0] if result.exit_code == 0 and lines and lines[-1].split() else ""
        if len(digest) != 64:
            raise SandboxError(f"could not hash the workdir: {result.output[-300:]}")
        return digest

    def oracle_actions(self, variant: str = "oracle") -> list[Any]:
        """Stage ``solution/`` at ``/solution`` (as Harbor's oracle agent does) and run the script."""
        task = self._task
        if task is None:
            raise RuntimeError("call reset() before oracle_actions()")
        script = SOLUTION_SCRIPTS.get(variant)
        solution = task.dir("solution")
        if script is None or solution is None or not (solution / script).is_file():
            raise NotImplementedError(f"{task.full_id} has no solution/{script or variant}")
        self.sandbox.put(solution, SOLUTION_DIR)
        return [{"name": "bash", "arguments": {"command": f"bash {SOLUTION_DIR}/{script}"}}, "done"]

    def _end(self) -> None:
        # The sandbox closes its own shells; closing ours first would make that slower
        # on the local backend (the namespace then takes about a second to die).
        self._shell = self._checker = None
        if self._sandbox is not None:
            self._provisioner.release(self._sandbox)
            self._sandbox = None

    def _release(self) -> None:
        self._provisioner.close()


def _read_reward(sandbox: Sandbox, verifier_output: str) -> Verdict:
    """Harbor's contract: a float in reward.txt, or named metrics in reward.json."""
    for name in ("reward.json", "reward.txt"):
        try:
            raw = sandbox.get(f"{VERIFIER_LOGS}/{name}").decode("utf-8", "replace").strip()
        except FileNotFoundError:
            continue
        except OSError as exc:  # a directory or a special file where the reward should be
            return Verdict(score=0.0, success=False, detail=f"unreadable {name}: {exc}")
        try:
            if name == "reward.json":
                metrics = {k: float(v) for k, v in json.loads(raw).items() if isinstance(v, (int, float))}
                score = metrics.get("reward", min(metrics.values()) if metrics else 0.0)
            else:
                metrics = None
                score = float(raw)
        except (ValueError, AttributeError):
            return Verdict(score=0.0, success=False, detail=f"unreadable {name}: {raw[:200]!r}")
        score = min(1.0, max(0.0, score))
        return Verdict(score=score, success=score >= 1.0, detail=verifier_output[-500:], metrics=metrics)
    return Verdict(score=0.0, success=False, detail=f"verifier wrote no reward file; output: {verifier_output[-500:]}")
