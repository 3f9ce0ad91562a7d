"""``agentenvs leaderboard ...``: submit a run, verify a bundle, build a board."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from agentenvs.core.errors import AgentEnvsError

if TYPE_CHECKING:
    from agentenvs.leaderboard.verdict import Verdict

leaderboard_app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Leaderboards: bundle a run, verify a bundle by replaying it, render a board.",
)
console = Console()

BoardOpt = Annotated[
    Optional[str], typer.Option("--board", "-b", help="A board name (under ./leaderboards) or directory.")
]


def _fail(message: str) -> typer.Exit:
    console.print(Text.assemble(("error: ", "red"), message), highlight=False, soft_wrap=True)
    return typer.Exit(2)


@leaderboard_app.command()
def submit(
    run_dir: Annotated[Path, typer.Argument(help="The run directory (`agentenvs run --out DIR`).")],
    board: Annotated[str, typer.Option("--board", "-b", help="The board this run is for.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="The bundle: a directory, or a file ending .tar.gz.")],
    redact: Annotated[
        bool, typer.Option("--redact", help="Keep actions, rewards and hashes; leave out observations and images.")
    ] = False,
) -> None:
    """Bundle RUN_DIR for a board, and report the static checks (the replay is `verify`'s)."""
    from agentenvs.leaderboard import find_board, make_bundle, open_bundle
    from agentenvs.leaderboard.checks import static_checks

    try:
        chosen = find_board(board)
        bundle = make_bundle(run_dir, chosen.name, out, redact=redact)
        with open_bundle(bundle) as root:
            problems = static_checks(chosen, root)
    except AgentEnvsError as exc:
        raise _fail(str(exc)) from None
    console.print(f"wrote {bundle}" + (" (redacted)" if redact else ""))
    for problem in problems:
        console.print(Text(f"  {problem.kind}: {problem}", style="yellow"))
    if problems:
        console.print(f"{len(problems)} problems: the board will reject this bundle as it is")
        raise typer.Exit(1)


@leaderboard_app.command()
def verify(
    bundle: Annotated[Path, typer.Argument(help="A bundle directory or .tar.gz.")],
    board: BoardOpt = None,
    replay: Annotated[bool, typer.Option("--replay/--no-replay", help="Replay the actions on fresh envs.")] = True,
    concurrency: Annotated[int, typer.Option("--concurrency", "-c", min=1, help="Episodes replayed at once.")] = 4,
    accept_as: Annotated[
        Optional[str], typer.Option("--accept", metavar="NAME", help="When accepted, file it as submissions/NAME.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the verdict as JSON.")] = False,
) -> None:
    """Check BUNDLE: complete, within the board's rules, self-consistent, and reproduced by replay."""
    from agentenvs.leaderboard import accept, open_bundle
    from agentenvs.leaderboard.verify import board_for, check_name, verify_dir

    try:
        if accept_as:
            check_name(accept_as)
        with open_bundle(bundle) as root:
            chosen = board_for(root, board)
            verdict = verify_dir(root, chosen, replay=replay, concurrency=concurrency, label=str(bundle))
        if as_json:
            typer.echo(verdict.model_dump_json(indent=2))
        else:
            _print_verdict(verdict)
        if accept_as and verdict.accepted:
            console.print(f"filed as {accept(bundle, chosen, verdict, accept_as)}")
    except AgentEnvsError as exc:
        raise _fail(str(exc)) from None
    raise typer.Exit(0 if verdict.accepted else 1)


def _print_verdict(verdict: Verdict) -> None:
    if verdict.episodes:
        table = Table(title="replay")
        for column in ("task", "trial", "family", "status", "recorded s", "replay s", "what differs"):
            table.add_column(column)
        for e in verdict.episodes:
            style = {"reproduced": "green", "failed": "red"}.get(e.status, "yellow")
            table.add_row(e.task_id, str(e.trial), e.family, Text(e.status, style=style),
                          f"{e.recorded_sec or 0:.2f}", f"{e.replay_sec or 0:.2f}", "; ".join(e.mismatches))  # fmt: skip
        console.print(table)
    for problem in verdict.problems:
        console.print(Text(f"{problem.kind}: {problem}", style="red"))
    if verdict.accepted:
        mark = "verified by replay" if verdict.verified_by_replay else "accepted, not verified by replay"
        console.print(Text(f"{verdict.bundle}: {mark}", style="green"))
    else:
        console.print(Text(f"{verdict.bundle}: rejected ({len(verdict.problems)} problems)", style="red"))


@leaderboard_app.command()
def build(board: BoardOpt = None) -> None:
    """Render README.md and index.html of a board (default: every board under ./leaderboards)."""
    from agentenvs.leaderboard import build as render
    from agentenvs.leaderboard import find_board, load_board
    from agentenvs.leaderboard.board import boards_dir

    try:
        boards = (
            [find_board(board)] if board else [load_board(p.parent) for p in sorted(boards_dir().glob("*/board.toml"))]
        )
        if not boards:
            raise _fail(f"no boards under {boards_dir()}; pass --board")
        for chosen in boards:
            readme, index = render(chosen)
            console.print(f"{chosen.name}: wrote {readme} and {index}")
    except AgentEnvsError as exc:
        raise _fail(str(exc)) from None
