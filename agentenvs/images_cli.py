"""``agentenvs images``: the images this machine has, and what each task's base image resolves to."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.console import Console
from rich.table import Table

from agentenvs.core.errors import AgentEnvsError

console = Console()

#: Our repositories, and the one base image ``make install`` tags for Harbor tasks.
_OURS = ("agentenvs/", "debian:bookworm-slim")


def _local_images(api: Any) -> list[dict[str, Any]]:
    rows = []
    for image in api.images():
        for tag in image.get("RepoTags") or []:
            if tag.startswith(_OURS):
                rows.append({"image": tag, "id": image["Id"][7:19], "size_mb": round(image["Size"] / 1e6)})
    return sorted(rows, key=lambda row: row["image"])


def images(
    paths: Annotated[
        Optional[list[Path]], typer.Argument(help="Task directories, or folders of them: show what their FROMs use.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """List the local images and the substitution table; with task directories, what each base image
    (``FROM`` or ``docker_image``) resolves to here: itself, a stand-in, or nothing (nothing is pulled)."""
    from agentenvs.core.registry import resolve_tasks
    from agentenvs.sandbox.docker_engine import docker_client
    from agentenvs.sandbox.images import task_bases
    from agentenvs.sandbox.substitutes import DEFAULT_TABLE, read_table, user_table

    try:
        client = docker_client()
        mine = user_table()
        sources = [(mine, read_table(mine))] if mine.is_file() else []
        sources.append((DEFAULT_TABLE, read_table(DEFAULT_TABLE)))
        tasks, broken = resolve_tasks(paths) if paths else ([], {})
        resolved = [(task, base) for task in tasks for base in task_bases(task, client=client)]
    except AgentEnvsError as exc:
        console.print(f"[red]error:[/red] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    local = _local_images(client.api)
    if as_json:
        payload = {
            "images": local,
            "substitutes": [{"file": str(f), **row.model_dump()} for f, rows in sources for row in rows],
            "tasks": [
                {
                    "task": task.full_id,
                    "image": base.image,
                    "status": base.status,
                    "substitute": base.substitute.model_dump() if base.substitute else None,
                }
                for task, base in resolved
            ],
            "broken": broken,
        }
        typer.echo(json.dumps(payload, indent=2))
    else:
        _print_tables(local, sources, mine, resolved if paths else None, broken)
    if any(base.status == "missing" for _, base in resolved) or broken:
        raise typer.Exit(1)


def _print_tables(local: list[dict[str, Any]], sources: list[Any], mine: Path, resolved: Any, broken: Any) -> None:
    from agentenvs.sandbox.substitutes import DEFAULT_TABLE

    table = Table(title="Local images (nothing is pulled)")
    for column in ("image", "id", "MB"):
        table.add_column(column, justify="right" if column == "MB" else "left")
    for row in local:
        table.add_row(row["image"], row["id"], str(row["size_mb"]))
    console.print(table)
    rows_table = Table(title=f"Substitution table (first match wins; yours: {mine})")
    for column in ("match", "stands in", "from"):
        rows_table.add_column(column)
    for source, rows in sources:
        for row in rows:
            rows_table.add_row(row.match, row.describe(), source.name if source == DEFAULT_TABLE else str(source))
    console.print(rows_table)
    if resolved is not None:
        tasks_table = Table(title="Base images of the tasks")
        for column in ("task", "base image", "resolves to"):
            tasks_table.add_column(column)
        colour = {"present": "green", "substitute": "yellow", "missing": "red"}
        for task, base in resolved:
            what = {
                "present": "itself (local)",
                "substitute": f"stand-in: {base.substitute.describe() if base.substitute else ''}",
                "missing": "nothing: add a row to the table, or docker load / docker tag it",
            }[base.status]
            tasks_table.add_row(task.full_id, base.image, f"[{colour[base.status]}]{what}[/]")
        console.print(tasks_table)
        for folder, why in broken.items():
            console.print(f"[red]did not load:[/red] {folder}: {why}", highlight=False, soft_wrap=True)
