"""The ``agentenvs`` command line."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer
from rich.table import Table
from rich.text import Text

import agentenvs
from agentenvs.cli_output import console, episode_progress, print_not_run
from agentenvs.core.errors import AgentEnvsError
from agentenvs.core.registry import resolve_tasks
from agentenvs.core.task import Task
from agentenvs.gui_cli import gui_app
from agentenvs.harness.cli import check_backend
from agentenvs.harness.cli import register as register_harness
from agentenvs.images_cli import images
from agentenvs.leaderboard_cli import leaderboard_app
from agentenvs.serve_cli import serve
from agentenvs.swe_cli import swe_app

if TYPE_CHECKING:
    from agentenvs.audit import TaskAudit
    from agentenvs.validate import EpisodeCheck, TaskValidation

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Agent environments behind one Gymnasium API.")
register_harness(app)
app.add_typer(swe_app, name="swe", help="SWE tasks: synthesize bugs, import SWE-bench instances, export predictions.")
app.command()(serve)
app.command()(images)
app.add_typer(gui_app, name="gui", help="Desktop tasks: import OSWorld's task JSON (--check for coverage).")
app.add_typer(
    leaderboard_app, name="leaderboard", help="Leaderboards: bundle a run, verify it by replay, render a board."
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"agentenvs {agentenvs.__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Agent environments behind one Gymnasium API."""


def _error(message: str) -> None:
    """An error line; ``message`` is printed as it is (``[limits.max_steps]`` is text, not markup)."""
    console.print(Text.assemble(("error: ", "red"), message), highlight=False, soft_wrap=True)


FamilyOpt = Annotated[Optional[str], typer.Option("--family", "-f", help="Only this family.")]


@app.command("list")
def list_command(
    family: FamilyOpt = None,
    split: Annotated[Optional[str], typer.Option(help="train, valid or test.")] = None,
    difficulty: Annotated[Optional[str], typer.Option(help="easy, medium or hard.")] = None,
    tag: Annotated[Optional[str], typer.Option(help="Only tasks with this tag.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON lines instead of a table.")] = False,
) -> None:
    """List registered tasks."""
    try:
        tasks = agentenvs.list_tasks(family=family, split=split, difficulty=difficulty, tag=tag)
    except AgentEnvsError as exc:
        _error(str(exc))
        raise typer.Exit(2) from None
    if as_json:
        for task in tasks:
            typer.echo(json.dumps(task.summary()))
        return
    table = Table(title=f"{len(tasks)} tasks")
    # An id is never cut: the other columns wrap first, and a terminal too narrow for it folds it.
    widest = max((len(t.full_id) for t in tasks), default=2)
    table.add_column("id", min_width=widest, overflow="fold")
    for column in ("split", "difficulty", "tags"):
        table.add_column(column)
    for task in tasks:
        table.add_row(Text(task.full_id), task.split, task.difficulty or "-", Text(", ".join(task.tags)))
    console.print(table)


def _score_cell(check: EpisodeCheck | None) -> Text:
    if check is None:
        return Text("-")
    text = "-" if check.score is None else f"{check.score:.2f}"
    return Text(text, style="green" if check.ok else "red")


PathsArg = Annotated[
    Optional[list[str]],
    typer.Argument(
        metavar="TASKS",
        help="Task directories, folders of them (searched at any depth), or registered task ids "
        "such as terminal/fix-permissions (default: every registered task).",
        show_default=False,
    ),
]
BackendOpt = Annotated[str, typer.Option(callback=check_backend, help="Sandbox backend: local or docker.")]
JobsOpt = Annotated[int, typer.Option("--jobs", "-j", min=1, help="Episodes run at once.")]


def _tasks_or_exit(paths: list[str] | None, family: str | None) -> tuple[list[Task], dict[str, str]]:
    """The tasks a command runs on, and apart the task directories that did not load (path -> why).

    A reference that names nothing, or no task at all, is a clear message and exit status 2.
    """
    try:
        if paths:
            tasks, broken = resolve_tasks(paths)
            tasks = [t for t in tasks if family is None or t.family == family]
        else:
            tasks, broken = agentenvs.list_tasks(family=family), {}
    except AgentEnvsError as exc:
        _error(str(exc))
        raise typer.Exit(2) from None
    if not tasks and not broken:
        console.print("no tasks matched", style="yellow")
        raise typer.Exit(2)
    return tasks, broken


def _run_audit(tasks: list[Task], backend: str, jobs: int, hacks: list[str]) -> list[TaskAudit]:
    from agentenvs.audit import plan, run_plan

    kwargs = {"backend": backend}
    work = plan(tasks, kwargs, hacks)
    unknown = sorted(set(hacks) - {hack.name for _, hack in work})
    if unknown:
        console.print(f"[red]error:[/] no selected task has the hack(s) {', '.join(unknown)}")
        raise typer.Exit(2)
    with episode_progress(f"auditing {len(tasks)} tasks on {backend}", len(work)) as progress:
        return run_plan(work, env_kwargs=kwargs, jobs=jobs, on_result=progress)


def _print_broken(broken: dict[str, str]) -> None:
    for where, why in broken.items():
        console.print(Text.assemble((f"{where}: did not load: ", "red"), why), soft_wrap=True)


#: What the validate and audit tables show of a detail; ``--verbose`` prints it whole after them.
DETAIL_CHARS = 200


def _cut(text: str) -> Text:
    """The start of a long detail for a table cell, and where to see the rest."""
    if len(text) <= DETAIL_CHARS:
        return Text(text)
    return Text(text[:DETAIL_CHARS] + f"... ({len(text) - DETAIL_CHARS} more characters: --verbose shows them)")


def _print_audit(audits: list[TaskAudit], backend: str, broken: dict[str, str], verbose: bool = False) -> bool:
    """The audit's tables (each finding's whole evidence after them, with ``verbose``); True when no
    hack beat the no-op, every episode ran and every task loaded."""
    summary = Table(title=f"audit ({backend}): known reward hacks against each task")
    for column in ("task", "no-op", "hacks", "findings", "ok"):
        summary.add_column(column)
    for audit in audits:
        names = sorted({f.hack for f in audit.findings})
        summary.add_row(
            Text(audit.task_id),
            "-" if audit.baseline.score is None else f"{audit.baseline.score:.2f}",
            str(len(audit.results) + 1),
            Text(", ".join(names), style="red") if names else Text("none", style="green"),
            Text("yes", style="green") if audit.ok else Text("NO", style="red"),
        )
    console.print(summary)
    findings = [f for a in audits for f in a.findings]
    if findings:
        table = Table(title=f"{len(findings)} findings")
        for column in ("task", "hack", "class", "why", "evidence"):
            table.add_column(column)
        for f in findings:
            table.add_row(Text(f.task_id), Text(f.hack), Text(f.attack_class), Text(f.reason), _cut(f.evidence()))
        console.print(table)
        if verbose:
            for f in findings:
                console.rule(Text(f"{f.task_id} {f.hack}"))
                console.print(f.evidence(), markup=False, highlight=False, soft_wrap=True)
    errors = print_not_run(audits)
    _print_broken(broken)
    if findings or errors or broken:
        console.print(
            f"{len(findings)} findings, {len(errors)} episodes not run, {len(broken)} tasks not loaded", style="red"
        )
        return False
    console.print(f"no hack scored above the no-op on {len(audits)} tasks", style="green")
    return True


@app.command()
def audit(
    paths: PathsArg = None,
    family: FamilyOpt = None,
    backend: BackendOpt = "local",
    jobs: JobsOpt = 2,
    hack: Annotated[Optional[list[str]], typer.Option("--hack", help="Only this hack (repeatable).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON instead of tables.")] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Print each finding's whole evidence (errors, verifier output).")
    ] = False,
) -> None:
    """Try every known reward hack on each task; fail if any scores above doing nothing."""
    tasks, broken = _tasks_or_exit(paths, family)
    audits = _run_audit(tasks, backend, jobs, hack or []) if tasks else []
    if as_json:
        findings = sum(len(a.findings) for a in audits)
        report = {
            "backend": backend,
            "findings": findings,
            "tasks": [a.to_dict() for a in audits],
            "not_loaded": broken,
        }
        typer.echo(json.dumps(report, indent=1))
        ok = all(a.ok for a in audits) and not broken
    else:
        ok = _print_audit(audits, backend, broken, verbose)
    if not ok:
        raise typer.Exit(1)


def _detail(result: TaskValidation) -> Text:
    """Why a task failed, cut for the table."""
    problems = [result.error] if result.error else [f"{v}: {e.detail}" for v, e in result.episodes.items() if not e.ok]
    return _cut("; ".join(problems))


_BUILD_LOG = re.compile(r"the whole log: (\S+?\.log)")


def _print_validation(results: list[TaskValidation], backend: str, verbose: bool) -> list[str]:
    """The validate table (every detail in full after it, with ``verbose``); returns the failed tasks."""
    table = Table(title=f"validate ({backend})")
    for column in ("task", "oracle", "no-op", "wrong", "ok", "detail"):
        table.add_column(column, overflow="fold")
    for result in results:
        eps = result.episodes
        table.add_row(
            Text(result.task_id),
            _score_cell(eps.get("oracle")),
            _score_cell(eps.get("noop")),
            _score_cell(eps.get("wrong")),
            Text("yes", style="green") if result.ok else Text("NO", style="red"),
            _detail(result),
        )
    console.print(table)
    if verbose:
        logs_shown: set[str] = set()
        for result in results:
            for variant, check in result.episodes.items():
                if check.detail:
                    console.rule(Text(f"{result.task_id} {variant}"))
                    console.print(check.detail, markup=False, highlight=False, soft_wrap=True)
                for log in dict.fromkeys(_BUILD_LOG.findall(check.detail or "")):
                    if log not in logs_shown and Path(log).is_file():  # a failed build's detail has its tail only
                        logs_shown.add(log)
                        console.rule(Text(f"{result.task_id}: the whole build log ({log})"))
                        console.print(Path(log).read_text(errors="replace"), markup=False, highlight=False)
            if result.error:
                console.rule(Text(result.task_id))
                console.print(result.error, markup=False, highlight=False, soft_wrap=True)
    failed = [r.task_id for r in results if not r.ok]
    if failed:
        console.print(
            Text.assemble((f"{len(failed)} of {len(results)} tasks failed validation: ", "red"), ", ".join(failed)),
            soft_wrap=True,
        )
    else:
        console.print(f"all {len(results)} tasks valid", style="green")
    return failed


@app.command()
def validate(
    paths: PathsArg = None,
    family: FamilyOpt = None,
    backend: BackendOpt = "local",
    jobs: JobsOpt = 2,
    no_audit: Annotated[bool, typer.Option("--no-audit", help="Skip the reward-hack audit.")] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Print every episode's whole detail (build logs, verifier output).")
    ] = False,
) -> None:
    """Run each task's oracle, a no-op agent and its wrong solution, then the reward-hack audit;
    fail if any scores wrongly, the oracle never passes a checkpoint, or any hack scores above doing
    nothing. A task that does not load or build is reported; the others run."""
    from agentenvs.validate import VARIANTS, TaskValidation, validate_tasks

    tasks, broken = _tasks_or_exit(paths, family)
    with episode_progress(f"validating {len(tasks)} tasks on {backend}", len(tasks) * len(VARIANTS)) as progress:
        results = validate_tasks(tasks, env_kwargs={"backend": backend}, jobs=jobs, on_result=progress)
    results += [TaskValidation(where, {}, error=f"did not load: {why}") for where, why in broken.items()]
    failed = _print_validation(results, backend, verbose)
    audited = no_audit or not tasks or _print_audit(_run_audit(tasks, backend, jobs, []), backend, {}, verbose)
    if failed or not audited:
        raise typer.Exit(1)


if __name__ == "__main__":
    app()
