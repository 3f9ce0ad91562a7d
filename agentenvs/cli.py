"""The ``agentenvs`` command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer
from rich.console import Console
from rich.table import Table

import agentenvs
from agentenvs.core.errors import AgentEnvsError
from agentenvs.core.task import Task, load_task
from agentenvs.gui_cli import gui_app
from agentenvs.harness.cli import register as register_harness
from agentenvs.swe_cli import swe_app

if TYPE_CHECKING:
    from agentenvs.audit import TaskAudit

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Agent environments behind one Gymnasium API.")
console = Console()
register_harness(app)
app.add_typer(swe_app, name="swe", help="SWE tasks: synthesize bugs, import SWE-bench instances, export predictions.")
app.add_typer(gui_app, name="gui", help="Desktop tasks: import OSWorld's task JSON (--check for coverage).")

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
    tasks = agentenvs.list_tasks(family=family, split=split, difficulty=difficulty, tag=tag)
    if as_json:
        for task in tasks:
            typer.echo(json.dumps(task.summary()))
        return
    table = Table(title=f"{len(tasks)} tasks")
    for column in ("id", "split", "difficulty", "tags"):
        table.add_column(column)
    for task in tasks:
        table.add_row(task.full_id, task.split, task.difficulty or "-", ", ".join(task.tags))
    console.print(table)


def _select(paths: list[Path], family: str | None) -> list[Task]:
    if paths:
        return [load_task(p) for p in paths]
    return agentenvs.list_tasks(family=family)


def _score_cell(check: object) -> str:
    from agentenvs.validate import EpisodeCheck

    assert isinstance(check, EpisodeCheck)
    text = "-" if check.score is None else f"{check.score:.2f}"
    return f"[green]{text}[/]" if check.ok else f"[red]{text}[/]"


PathsArg = Annotated[Optional[list[Path]], typer.Argument(help="Task directories (default: every registered task).")]
BackendOpt = Annotated[str, typer.Option(help="Sandbox backend: local or docker.")]
JobsOpt = Annotated[int, typer.Option("--jobs", "-j", min=1, help="Episodes run at once.")]


def _tasks_or_exit(paths: list[Path] | None, family: str | None) -> list[Task]:
    """The tasks a command runs on; a clear message and exit status 2 if there are none."""
    try:
        tasks = _select(paths or [], family)
    except AgentEnvsError as exc:
        console.print(f"[red]error:[/] {exc}")
        raise typer.Exit(2) from None
    if not tasks:
        console.print("[yellow]no tasks matched[/]")
        raise typer.Exit(2)
    return tasks


def _run_audit(tasks: list[Task], backend: str, jobs: int, hacks: list[str]) -> list[TaskAudit]:
    from agentenvs.audit import plan, run_plan

    kwargs = {"backend": backend}
    work = plan(tasks, kwargs, hacks)
    unknown = sorted(set(hacks) - {hack.name for _, hack in work})
    if unknown:
        console.print(f"[red]error:[/] no selected task has the hack(s) {', '.join(unknown)}")
        raise typer.Exit(2)
    with console.status(f"auditing {len(tasks)} tasks on {backend}") as status:
        done = 0

        def progress(_: object) -> None:
            nonlocal done
            done += 1
            status.update(f"auditing {len(tasks)} tasks on {backend}: {done}/{len(work)} episodes")

        return run_plan(work, env_kwargs=kwargs, jobs=jobs, on_result=progress)


def _print_audit(audits: list[TaskAudit], backend: str) -> bool:
    """The audit's tables; True when no hack beat the no-op and every episode ran."""
    summary = Table(title=f"audit ({backend}): known reward hacks against each task")
    for column in ("task", "no-op", "hacks", "findings", "ok"):
        summary.add_column(column)
    for audit in audits:
        names = sorted({f.hack for f in audit.findings})
        summary.add_row(
            audit.task_id,
            "-" if audit.baseline.score is None else f"{audit.baseline.score:.2f}",
            str(len(audit.results) + 1),
            f"[red]{', '.join(names)}[/]" if names else "[green]none[/]",
            "[green]yes[/]" if audit.ok else "[red]NO[/]",
        )
    console.print(summary)
    findings = [f for a in audits for f in a.findings]
    if findings:
        table = Table(title=f"{len(findings)} findings")
        for column in ("task", "hack", "class", "why", "evidence"):
            table.add_column(column)
        for f in findings:
            table.add_row(f.task_id, f.hack, f.attack_class, f.reason, f.evidence()[:300])
        console.print(table)
    errors = [e for a in audits for e in a.errors]
    for e in errors:
        console.print(f"[red]{e.task_id} {e.hack}: could not run:[/] {e.error}")
    if findings or errors:
        console.print(f"[red]{len(findings)} findings, {len(errors)} episodes not run[/]")
        return False
    console.print(f"[green]no hack scored above the no-op on {len(audits)} tasks[/]")
    return True


@app.command()
def audit(
    paths: PathsArg = None,
    family: FamilyOpt = None,
    backend: BackendOpt = "local",
    jobs: JobsOpt = 2,
    hack: Annotated[Optional[list[str]], typer.Option("--hack", help="Only this hack (repeatable).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON instead of tables.")] = False,
) -> None:
    """Try every known reward hack on each task; fail if any scores above doing nothing."""
    tasks = _tasks_or_exit(paths, family)
    audits = _run_audit(tasks, backend, jobs, hack or [])
    if as_json:
        findings = sum(len(a.findings) for a in audits)
        report = {"backend": backend, "findings": findings, "tasks": [a.to_dict() for a in audits]}
        typer.echo(json.dumps(report, indent=1))
        ok = all(a.ok for a in audits)
    else:
        ok = _print_audit(audits, backend)
    if not ok:
        raise typer.Exit(1)


@app.command()
def validate(
    paths: PathsArg = None,
    family: FamilyOpt = None,
    backend: BackendOpt = "local",
    jobs: JobsOpt = 2,
    no_audit: Annotated[bool, typer.Option("--no-audit", help="Skip the reward-hack audit.")] = False,
) -> None:
    """Run each task's oracle, a no-op agent and its wrong solution, then the reward-hack audit;
    fail if any scores wrongly or any hack scores above doing nothing."""
    from agentenvs.validate import validate_tasks

    tasks = _tasks_or_exit(paths, family)
    with console.status(f"validating {len(tasks)} tasks on {backend}") as status:
        done = 0

        def progress(_: object) -> None:
            nonlocal done
            done += 1
            status.update(f"validating {len(tasks)} tasks on {backend}: {done}/{len(tasks) * 3} episodes")

        results = validate_tasks(tasks, env_kwargs={"backend": backend}, jobs=jobs, on_result=progress)
    table = Table(title=f"validate ({backend})")
    for column in ("task", "oracle", "no-op", "wrong", "ok", "detail"):
        table.add_column(column)
    for result in results:
        eps = result.episodes
        problems = [f"{v}: {e.detail}" for v, e in eps.items() if not e.ok]
        table.add_row(
            result.task_id,
            _score_cell(eps["oracle"]),
            _score_cell(eps["noop"]),
            _score_cell(eps["wrong"]),
            "[green]yes[/]" if result.ok else "[red]NO[/]",
            "; ".join(problems)[:200],
        )
    console.print(table)
    failed = [r.task_id for r in results if not r.ok]
    if failed:
        console.print(f"[red]{len(failed)} of {len(results)} tasks failed validation:[/] {', '.join(failed)}")
    else:
        console.print(f"[green]all {len(results)} tasks valid[/]")
    audited = no_audit or _print_audit(_run_audit(tasks, backend, jobs, []), backend)
    if failed or not audited:
        raise typer.Exit(1)


if __name__ == "__main__":
    app()
