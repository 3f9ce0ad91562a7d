"""``agentenvs gui ...``: OSWorld interoperability for the desktop family."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

gui_app = typer.Typer(no_args_is_help=True, add_completion=False, help="Desktop tasks: import OSWorld's task JSON.")


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
) -> None:
    """Turn OSWorld task JSON into gui task directories, keeping the JSON verbatim."""
    from agentenvs.envs.gui.importer import coverage, import_tree

    if out is None and not check:
        raise typer.BadParameter("give --out DIR, --check, or both")
    scans = import_tree(src, out, assets)
    if check:
        typer.echo(coverage(scans))
    if out is not None:
        done = sum(s.status == "imported" for s in scans)
        typer.echo(f"wrote {done} of {len(scans)} tasks to {out}")
