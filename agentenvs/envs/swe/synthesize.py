"""The bug synthesizer: many SWE tasks from any Python repository with a pytest suite.

1. The repository's files are copied and its suite run once under pytest
   with a JUnit report, inside a sandbox (:mod:`.suites`; the repository's
   code never runs on this host). Tests that fail or error on the clean
   tree (a missing package, a network test), and those deselected, are
   left out of everything that follows.
2. Every function outside the tests is mutated (:mod:`.mutations`), the
   operators interleaved so no kind dominates; each mutant runs the suite in
   one of ``jobs`` sandboxes. A mutant is kept if it breaks at least one test
   and not too many, without breaking collection: the broken tests are
   ``FAIL_TO_PASS``; ``PASS_TO_PASS`` is the passing tests of the files that
   matter (:mod:`.test_scope`).
3. While the mutant is still in its sandbox, a failing test is replayed as
   a user's reproduction (:mod:`.issue_text`) and a plausible wrong fix is
   proven wrong by the tests. The task is then written at once
   (:mod:`.synth_output`), so an interrupted run keeps it and ``resume``
   skips every mutant already tried.

The tests stay visible in the repository, as in SWE-smith; they are run as
written at grading time, whatever the agent did to them.
"""

from __future__ import annotations

import hashlib
import random
import shutil
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agentenvs.envs.swe.mutations import Mutation, function_mutations
from agentenvs.envs.swe.protected import is_test_path
from agentenvs.envs.swe.suites import SuiteRun, SuiteSandbox
from agentenvs.envs.swe.synth_kept import Context, Outcome, task_spec
from agentenvs.envs.swe.synth_output import SynthesisError, SynthesisOutput, git
from agentenvs.envs.swe.synth_task import TaskSpec, build_task
from agentenvs.envs.swe.test_scope import RelevantTests

__all__ = ["Progress", "SynthesisError", "SynthesisResult", "snapshot", "synthesize"]

DEFAULT_PYTHON = "/usr/bin/python3"
IGNORED_DIRS = frozenset({".git", "__pycache__", ".pytest_cache", ".benchmarks", ".mypy_cache", ".tox", ".venv"})


@dataclass(frozen=True)
class Progress:
    """What the synthesizer is doing, for a progress display."""

    phase: str  # "baseline", "mutants" or "stopping"
    tried: int = 0  # mutants tried, earlier runs of a resumed synthesis included
    total: int = 0
    tasks: int = 0


@dataclass
class SynthesisResult:
    tasks: list[Path]
    tried: int  # by this run
    rejected: dict[str, int]
    baseline_tests: int
    excluded_tests: list[str]  # failing or erroring on the clean tree
    total_mutants: int
    interrupted: bool = False
    elapsed: float = 0.0


def snapshot(repo: Path, dest: Path) -> list[str]:
    """Copy the repository's files (tracked and untracked, not ignored) to ``dest``; return them."""
    if (repo / ".git").exists():
        files = git(repo, "ls-files", "-co", "--exclude-standard", "-z").split("\0")
    else:
        files = [
            str(p.relative_to(repo))
            for p in repo.rglob("*")
            if p.is_file() and not IGNORED_DIRS.intersection(p.relative_to(repo).parts)
        ]
    for rel in sorted(f for f in files if f):
        src = repo / rel
        if not src.is_file() or IGNORED_DIRS.intersection(Path(rel).parts):
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    tracked = sorted(f for f in git(dest, "ls-files", "-z").split("\0") if f)
    git(dest, "clean", "-qfdx")  # what .gitignore excludes is not part of the repository
    shutil.rmtree(dest / ".git")
    return tracked


def _order(mutations: list[Mutation], seed: int) -> list[Mutation]:
    """Interleave the operators (one of each in turn), each spread over functions round robin."""
    rng = random.Random(seed)
    by_category: dict[str, dict[tuple[str, str], list[Mutation]]] = {}
    for m in mutations:
        by_category.setdefault(m.category, {}).setdefault((m.path, m.function), []).append(m)
    streams: list[deque[Mutation]] = []
    for functions in by_category.values():
        groups = list(functions.values())
        rng.shuffle(groups)
        for group in groups:
            rng.shuffle(group)
        spread: list[Mutation] = []
        for depth in range(max(len(g) for g in groups)):
            spread.extend(g[depth] for g in groups if depth < len(g))
        streams.append(deque(spread))
    rng.shuffle(streams)
    ordered: list[Mutation] = []
    while streams:
        for stream in list(streams):
            ordered.append(stream.popleft())
            if not stream:
                streams.remove(stream)
    return ordered


def _judge(mutation: Mutation, run: SuiteRun, baseline: set[str], max_broken: float) -> Outcome:
    outcome = Outcome(mutation)
    if run.exit_code not in (0, 1):
        outcome.reason = (
            "suite timed out" if run.exit_code == -1 else f"suite did not run (pytest exit {run.exit_code})"
        )
        return outcome
    outcome.fail_to_pass = sorted(baseline - run.passed)
    failing = set(outcome.fail_to_pass)
    outcome.messages = [c.message for c in run.cases if c.nodeid in failing and c.message]
    if not outcome.fail_to_pass:
        outcome.reason = "no test failed"
    elif len(outcome.fail_to_pass) == len(baseline):
        outcome.reason = "every test failed"
    elif len(outcome.fail_to_pass) > max_broken * len(baseline):
        outcome.reason = "too many tests failed"
    return outcome


@dataclass
class _Run:
    """One synthesis in progress: what every mutant is judged against, and the shared counters."""

    pristine: Path
    files: list[str]
    baseline: set[str]
    context: Context
    output: SynthesisOutput
    max_tasks: int | None
    max_broken: float
    on_progress: Callable[[Progress], None] | None
    total: int
    lock: threading.Lock = field(default_factory=threading.Lock)
    stop: threading.Event = field(default_factory=threading.Event)
    tried: int = 0
    rejected: dict[str, int] = field(default_factory=dict)

    def full(self) -> bool:
        return self.max_tasks is not None and len(self.output.tasks) >= self.max_tasks

    def progress(self, phase: str = "mutants") -> None:
        if self.on_progress is not None:
            self.on_progress(Progress(phase, len(self.output.tried), self.total, len(self.output.tasks)))


def synthesize(
    repo: str | Path,
    out: str | Path,
    *,
    max_tasks: int | None = None,
    seed: int = 0,
    jobs: int = 2,
    python: str = DEFAULT_PYTHON,
    name: str | None = None,
    max_broken: float = 0.5,
    test_cmd: str = "python3 -m pytest",
    backend: str = "local",
    deselect: tuple[str, ...] = (),
    keyword: str | None = None,
    resume: bool = False,
    on_progress: Callable[[Progress], None] | None = None,
) -> SynthesisResult:
    """Mutate ``repo``'s functions and write a validated task directory per kept bug under ``out``.

    Every suite runs in one of ``jobs`` sandboxes of ``backend`` (``python``
    is the interpreter inside them), never on this host. ``deselect`` (pytest
    node ids) and ``keyword`` (a ``-k`` expression) leave tests out. Ctrl-C
    stops after the mutants being tried; the tasks written so far stay, and
    ``resume=True`` continues.
    """
    started = time.monotonic()
    repo, out = Path(repo).resolve(), Path(out).resolve()
    if not repo.is_dir():
        raise SynthesisError(f"{repo} is not a directory")
    repo_name = name or (repo.name if repo.name != "repo" else repo.parent.name)
    pytest_args = tuple(a for d in deselect for a in ("--deselect", d)) + (("-k", keyword) if keyword else ())
    with tempfile.TemporaryDirectory(prefix="agentenvs-synth-") as tmp:
        pristine = Path(tmp) / "pristine"
        files = snapshot(repo, pristine)
        fingerprint = _fingerprint(pristine, files, [*pytest_args, python, repo_name, test_cmd])
        output = SynthesisOutput(out, fingerprint, resume=resume)
        if on_progress is not None:
            on_progress(Progress("baseline", tasks=len(output.tasks)))
        boxes: list[SuiteSandbox] = []
        try:
            for _ in range(max(1, jobs)):
                boxes.append(SuiteSandbox(pristine, backend=backend, python=python, pytest_args=pytest_args))
            clean_started = time.monotonic()
            baseline_run = boxes[0].run()
            # A mutant that loops forever is rejected: it gets six times the clean run, at least 30 s (a
            # failing suite runs slower than a passing one, and a loaded machine slower still).
            timeout = max(30.0, 6 * (time.monotonic() - clean_started))
            excluded = _check_baseline(repo, baseline_run)
            mutations = _mutations(pristine, files)
            if not mutations:
                raise SynthesisError(f"{repo}: no function outside the tests could be mutated")
            unique = list({m.key: m for m in _order(mutations, seed)}.values())
            scope = RelevantTests(pristine, [f for f in files if f.endswith(".py") and is_test_path(f)])
            context = Context(scope, mutations, timeout, repo_name, test_cmd)
            run = _Run(
                pristine, files, baseline_run.passed, context, output, max_tasks, max_broken, on_progress, len(unique)
            )
            interrupted = _run_mutants(boxes, [m for m in unique if m.key not in output.tried], run)
        finally:
            for box in boxes:
                box.close()
    return SynthesisResult(
        tasks=list(output.tasks),
        tried=run.tried,
        rejected=dict(run.rejected),
        baseline_tests=len(run.baseline),
        excluded_tests=excluded,
        total_mutants=run.total,
        interrupted=interrupted,
        elapsed=time.monotonic() - started,
    )


def _fingerprint(pristine: Path, files: list[str], options: list[str]) -> str:
    digest = hashlib.sha256("\0".join(options).encode())
    for rel in files:
        digest.update(rel.encode() + b"\0" + hashlib.sha256((pristine / rel).read_bytes()).digest())
    return digest.hexdigest()


def _check_baseline(repo: Path, run: SuiteRun) -> list[str]:
    """The tests that fail on the clean tree (left out); refuses a suite that does not run at all."""
    if run.exit_code not in (0, 1) or not run.passed:
        raise SynthesisError(
            f"{repo}: no test passes before mutating it (pytest exit {run.exit_code}): {run.output[-800:]}"
        )
    if not all(c.nodeid for c in run.cases if c.outcome == "passed"):
        raise SynthesisError(f"{repo}: pytest's report does not name test files; is this a pytest suite?")
    return sorted({c.nodeid or c.key for c in run.cases} - run.passed)


def _mutations(pristine: Path, files: list[str]) -> list[Mutation]:
    sources = [
        f
        for f in files
        if f.endswith(".py")
        and not is_test_path(f)
        and Path(f).name not in ("setup.py", "noxfile.py", "conftest.py")
        and Path(f).parts[0] not in ("docs", "doc", "examples", "benchmarks")
    ]
    return [m for f in sources for m in function_mutations(f, (pristine / f).read_text(encoding="utf-8"))]


def _run_mutants(boxes: list[SuiteSandbox], todo: list[Mutation], run: _Run) -> bool:
    """Try mutants in the sandboxes until done, full or interrupted (returns whether interrupted)."""
    queue = deque(todo)
    errors: list[BaseException] = []

    def worker(box: SuiteSandbox) -> None:
        while not run.stop.is_set():
            with run.lock:
                if run.full() or not queue:
                    return
                mutation = queue.popleft()
            try:
                _try(box, mutation, run)
            except BaseException as exc:  # an infra failure stops the others; the main thread raises it
                errors.append(exc)
                run.stop.set()
                return

    run.progress()
    threads = [threading.Thread(target=worker, args=(box,), daemon=True) for box in boxes]
    for thread in threads:
        thread.start()
    interrupted = False
    try:
        for thread in threads:
            while thread.is_alive():
                thread.join(0.2)  # short waits, so Ctrl-C reaches this thread at once
    except KeyboardInterrupt:
        # Let the mutants being tried finish and be written; a second Ctrl-C abandons them.
        interrupted = True
        run.stop.set()
        run.progress("stopping")
        for thread in threads:
            thread.join()
    if errors:
        raise errors[0]
    return interrupted


def _try(box: SuiteSandbox, mutation: Mutation, run: _Run) -> None:
    """Run the suite on one mutant; if kept, write its task before putting the original back."""
    original = (run.pristine / mutation.path).read_bytes()
    box.write(mutation.path, mutation.source.encode("utf-8"))
    spec: TaskSpec | None = None
    try:
        suite = box.run(run.context.timeout)
        outcome = _judge(mutation, suite, run.baseline, run.max_broken)
        if outcome.kept:
            still = run.baseline & suite.passed
            outcome.pass_to_pass = run.context.scope.pass_to_pass(mutation.path, outcome.fail_to_pass, still)
            if not outcome.pass_to_pass:
                outcome.reason = "no passing test in scope"
        if outcome.kept:
            spec = task_spec(box, outcome, run.context)
            if spec.wrong_source is None:  # validation needs a wrong fix the tests prove wrong
                outcome.reason, spec = "no wrong fix the tests reject", None
    finally:
        box.write(mutation.path, original)
    if spec is None:
        with run.lock:
            run.rejected[outcome.reason] = run.rejected.get(outcome.reason, 0) + 1
            _tried(mutation, run)
        return
    staging = run.output.staging()
    try:
        instance = build_task(run.pristine, run.files, spec, staging / "task")
        with run.lock:
            if run.full():
                return  # found after --max was reached: left untried, for a later and larger run
            run.output.add(staging / "task", spec.instance_id, instance)
            _tried(mutation, run)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _tried(mutation: Mutation, run: _Run) -> None:
    run.tried += 1
    run.output.record_tried(mutation.key)
    run.progress()
