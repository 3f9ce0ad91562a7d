"""Run checkers from ``evaluators/`` inside a sandbox, where the state lives."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import evaluators
from agentenvs.core.checks import CheckResult
from agentenvs.core.errors import SandboxError
from agentenvs.core.task import CheckSpec
from agentenvs.sandbox.base import ExecResult, Sandbox, Shell
from agentenvs.sandbox.shell import bash_quote

EVALUATORS_ROOT = "/opt/agentenvs"
#: Every backend mounts the checkers read-only here, so the agent can neither break nor fake them.
EVALUATORS_MOUNT = f"{EVALUATORS_ROOT}/evaluators"
EVALUATORS_SOURCE = Path(evaluators.__file__).resolve().parent
EVALUATORS_ENV = {"PYTHONPATH": EVALUATORS_ROOT, "PYTHONDONTWRITEBYTECODE": "1"}
MAX_CHECK_OUTPUT = 8 << 20
#: How checkers start: isolated Python (no PYTHON* variables, no user site, no site hooks, neither the
#: working directory nor a script directory on sys.path) with only the read-only mount added to it.
EVALUATORS_COMMAND = [
    "python3",
    "-I",
    "-S",
    "-c",
    f"import sys; sys.path.insert(0, {EVALUATORS_ROOT!r}); from evaluators.__main__ import main; sys.exit(main())",
]


def run_in(
    sandbox: Sandbox, shell: Shell | None, argv: list[str], timeout: float, env: dict[str, str] | None = None
) -> ExecResult:
    """Run ``argv`` through ``shell`` when given (a persistent shell of the checker's own:
    no process start per call, which costs ~60 ms on docker), else as a one-off exec."""
    if shell is None:
        return sandbox.exec(argv, timeout=timeout, env=env)
    words = [f"{key}={bash_quote(value)}" for key, value in (env or {}).items()]
    return shell.run(
        " ".join([*words, *(bash_quote(a) for a in argv)]), timeout=timeout, max_output_bytes=MAX_CHECK_OUTPUT
    )


def _live(name: str) -> bool:
    try:
        return evaluators.is_live(name)
    except evaluators.ArgumentError:
        return False  # an unknown checker: the batch reports it, wherever it runs


def run_checks(
    sandbox: Sandbox, specs: Sequence[CheckSpec], timeout: float = 30.0, shell: Shell | None = None
) -> list[CheckResult]:
    """Evaluate ``specs``: state checks outside the agent's reach, live checks inside the sandbox.

    Checks that only read files run in the sandbox's state checker (a trusted
    process on the host reading the sandbox's files as data, see
    :mod:`.state_checker`); checks that need the agent's processes or network
    (``evaluators.is_live``) run in the sandbox, through ``shell`` when given.
    One round trip each per step.
    """
    results: list[CheckResult | None] = [None] * len(specs)
    outside = [i for i, spec in enumerate(specs) if not _live(spec.check)]
    inside = sorted(set(range(len(specs))) - set(outside))
    if outside:
        batch = [{"check": specs[i].check, "args": specs[i].args} for i in outside]
        answer = sandbox.state_checker().run(batch, timeout=timeout)
        for i, item in zip(outside, _decoded(answer, len(outside)), strict=True):
            results[i] = item
    if inside:
        for i, item in zip(inside, _in_sandbox(sandbox, [specs[i] for i in inside], timeout, shell), strict=True):
            results[i] = item
    return [r if r is not None else CheckResult.error("not evaluated") for r in results]


def _decoded(answer: list[dict] | str, count: int) -> list[CheckResult]:
    if isinstance(answer, list) and len(answer) == count:
        return [CheckResult.from_dict(item if isinstance(item, dict) else {}) for item in answer]
    why = answer if isinstance(answer, str) else f"the checker answered {len(answer)} results for {count} checks"
    return [CheckResult.error(f"checks could not run: {why}") for _ in range(count)]


def _in_sandbox(sandbox: Sandbox, specs: Sequence[CheckSpec], timeout: float, shell: Shell | None) -> list[CheckResult]:
    """Live checks, in one isolated-Python process inside the sandbox."""
    payload = json.dumps([{"check": s.check, "args": s.args} for s in specs])
    # Checks observe: git must not rewrite its index (a stat refresh) while they look.
    result = run_in(sandbox, shell, [*EVALUATORS_COMMAND, "batch", payload], timeout, {"GIT_OPTIONAL_LOCKS": "0"})
    if result.timed_out:
        return [CheckResult.error(f"checks timed out after {timeout:g}s") for _ in specs]
    lines = result.stdout.strip().splitlines()
    try:
        decoded = json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        decoded = None
    if isinstance(decoded, list) and len(decoded) == len(specs):
        return [CheckResult.from_dict(item if isinstance(item, dict) else {}) for item in decoded]
    if not sandbox.alive():
        raise SandboxError("the sandbox died while running checks")
    # The sandbox is up but the checkers could not run (the agent exhausted its process
    # limit or broke the tools): the state fails its checks; it is not an infra error.
    why = f"checks could not run (exit {result.exit_code}): {result.output[-300:]}"
    return [CheckResult.error(why) for _ in specs]
