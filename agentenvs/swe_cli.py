"""``agentenvs swe ...``: the bug synthesizer and SWE-bench interoperability."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.markup import escape

from agentenvs.core.errors import AgentEnvsError

swe_app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="SWE tasks: synthesize bugs, export SWE-bench predictions, import SWE-bench instances.",
)
console = Console()


@swe_app.command()
def synthesize(
    repo: Annotated[Path, typer.Argument(help="A Python repository with a pytest suite.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Where to write the task directories.")],
    max_tasks: Annotated[Optional[int], typer.Option("--max", min=1, help="Stop after this many tasks.")] = None,
    seed: Annotated[int, typer.Option(help="Order in which mutants are tried.")] = 0,
    jobs: Annotated[
        int, typer.Option("--jobs", "-j", min=1, help="Mutants tried at once, each in its own sandbox.")
    ] = 2,
    python: Annotated[
        str, typer.Option(help="The interpreter (with pytest) that runs the suite, inside the sandbox.")
    ] = "/usr/bin/python3",
    backend: Annotated[
        str, typer.Option(help="Where the suites run: local (bubblewrap) or docker; never on this host.")
    ] = "local",
    name: Annotated[
        Optional[str], typer.Option(help="The repository's name in instance ids (synth__NAME-<hash>).")
    ] = None,
    deselect: Annotated[Optional[list[str]], typer.Option(help="A pytest node id to leave out (repeatable).")] = None,
    keyword: Annotated[
        Optional[str], typer.Option("-k", help="A pytest -k expression selecting the tests to use.")
    ] = None,
    resume: Annotated[
        bool, typer.Option("--resume", help="Continue an interrupted synthesis in OUT, skipping mutants tried.")
    ] = False,
) -> None:
    """Turn REPO into SWE tasks by mutating its functions; keep mutants that break some tests, not all.

    Tasks are written as they are found; Ctrl-C keeps them, and --resume continues. Tests that fail on
    the clean repository (a missing package) are left out by themselves.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from agentenvs.envs.swe.synthesize import SynthesisError
    from agentenvs.envs.swe.synthesize import synthesize as run

    err = Console(stderr=True)
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("mutants  [green]{task.fields[tasks]} tasks"),
        TimeElapsedColumn(),
        console=err,
        transient=False,
    )
    row = bar.add_task("running the clean suite", total=None, tasks=0)

    last = {"tasks": -1, "phase": ""}

    def show(p) -> None:
        description = {"baseline": "running the clean suite", "mutants": "trying mutants"}.get(
            p.phase, "stopping: finishing the mutants in flight (Ctrl-C again to abandon them)"
        )
        bar.update(row, description=description, completed=p.tried, total=p.total or None, tasks=p.tasks)
        if not err.is_terminal and (p.tasks != last["tasks"] or p.phase != last["phase"] or p.tried % 50 == 0):
            # No live bar in a log file: a line when something happens, and every 50 mutants.
            err.print(f"{description}: {p.tried}/{p.total} mutants, {p.tasks} tasks")
            last.update(tasks=p.tasks, phase=p.phase)

    try:
        with bar:
            result = run(
                repo,
                out,
                max_tasks=max_tasks,
                seed=seed,
                jobs=jobs,
                python=python,
                backend=backend,
                name=name,
                deselect=tuple(deselect or ()),
                keyword=keyword,
                resume=resume,
                on_progress=show,
            )
    except (SynthesisError, AgentEnvsError) as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}")
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        err.print(f"interrupted before any mutant was tried; the tasks in {escape(str(out))} (if any) are kept")
        raise typer.Exit(130) from None
    rejected = ", ".join(f"{n} {why}" for why, n in sorted(result.rejected.items())) or "none"
    excluded = (
        f"; {len(result.excluded_tests)} tests left out (failing on the clean tree)" if result.excluded_tests else ""
    )
    console.print(
        f"[green]{len(result.tasks)} tasks[/] in {escape(str(out))}; {result.tried} mutants tried in "
        f"{result.elapsed:.0f} s ({result.baseline_tests} tests{excluded}; rejected: {rejected})."
    )
    if result.interrupted:
        err.print(
            f"interrupted: the tasks written are kept. Continue with: agentenvs swe synthesize {escape(str(repo))} --out {escape(str(out))} --resume"
        )
        raise typer.Exit(130)
    console.print(f"Validate them with: agentenvs validate {escape(str(out))}/*/")


@swe_app.command("export-preds")
def export_preds(
    run_dir: Annotated[Path, typer.Argument(help="A run directory written by `agentenvs run`.")],
    out: Annotated[Optional[Path], typer.Option("--out", "-o", help="Default: RUN_DIR/preds.jsonl.")] = None,
    model: Annotated[Optional[str], typer.Option(help="model_name_or_path (default: the run's policy model).")] = None,
    trial: Annotated[int, typer.Option(min=0, help="Which trial of each task to export.")] = 0,
) -> None:
    """Write SWE-bench's preds.jsonl (instance_id, model_name_or_path, model_patch) for a run."""
    from agentenvs.envs.swe.interop import export_preds as run

    try:
        path = run(run_dir, out, model_name=model, trial=trial)
    except (FileNotFoundError, ValueError) as exc:
        console.print(f"[red]error:[/] {exc}")
        raise typer.Exit(2) from None
    console.print(f"wrote {path}")


@swe_app.command("import")
def import_command(
    instances: Annotated[Path, typer.Argument(help="SWE-bench instances: a JSON list, one JSON object, or JSONL.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Where to write the task directories.")],
    image_template: Annotated[str, typer.Option(help="Image name; {arch} and {instance_id} are filled in.")] = (
        "sweb.eval.{arch}.{instance_id}:latest"
    ),
) -> None:
    """Write task directories for SWE-bench instances; they run on the docker backend in each instance's image."""
    from agentenvs.envs.swe.interop import import_instances

    try:
        written = import_instances(instances, out, image_template=image_template)
    except AgentEnvsError as exc:
        console.print(f"[red]error:[/] {exc}")
        raise typer.Exit(2) from None
    console.print(f"wrote {len(written)} tasks to {out}. Run them with: agentenvs validate --backend docker {out}/*/")
