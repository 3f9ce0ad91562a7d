"""Suites: named task selections, defined in one place.

A suite is a set of filters over ``agentenvs.list_tasks``. ``--suite``
names one of ``SUITES``; ``--task`` globs (``terminal/*``), ``--split``,
``--tag``, ``--difficulty`` and ``--family`` narrow or replace it.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field

from agentenvs.core import Task, list_tasks


@dataclass(frozen=True)
class Suite:
    """Tasks matching every given filter; ``patterns`` are globs on full ids (any may match)."""

    description: str
    families: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    split: str | None = None
    tags: tuple[str, ...] = field(default_factory=tuple)
    difficulty: str | None = None


SUITES: dict[str, Suite] = {
    "starter": Suite(
        "A few quick tasks from the terminal and text-game families: the smoke test and the `make run` job.",
        patterns=(
            "terminal/fix-permissions",
            "terminal/csv-sales-report",
            "terminal/archive-create-backup",
            "textgame/coin-easy-0",
            "textgame/coin-easy-1",
            "textgame/coin-easy-2",
        ),
    ),
    "terminal": Suite("Every terminal task.", families=("terminal",)),
    "textgame": Suite("Every text-game task.", families=("textgame",)),
    "textgame-train": Suite("The frozen text-game training suite.", families=("textgame",), split="train"),
    "textgame-test": Suite(
        "The frozen text-game test suite (held-out seeds, words and layouts).", families=("textgame",), split="test"
    ),
    "swe": Suite("Every software-engineering task.", families=("swe",)),
    "all": Suite("Every registered task."),
}


def select_tasks(
    suite: str | None = None,
    patterns: list[str] | None = None,
    *,
    family: str | None = None,
    split: str | None = None,
    tag: str | None = None,
    difficulty: str | None = None,
) -> list[Task]:
    """The tasks of a suite and/or globs, narrowed by the filters, in a stable order.

    An unknown filter value raises ``TaskNotFoundError`` (see ``list_tasks``).
    """
    if suite is not None and suite not in SUITES:
        raise ValueError(f"unknown suite {suite!r}; choose one of: {', '.join(SUITES)} (or pass --task globs)")
    chosen = SUITES[suite] if suite else Suite("ad hoc")
    if suite is None and not patterns and not (family or split or tag or difficulty):
        raise ValueError(
            "choose tasks: task directories or ids as arguments, --suite NAME, --task GLOB, "
            "or a filter (--family, --split, --tag, --difficulty)"
        )
    families = [family] if family else list(chosen.families) or None
    tasks = list_tasks(
        family=families, split=split or chosen.split, difficulty=difficulty or chosen.difficulty, tag=tag
    )
    globs = list(patterns or []) + list(chosen.patterns)
    wanted_tags = set(chosen.tags) | ({tag} if tag else set())
    selected = [
        t
        for t in tasks
        if (not globs or any(fnmatch.fnmatch(t.full_id, g) for g in globs)) and wanted_tags <= set(t.tags)
    ]
    return sorted(selected, key=lambda t: t.full_id)
