"""What a kept mutant becomes while it is still in its sandbox: the issue, a proven wrong fix, a difficulty."""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass, field

from agentenvs.envs.swe import issue_text
from agentenvs.envs.swe.mutations import Edit, Mutation
from agentenvs.envs.swe.suites import SuiteSandbox
from agentenvs.envs.swe.synth_task import TaskSpec
from agentenvs.envs.swe.test_scope import RelevantTests

PROBES_PER_TASK = 4
WRONG_CANDIDATES = 4


@dataclass(frozen=True)
class Context:
    """What every kept mutant of one synthesis is read against."""

    scope: RelevantTests
    mutations: list[Mutation]
    timeout: float
    repo_name: str
    test_cmd: str


@dataclass
class Outcome:
    mutation: Mutation
    fail_to_pass: list[str] = field(default_factory=list)
    pass_to_pass: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)  # the failing tests' messages, for a fallback issue
    reason: str = ""

    @property
    def kept(self) -> bool:
        return not self.reason


def task_spec(box: SuiteSandbox, outcome: Outcome, ctx: Context) -> TaskSpec:
    """The issue, the difficulty and a wrong fix, read off the mutant while it is in the sandbox."""
    m = outcome.mutation
    statement, reproduced = _statement(box, outcome, ctx)
    failing_sources = []
    for test in outcome.fail_to_pass[:20]:
        func = ctx.scope.function(test)
        if func is not None:
            failing_sources.append(ast.unparse(func))
    level, signals = issue_text.difficulty(m.category, len(outcome.fail_to_pass), m.function, failing_sources)
    digest = hashlib.sha256(f"{m.path}\0{m.source}".encode()).hexdigest()[:10]
    return TaskSpec(
        instance_id=f"synth__{ctx.repo_name}-{digest}",
        repo_name=ctx.repo_name,
        mutation=m,
        fail_to_pass=outcome.fail_to_pass,
        pass_to_pass=outcome.pass_to_pass,
        statement=statement,
        wrong_source=_wrong_fix(box, outcome, ctx),
        difficulty=level,
        difficulty_signals=signals,
        reproduced=reproduced,
        test_cmd=ctx.test_cmd,
    )


def _statement(box: SuiteSandbox, outcome: Outcome, ctx: Context) -> tuple[str, bool]:
    """An issue from the first failing test that replays as a standalone reproduction."""
    probes = []
    for test in sorted(outcome.fail_to_pass, key=lambda t: ("[" in t, len(t))):
        func = ctx.scope.function(test)
        probe = func and issue_text.probe_for(func, ctx.scope.text(test.partition("::")[0]))
        if probe:
            probes.append(probe)
    for probe in probes[:PROBES_PER_TASK]:
        seen = issue_text.read_probe(box.run_python(probe.script(), timeout=min(30.0, ctx.timeout)))
        if seen is not None:
            return issue_text.issue_from_probe(probe, seen, ctx.repo_name, len(outcome.fail_to_pass)), True
    return issue_text.fallback_issue(ctx.repo_name, outcome.messages, len(outcome.fail_to_pass)), False


def _wrong_fixes(outcome: Outcome, ctx: Context) -> list[str]:
    """Plausible wrong fixes, most plausible first: the right spot changed to another wrong value, then
    a change near the bug that leaves it in place (fixing a symptom, not the cause)."""
    m = outcome.mutation
    same_site = [o.source for o in ctx.mutations if o.site == m.site and o.key != m.key]
    delta = len(m.edit.replacement) - (m.edit.end - m.edit.start)
    elsewhere = []
    for o in sorted(ctx.mutations, key=lambda o: abs(o.line - m.line)):
        if o.path != m.path or o.function != m.function or o.site == m.site:
            continue
        if o.edit.end <= m.edit.start:
            elsewhere.append(o.edit.apply(m.source))
        elif o.edit.start >= m.edit.end:
            shifted = Edit(o.edit.start + delta, o.edit.end + delta, o.edit.replacement)
            elsewhere.append(shifted.apply(m.source))
    return [*same_site[:2], *elsewhere][:WRONG_CANDIDATES]


def _wrong_fix(box: SuiteSandbox, outcome: Outcome, ctx: Context) -> str | None:
    """The first candidate the tests prove wrong (some FAIL_TO_PASS or PASS_TO_PASS test still fails)."""
    m = outcome.mutation
    named = set(outcome.fail_to_pass) | set(outcome.pass_to_pass)
    files = sorted({t.partition("::")[0] for t in named})
    for source in _wrong_fixes(outcome, ctx):
        box.write(m.path, source.encode("utf-8"))
        result = box.run(ctx.timeout, files=files)
        if result.exit_code in (0, 1) and named - result.passed:
            return source
    return None
