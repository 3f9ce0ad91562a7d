"""A board: ``leaderboards/<board>/board.toml``, the rules every submission to it is held to.

The file is validated by one pydantic model; a malformed file is a
``BoardFormatError`` naming the file and the field, as ``task.toml`` is.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from agentenvs.core.errors import AgentEnvsError
from agentenvs.core.task import _format_loc

#: Where boards live when ``--board`` is a name, not a directory.
BOARDS_DIR_ENV = "AGENTENVS_LEADERBOARDS"
METRICS = ("score", "success", "pass_at_k", "steps", "tokens")


class BoardFormatError(AgentEnvsError):
    """A ``board.toml`` is missing or malformed. Names the file and the field."""

    def __init__(self, path: str | Path, message: str, field: str | None = None):
        where = f"{path}" + (f" [{field}]" if field else "")
        super().__init__(f"{where}: {message}")


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TasksSection(_Section):
    """Which tasks, and how many trials of each: ``ids``, or a ``suite`` and/or ``family``/``split`` filters."""

    suite: str | None = None
    family: str | None = None
    split: str | None = None
    ids: list[str] = Field(default_factory=list)
    trials: int = Field(1, ge=1)
    seed: int = Field(0, description="trial t plays seed + t, so every submission meets the same initial states")

    @model_validator(mode="after")
    def _some_tasks(self) -> TasksSection:
        if not (self.suite or self.family or self.split or self.ids):
            raise ValueError("name the tasks: ids = [...], or suite = NAME and/or family, split")
        if self.ids and (self.suite or self.family or self.split):
            raise ValueError("give ids = [...] or a selection (suite, family, split), not both")
        return self


class BudgetsSection(_Section):
    """Upper bounds a run must have been held to (its config must set them no higher)."""

    max_steps: int = Field(ge=1)
    episode_timeout_sec: float = Field(gt=0)


class RulesSection(_Section):
    """What a submission may do: policies, env settings, backends; which families must replay."""

    forbid_policies: list[str] = Field(default_factory=lambda: ["oracle"])
    #: env keyword -> the values allowed (e.g. ``observation_type = ["a11y_tree"]``); any other keyword is refused.
    settings: dict[str, list[Any]] = Field(default_factory=dict)
    backends: list[str] = Field(default_factory=lambda: ["local", "docker"])
    replay_families: list[str] = Field(default_factory=lambda: ["terminal", "textgame"])
    same_version: bool = Field(True, description="the run's agentenvs version must be the verifier's")


class Board(_Section):
    """One leaderboard."""

    name: str
    title: str = ""
    description: str = ""
    tasks: TasksSection
    budgets: BudgetsSection
    rules: RulesSection = Field(default_factory=RulesSection)
    metrics: list[Literal["score", "success", "pass_at_k", "steps", "tokens"]] = Field(
        default_factory=lambda: list(METRICS), min_length=1
    )
    path: Path | None = Field(None, exclude=True)

    @property
    def submissions(self) -> Path:
        assert self.path is not None, "a board loaded from a file knows its directory"
        return self.path / "submissions"

    def task_ids(self) -> list[str]:
        """The board's tasks, in a stable order (the suite is resolved against the installed tasks)."""
        if self.tasks.ids:
            return list(self.tasks.ids)
        from agentenvs.harness.suites import select_tasks

        t = self.tasks
        return [task.full_id for task in select_tasks(t.suite, family=t.family, split=t.split)]

    def seed_for(self, trial: int) -> int:
        return self.tasks.seed + trial


def load_board(path: str | Path) -> Board:
    """``board.toml`` from a board directory (or the file itself), validated."""
    path = Path(path)
    file = path / "board.toml" if path.is_dir() else path
    if not file.is_file():
        raise BoardFormatError(file, "missing; a board directory holds a board.toml")
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise BoardFormatError(file, f"not valid TOML: {exc}") from None
    try:
        board = Board.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        more = f" (and {len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
        raise BoardFormatError(file, f"{first['msg']}{more}", field=_format_loc(first["loc"]) or None) from None
    board.path = file.parent
    return board


def boards_dir() -> Path:
    return Path(os.environ.get(BOARDS_DIR_ENV, "leaderboards"))


def find_board(ref: str | Path) -> Board:
    """A board by directory, or by name under ``$AGENTENVS_LEADERBOARDS`` (default ``./leaderboards``)."""
    path = Path(ref)
    if path.is_dir() or path.suffix == ".toml":
        return load_board(path)
    named = boards_dir() / str(ref)
    if not named.is_dir():
        known = sorted(p.parent.name for p in boards_dir().glob("*/board.toml"))
        raise BoardFormatError(named, f"no such board; boards here: {', '.join(known) or 'none'}")
    return load_board(named)
