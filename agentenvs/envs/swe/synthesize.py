"""The bug synthesizer: many SWE tasks from any Python repository with a passing test suite.

1. The repository's tracked files are copied and its suite run once under
   pytest with a JUnit report, inside a sandbox (:mod:`.suites`; the
   repository's code never runs on this host): every test must pass.
2. Every function outside the tests is mutated (:mod:`.mutations`); each
   mutant runs the whole suite in a worker's sandbox. A mutant is kept if it breaks at least one
   test and leaves at least one passing, without breaking collection:
   the broken tests are ``FAIL_TO_PASS``, the rest ``PASS_TO_PASS``.
3. Each kept mutant becomes a task directory in the corpus format: the
   mutated tree as a single root commit in ``environment/repo.bundle`` (so
   history shows nothing of the bug), the fix as ``solution/patch.diff``,
   another mutant of the same expression (one that also fails tests) as
   ``solution/wrong.diff``, and an issue text written from the failures.

The tests stay visible in the repository, as in SWE-smith; they are run as
written at grading time, whatever the agent did to them.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from agentenvs.envs.swe.mutations import Mutation, function_mutations
from agentenvs.envs.swe.protected import is_test_path
from agentenvs.envs.swe.suites import SuiteRun, SuiteSandbox

SYNTH_DATE = "2024-01-01T00:00:00+00:00"
DEFAULT_PYTHON = "/usr/bin/python3"
IGNORED_DIRS = frozenset({".git", "__pycache__", ".pytest_cache", ".benchmarks", ".mypy_cache", ".tox", ".venv"})


class SynthesisError(RuntimeError):
    """The repository cannot be used: no tests, a failing suite, or no mutable code."""


@dataclass
class Outcome:
    mutation: Mutation
    run: SuiteRun
    fail_to_pass: list[str] = field(default_factory=list)
    pass_to_pass: list[str] = field(default_factory=list)
    reason: str = ""

    @property
    def kept(self) -> bool:
        return not self.reason


@dataclass
class SynthesisResult:
    tasks: list[Path]
    tried: int
    rejected: dict[str, int]
    baseline_tests: int


GIT_SAFE = (
    "-c",
    "init.defaultBranch=main",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=",
    "-c",
    "core.pager=cat",
    "--no-pager",
)


def _git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    base = {
        **os.environ,
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(cwd),
        "GIT_AUTHOR_NAME": "agentenvs",
        "GIT_AUTHOR_EMAIL": "synth@agentenvs.local",
        "GIT_COMMITTER_NAME": "agentenvs",
        "GIT_COMMITTER_EMAIL": "synth@agentenvs.local",
        "GIT_AUTHOR_DATE": SYNTH_DATE,
        "GIT_COMMITTER_DATE": SYNTH_DATE,
    }
    result = subprocess.run(
        # The repository is someone else's: none of its settings may run a program here.
        ["git", *GIT_SAFE, *args],
        cwd=cwd,
        env={**base, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )
    if result.returncode != 0:
        raise SynthesisError(f"git {' '.join(args)} failed in {cwd}: {result.stderr.strip()[-500:]}")
    return result.stdout


def snapshot(repo: Path, dest: Path) -> list[str]:
    """Copy the repository's files (tracked and untracked, not ignored) to ``dest``; return them."""
    if (repo / ".git").exists():
        files = _git(repo, "ls-files", "-co", "--exclude-standard", "-z").split("\0")
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
    _git(dest, "init", "-q")
    _git(dest, "add", "-A")
    tracked = sorted(f for f in _git(dest, "ls-files", "-z").split("\0") if f)
    _git(dest, "clean", "-qfdx")  # what .gitignore excludes is not part of the repository
    shutil.rmtree(dest / ".git")
    return tracked


def _order(mutations: list[Mutation], seed: int) -> list[Mutation]:
    """Spread the tries over functions (round robin), keeping each expression's variants together."""
    rng = random.Random(seed)
    by_function: dict[tuple[str, str], list[list[Mutation]]] = {}
    for m in mutations:
        sites = by_function.setdefault((m.path, m.function), [])
        if sites and sites[-1][0].site == m.site:
            sites[-1].append(m)
        else:
            sites.append([m])
    groups = list(by_function.values())
    rng.shuffle(groups)
    for sites in groups:
        rng.shuffle(sites)
    ordered: list[Mutation] = []
    depth = 0
    while any(depth < len(g) for g in groups):
        for sites in groups:
            if depth < len(sites):
                ordered.extend(sites[depth])
        depth += 1
    return ordered


def _judge(mutation: Mutation, run: SuiteRun, baseline: set[str], max_broken: float) -> Outcome:
    outcome = Outcome(mutation, run)
    if run.exit_code != 1:
        outcome.reason = "suite did not run" if run.exit_code != 0 else "no test failed"
        return outcome
    passed = run.passed
    outcome.fail_to_pass = sorted(baseline - passed)
    outcome.pass_to_pass = sorted(baseline & passed)
    if not outcome.fail_to_pass:
        outcome.reason = "no test failed"
    elif not outcome.pass_to_pass:
        outcome.reason = "every test failed"
    elif len(outcome.fail_to_pass) > max_broken * len(baseline):
        outcome.reason = "too many tests failed"
    return outcome


@dataclass(frozen=True)
class _Plan:
    """What every mutant is judged against, and when to stop."""

    baseline: set[str]
    max_tasks: int | None
    max_broken: float
    timeout: float
    on_outcome: Callable[[Outcome], None] | None


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
    on_outcome: Callable[[Outcome], None] | None = None,
    backend: str = "local",
) -> SynthesisResult:
    """Mutate ``repo``'s functions and write a validated task directory per kept bug under ``out``.

    Every suite runs in one of ``jobs`` sandboxes of ``backend`` (``python``
    is the interpreter inside them), never on this host.
    """
    repo, out = Path(repo).resolve(), Path(out).resolve()
    if not repo.is_dir():
        raise SynthesisError(f"{repo} is not a directory")
    repo_name = name or (repo.name if repo.name != "repo" else repo.parent.name)
    with tempfile.TemporaryDirectory(prefix="agentenvs-synth-") as tmp:
        pristine = Path(tmp) / "pristine"
        files = snapshot(repo, pristine)
        boxes: list[SuiteSandbox] = []
        try:
            for _ in range(max(1, jobs)):
                boxes.append(SuiteSandbox(pristine, backend=backend, python=python))
            started = time.monotonic()
            baseline_run = boxes[0].run()
            # A mutant that loops forever is rejected quickly: it gets ten times the clean run.
            plan = _Plan(
                baseline_run.passed, max_tasks, max_broken, max(10.0, 10 * (time.monotonic() - started)), on_outcome
            )
            _check_baseline(repo, baseline_run)
            mutations = _mutations(pristine, files)
            if not mutations:
                raise SynthesisError(f"{repo}: no function outside the tests could be mutated")
            outcomes = _run_mutants(boxes, _order(mutations, seed), plan, pristine)
        finally:
            for box in boxes:
                box.close()
        out.mkdir(parents=True, exist_ok=True)
        failing_by_site: dict[str, list[Outcome]] = {}
        for o in outcomes:
            if o.run.exit_code == 1 and o.fail_to_pass:
                failing_by_site.setdefault(o.mutation.site, []).append(o)
        tasks = []
        for o in outcomes:
            if not o.kept or (max_tasks is not None and len(tasks) >= max_tasks):
                continue
            wrong = next((w for w in failing_by_site.get(o.mutation.site, []) if w is not o), None)
            tasks.append(_write_task(pristine, files, o, wrong, out, repo_name, test_cmd))
        rejected: dict[str, int] = {}
        for o in outcomes:
            if not o.kept:
                rejected[o.reason] = rejected.get(o.reason, 0) + 1
        _write_manifest(out, tasks)
        return SynthesisResult(tasks=tasks, tried=len(outcomes), rejected=rejected, baseline_tests=len(plan.baseline))


def _check_baseline(repo: Path, run: SuiteRun) -> None:
    if run.exit_code != 0 or not run.cases:
        raise SynthesisError(
            f"{repo}: the test suite must pass before mutating it (pytest exit {run.exit_code}): {run.output[-800:]}"
        )
    if not all(c.nodeid for c in run.cases):
        raise SynthesisError(f"{repo}: pytest's report does not name test files; is this a pytest suite?")


def _mutations(pristine: Path, files: list[str]) -> list[Mutation]:
    sources = [
        f for f in files if f.endswith(".py") and not is_test_path(f) and Path(f).name not in ("setup.py", "noxfile.py")
    ]
    return [m for f in sources for m in function_mutations(f, (pristine / f).read_text(encoding="utf-8"))]


def _run_mutants(boxes: list[SuiteSandbox], ordered: list[Mutation], plan: _Plan, pristine: Path) -> list[Outcome]:
    """Each mutant's suite in a free sandbox: the mutant written over its file, then the original put back."""
    lock = threading.Lock()
    kept = 0
    results: dict[int, Outcome] = {}
    free = list(boxes)
    originals = {m.path: (pristine / m.path).read_bytes() for m in ordered}

    def one(index: int) -> None:
        nonlocal kept
        with lock:
            if plan.max_tasks is not None and kept >= plan.max_tasks:
                return
            box = free.pop()
        mutation = ordered[index]
        try:
            box.write(mutation.path, mutation.source.encode("utf-8"))
            outcome = _judge(mutation, box.run(plan.timeout), plan.baseline, plan.max_broken)
        finally:
            box.write(mutation.path, originals[mutation.path])
            with lock:
                free.append(box)
        with lock:
            results[index] = outcome
            kept += outcome.kept
        if plan.on_outcome is not None:
            plan.on_outcome(outcome)

    seen: set[str] = set()
    unique = []
    for i, m in enumerate(ordered):
        if m.source not in seen:
            seen.add(m.source)
            unique.append(i)
    with ThreadPoolExecutor(max_workers=len(boxes)) as pool:
        list(pool.map(one, unique))
    return [results[i] for i in sorted(results)]


def _instance_id(repo_name: str, mutation: Mutation) -> str:
    digest = hashlib.sha256(f"{mutation.path}\0{mutation.source}".encode()).hexdigest()[:10]
    return f"synth__{repo_name}-{digest}"


def _problem_statement(outcome: Outcome) -> str:
    messages = {c.nodeid: c.message for c in outcome.run.cases if c.nodeid in set(outcome.fail_to_pass)}
    n = len(outcome.fail_to_pass)
    first = outcome.fail_to_pass[0]
    lines = [
        f"{first.split('::')[-1]} {'and ' + str(n - 1) + ' other test' + ('s' if n > 2 else '') + ' ' if n > 1 else ''}"
        f"fail{'s' if n == 1 else ''}",
        "",
        f"After a recent change, {n} test{'s' if n > 1 else ''} in the suite fail{'s' if n == 1 else ''}. "
        "The tests are right; the library is wrong. Please find and fix the bug.",
        "",
        "Failing tests:",
        "",
    ]
    for test in outcome.fail_to_pass[:10]:
        message = " ".join(messages.get(test, "").split())[:300] or "(no message)"
        lines.append(f"- `{test}`: {message}")
    if n > 10:
        lines.append(f"- ... and {n - 10} more")
    lines += ["", "Run the suite with `python3 -m pytest` to reproduce."]
    return "\n".join(lines) + "\n"


def _toml_value(value: object) -> str:
    if isinstance(value, list):
        if not value:
            return "[]"
        return "[\n" + "".join(f"    {json.dumps(v)},\n" for v in value) + "]"
    return json.dumps(value)


def _write_task(
    pristine: Path, files: list[str], outcome: Outcome, wrong: Outcome | None, out: Path, repo_name: str, test_cmd: str
) -> Path:
    m = outcome.mutation
    instance_id = _instance_id(repo_name, m)
    task_dir = out / instance_id
    if task_dir.exists():
        shutil.rmtree(task_dir)
    for sub in ("environment", "solution", "tests"):
        (task_dir / sub).mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="agentenvs-synth-task-") as tmp:
        work = Path(tmp)
        for rel in files:
            (work / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(pristine / rel, work / rel)
        target = work / m.path
        original = target.read_text(encoding="utf-8")
        target.write_text(m.source, encoding="utf-8")
        _git(work, "init", "-q")
        _git(work, "add", "-A")
        _git(work, "commit", "-q", "-m", f"{repo_name} snapshot")
        base = _git(work, "rev-parse", "HEAD").strip()
        _git(work, "bundle", "create", "-q", str(task_dir / "environment" / "repo.bundle"), "main")
        target.write_text(original, encoding="utf-8")
        (task_dir / "solution" / "patch.diff").write_text(_git(work, "diff"), encoding="utf-8")
        if wrong is not None:
            target.write_text(wrong.mutation.source, encoding="utf-8")
            (task_dir / "solution" / "wrong.diff").write_text(_git(work, "diff"), encoding="utf-8")
    (task_dir / "instruction.md").write_text(_problem_statement(outcome), encoding="utf-8")
    swe = {
        "instance_id": instance_id,
        "repo": f"synth/{repo_name}",
        "base_commit": base,
        "version": "synth",
        "created_at": SYNTH_DATE,
        "test_cmd": test_cmd,
        "FAIL_TO_PASS": outcome.fail_to_pass,
        "PASS_TO_PASS": outcome.pass_to_pass,
        "mutation_kind": m.kind,
        "mutation_path": m.path,
        "mutation_function": m.function,
        "mutation_line": m.line,
    }
    tags = ["synthesized", repo_name, m.kind.split()[0].replace("-", "")]
    lines = [
        f"id = {json.dumps(instance_id)}",
        'family = "swe"',
        'version = "1.0"',
        'difficulty = "easy"',
        f"tags = {json.dumps(tags)}",
        "",
        "[metadata]",
        'category = "software-engineering"',
        "",
        "[environment]",
        'workdir = "/testbed"',
        "",
        "[limits]",
        "max_steps = 40",
        "",
        "[swe]",
    ]
    lines += [f"{key} = {_toml_value(value)}" for key, value in swe.items()]
    (task_dir / "task.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return task_dir


def _write_manifest(out: Path, tasks: list[Path]) -> None:
    """``instances.jsonl`` in SWE-bench's format, next to the task directories."""
    from agentenvs.core.task import load_task
    from agentenvs.envs.swe.instance import instance_of

    with open(out / "instances.jsonl", "w", encoding="utf-8") as fh:
        for path in tasks:
            fh.write(json.dumps(instance_of(load_task(path, family="swe")).to_swebench()) + "\n")
