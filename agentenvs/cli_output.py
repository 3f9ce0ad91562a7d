"""What the ``agentenvs`` commands print, shared by the command modules: results on stdout, progress on stderr."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

if TYPE_CHECKING:
    from agentenvs.audit import HackResult, TaskAudit

console = Console()
#: Progress goes to stderr, so that stdout holds only the results (``--json``, tables).
progress_console = Console(stderr=True)


@contextmanager
def episode_progress(what: str, total: int) -> Iterator[Callable[[object], None]]:
    """A progress bar on stderr; yields the callback that counts one finished episode (thread-safe)."""
    columns = (TextColumn(what), BarColumn(), MofNCompleteColumn(), TextColumn("episodes"), TimeElapsedColumn())
    with Progress(*columns, console=progress_console) as bar:
        counter = bar.add_task(what, total=total)
        yield lambda _: bar.advance(counter)


def print_not_run(audits: list[TaskAudit]) -> list[HackResult]:
    """The audit episodes that never reached their hack, each with why; returns them."""
    errors = [e for a in audits for e in a.errors]
    for e in errors:
        console.print(Text.assemble((f"{e.task_id} {e.hack}: could not run: ", "red"), str(e.error)), soft_wrap=True)
    return errors
