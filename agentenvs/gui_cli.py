"""``agentenvs gui ...``: OSWorld interoperability for the desktop family."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from agentenvs.cli_output import console, episode_progress, print_not_run

if TYPE_CHECKING:
    from agentenvs.audit import TaskAudit

gui_app = typer.Typer(no_args_is_help=True, add_completion=False, help="Desktop tasks: import OSWorld's task JSON.")
#: The attacks' desktops: small and without the accessibility tree, for speed.
ATTACK_OPTIONS: dict[str, object] = {
    "backend": "docker",
    "screen_size": (1280, 800),
    "observation_type": "screenshot",
    "max_steps": 8,
}


@gui_app.command("import-osworld")
def import_osworld(
    src: Annotated[Path, typer.Argument(help="OSWorld's evaluation_examples (or its examples/) directory.")],
    out: Annotated[Optional[Path], typer.Option("--out", "-o", help="Where to write the task directories.")] = None,
    assets: Annotated[
        Optional[Path], typer.Option(help="Local files for the download URLs (host/path tree, urls.json, or names).")
    ] = None,
    check: Annotated[
        bool, typer.Option("--check", help="Print coverage: what imports and what stops the rest.")
    ] = False,
    attacks: Annotated[
        bool,
        typer.Option(
            "--attacks",
            help="With --check: run the audit's attacks on every task that imports and list those they satisfy.",
        ),
    ] = False,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, help="Attack episodes run at once.")] = 1,
) -> None:
    """Turn OSWorld task JSON into gui task directories, keeping the JSON verbatim."""
    from agentenvs.envs.gui.importer import coverage, import_tree

    if out is None and not check:
        raise typer.BadParameter("give --out DIR, --check, or both")
    if attacks and not check:
        raise typer.BadParameter("--attacks goes with --check")
    with tempfile.TemporaryDirectory(prefix="agentenvs-osworld-") as scratch:
        where = out if out is not None else (Path(scratch) if attacks else None)
        scans = import_tree(src, where, assets)
        if check:
            typer.echo(coverage(scans))
        if out is not None:
            done = sum(s.status == "imported" for s in scans)
            typer.echo(f"wrote {done} of {len(scans)} tasks to {out}")
        if attacks and where is not None:
            imported = [where / s.task_id for s in scans if s.status == "imported"]
            if not _print_weak(_attack(imported, jobs)):
                raise typer.Exit(1)


def _attack(dirs: list[Path], jobs: int) -> list[TaskAudit]:
    """``agentenvs audit``'s episodes on docker over the imported tasks: the no-op and every hack that
    can raise a score. Left out: ``fail`` and ``claim-success`` (a feasible task scores 0 on them, an
    infeasible one is not tried with ``fail``), the crash and slow-check classes (they void an episode,
    never score) and the reset after each episode (only the score is wanted)."""
    import agentenvs
    from agentenvs.audit import plan, run_plan
    from agentenvs.envs.gui.hacks import CRASH, GUI_HACKS
    from agentenvs.envs.gui.slow_check_hacks import SLOW_CHECK

    tasks = [agentenvs.load_task(d) for d in dirs]
    names = [h.name for h in GUI_HACKS if h.attack_class not in (CRASH, SLOW_CHECK)]
    work = plan(tasks, ATTACK_OPTIONS, names)
    with episode_progress(f"attacking {len(tasks)} imported tasks on docker", len(work)) as progress:
        return run_plan(work, ATTACK_OPTIONS, jobs, progress, check_reset=False)


def _print_weak(audits: list[TaskAudit]) -> bool:
    """The tasks an attack satisfies (scores above the no-op; the no-op itself when it scores), with
    the attack; True when every episode ran."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title="weak graders: imported tasks an attack satisfies without doing the task")
    for column in ("task", "no-op", "attack", "class", "score"):
        table.add_column(column)
    weak = set()
    for audit in audits:
        for f in audit.findings:
            if f.reason == "scored":
                weak.add(audit.task_id)
                score = "-" if f.result.score is None else f"{f.result.score:.2f}"
                table.add_row(Text(audit.task_id), f"{audit.baseline_score:.2f}", f.hack, f.attack_class, score)
    console.print(table)
    errors = print_not_run(audits)
    episodes = sum(len(a.results) + 1 for a in audits)
    console.print(f"{len(weak)} of {len(audits)} imported tasks satisfied by an attack ({episodes} episodes)")
    return not errors
