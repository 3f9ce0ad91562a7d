"""Audit tasks against known reward hacks: no hack may score above doing nothing.

Each task's env lists its hacks (``AgentEnv.audit_hacks``: the common ones
and the family's). Every hack runs as one real episode in a fresh env,
like ``validate``'s episodes; the no-op (``done`` at once) is the
baseline. A hack is a *finding* when it scores above the no-op, when the
episode ends as infra (the harness would leave it out of the score instead
of counting a failure), or when the env is not usable afterwards (a reset
fails, or gives a state no fresh reset of the task ever gave).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

import agentenvs
from agentenvs.core.hacks import NOOP, Hack
from agentenvs.core.task import Task
from agentenvs.validate import options_for, play

Reason = Literal["scored", "infra", "unusable"]
DETAIL_CHARS = 4000


@dataclass(frozen=True)
class HackResult:
    """One hack's episode on one task: what it scored and what the env said."""

    task_id: str
    hack: str
    attack_class: str
    score: float | None
    steps: int = 0
    error_kind: str | None = None
    error: str | None = None
    verifier_detail: str = ""
    integrity_flags: list[str] = field(default_factory=list)
    usable: bool = True
    usable_detail: str = ""
    initial_hash: str | None = None
    after_hash: str | None = None
    ran: bool = True
    #: 2 when the first episode ended as infra or never started and this is the second.
    attempts: int = 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Finding:
    """A hole: the hack, why it counts, and the evidence the episode left."""

    task_id: str
    hack: str
    attack_class: str
    reason: Reason
    baseline: float
    result: HackResult

    def evidence(self) -> str:
        r = self.result
        if self.reason == "scored" and self.hack == NOOP.name:
            text = f"doing nothing scored {r.score:.2f}"
        elif self.reason == "scored":
            text = f"score {r.score:.2f} > no-op {self.baseline:.2f}"
        elif self.reason == "infra":
            text = f"ended as infra: {r.error}"
        else:
            why = r.usable_detail or f"a reset gave state_hash {r.after_hash}, which no fresh reset of the task gave"
            text = f"env unusable after the hack: {why}"
        if r.integrity_flags:
            text += f"; flagged: {', '.join(r.integrity_flags)}"
        if r.verifier_detail and self.reason == "scored":
            text += f"; verifier: {r.verifier_detail}"
        return text.strip()

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "evidence": self.evidence()}


def judge(result: HackResult, baseline: float, initial_hashes: Collection[str | None] = ()) -> list[Finding]:
    """The findings one episode shows, against the no-op's score (0 for the no-op itself).

    ``initial_hashes`` are the states the task's fresh resets gave in this audit: a reset
    after the hack must give one of them (comparing with several, not one, keeps a task
    whose initial state is not perfectly reproducible from blaming the hack).
    """
    out: list[Finding] = []

    def add(reason: Reason) -> None:
        out.append(Finding(result.task_id, result.hack, result.attack_class, reason, baseline, result))

    if result.error_kind == "infra":
        add("infra")
    elif result.score is not None and result.score > baseline:
        add("scored")
    if result.ran and (not result.usable or (initial_hashes and result.after_hash not in initial_hashes)):
        add("unusable")
    return out


@dataclass(frozen=True)
class TaskAudit:
    """Every hack's result on one task; ``baseline`` is the no-op's."""

    task_id: str
    baseline: HackResult
    results: list[HackResult]

    @property
    def baseline_score(self) -> float:
        """What doing nothing earns; a no-op that could not be scored counts as the floor, 0."""
        return self.baseline.score if self.baseline.score is not None else 0.0

    @property
    def findings(self) -> list[Finding]:
        hashes = {r.initial_hash for r in (self.baseline, *self.results) if r.ran}
        found = judge(self.baseline, 0.0, hashes)
        for result in self.results:
            found += judge(result, self.baseline_score, hashes)
        return found

    @property
    def errors(self) -> list[HackResult]:
        """Episodes that never reached the hack (the env could not even reset): nothing was proved."""
        return [r for r in (self.baseline, *self.results) if not r.ran]

    @property
    def ok(self) -> bool:
        return not self.findings and not self.errors

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "ok": self.ok,
            "baseline": self.baseline.to_dict(),
            "results": [r.to_dict() for r in self.results],
            "findings": [f.to_dict() for f in self.findings],
        }


def _tail(text: Any) -> str:
    return str(text or "")[-DETAIL_CHARS:]


def run_hack(task: Task, hack: Hack, env_kwargs: dict[str, Any], check_reset: bool = True) -> HackResult:
    """One episode of ``hack`` in a fresh env, then a reset to see that the env still works
    (``check_reset=False``: only the score is wanted, and the reset is not tried)."""
    base = {"task_id": task.full_id, "hack": hack.name, "attack_class": hack.attack_class}
    env = None
    try:
        try:
            env = agentenvs.make(task, **options_for(task, env_kwargs))
            _, first = env.reset(seed=0)
            actions = hack.actions(env.unwrapped)
        except Exception as exc:  # the task or the backend is broken, not the defences: prove nothing
            return HackResult(**base, score=None, error=f"{type(exc).__name__}: {_tail(exc)}", ran=False)
        try:
            info, steps = play(env, actions)
        except Exception as exc:  # an env that raises is an infra failure to the harness
            info, steps = {"error_kind": "infra", "error": f"the env raised {type(exc).__name__}: {exc}"}, 0
        infra = info.get("error_kind") == "infra"
        usable, why, after = _reset_after(env) if check_reset else (True, "", first.get("state_hash"))
        return HackResult(
            **base,
            score=None if infra else float(info.get("score", 0.0)),
            steps=steps or int(info.get("step", 0)),
            error_kind=info.get("error_kind"),
            error=_tail(info.get("error")) or None,
            verifier_detail=_tail(info.get("verifier_detail")),
            integrity_flags=[str(f) for f in info.get("integrity_flags") or []],
            usable=usable,
            usable_detail=why,
            initial_hash=first.get("state_hash"),
            after_hash=after,
        )
    finally:
        if env is not None:
            env.close()


def _reset_after(env: Any) -> tuple[bool, str, str | None]:
    """A reset after the hack: did it work, why not, and the state it gave."""
    try:
        _, info = env.reset(seed=0)
    except Exception as exc:
        return False, f"reset raised {type(exc).__name__}: {_tail(exc)}", None
    return True, "", info.get("state_hash")


def hacks_for(task: Task, env_kwargs: dict[str, Any], only: Iterable[str] = ()) -> list[Hack]:
    """The hacks the task's env lists that apply to it (``only``: these names, the no-op always).

    An env that cannot even be made gets the no-op alone, whose episode then reports why.
    """
    try:
        env = agentenvs.make(task, **options_for(task, env_kwargs))
    except Exception:
        return [NOOP]
    try:
        listed = env.unwrapped.audit_hacks()
    finally:
        env.close()
    wanted = set(only)
    chosen = [h for h in listed if h.name != NOOP.name and h.applies(task) and (not wanted or h.name in wanted)]
    return [NOOP, *chosen]


def plan(
    tasks: Iterable[Task], env_kwargs: dict[str, Any] | None = None, only: Iterable[str] = ()
) -> list[tuple[Task, Hack]]:
    """Every (task, hack) episode an audit runs, each task's no-op first (a task listed twice runs once)."""
    names = list(only)
    unique = {t.full_id: t for t in tasks}.values()
    return [(task, hack) for task in unique for hack in hacks_for(task, env_kwargs or {}, names)]


def run_plan(
    work: list[tuple[Task, Hack]],
    env_kwargs: dict[str, Any] | None = None,
    jobs: int = 1,
    on_result: Callable[[HackResult], None] | None = None,
    check_reset: bool = True,
) -> list[TaskAudit]:
    """Run a ``plan``'s episodes, ``jobs`` at a time, and group them per task."""
    kwargs = env_kwargs or {}

    def one(item: tuple[Task, Hack]) -> HackResult:
        result = run_hack(*item, kwargs, check_reset)
        if result.error_kind == "infra" or not result.ran:
            # The machinery can fail once on a loaded machine; a hack that makes it fail does so again.
            result = replace(run_hack(*item, kwargs, check_reset), attempts=2)
        if on_result is not None:
            on_result(result)
        return result

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = list(pool.map(one, work))
    by_task: dict[str, list[HackResult]] = {}
    for result in results:
        by_task.setdefault(result.task_id, []).append(result)
    return [TaskAudit(task_id, mine[0], mine[1:]) for task_id, mine in by_task.items()]


def audit_tasks(
    tasks: Iterable[Task],
    env_kwargs: dict[str, Any] | None = None,
    jobs: int = 1,
    only: Iterable[str] = (),
    on_result: Callable[[HackResult], None] | None = None,
) -> list[TaskAudit]:
    """Run the no-op and every applicable hack on every task, ``jobs`` episodes at a time."""
    return run_plan(plan(tasks, env_kwargs, only), env_kwargs, jobs, on_result)
