"""What verification found: typed, so ``verify --json`` and ``build`` read the same record."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

#: ``integrity``: the bundle contradicts itself; ``completeness``: episodes missing, repeated or unplanned;
#: ``rules``: outside the board's budgets, settings, policies, versions or task contents;
#: ``replay``: the recorded actions did not reproduce the record; ``oracle``: the task's own solution replayed.
Kind = Literal["integrity", "completeness", "rules", "replay", "oracle"]


class Problem(BaseModel):
    kind: Kind
    message: str
    task_id: str | None = None
    trial: int | None = None

    def __str__(self) -> str:
        return (f"{self.task_id} #{self.trial}: " if self.task_id else "") + self.message


class EpisodeReplay(BaseModel):
    """One episode played again from its recorded actions."""

    task_id: str
    trial: int
    family: str
    required: bool = Field(description="the board requires this family to reproduce")
    reproduced: bool
    mismatches: list[str] = Field(default_factory=list)
    recorded_sec: float | None = None
    replay_sec: float | None = None

    @property
    def status(self) -> str:
        if self.reproduced:
            return "reproduced"
        return "failed" if self.required else "non-deterministic"


class Verdict(BaseModel):
    """Accepted when no problem was found; ``replayed`` says whether the replay ran at all."""

    board: str
    bundle: str
    bundle_sha256: str = Field(description="sha256 of the bundle's manifest: which bundle this verdict is about")
    problems: list[Problem] = Field(default_factory=list)
    episodes: list[EpisodeReplay] = Field(default_factory=list)
    replayed: bool = False

    @property
    def accepted(self) -> bool:
        return not self.problems

    @property
    def verified_by_replay(self) -> bool:
        """Accepted, and every episode reproduced (none merely tolerated as non-deterministic)."""
        return self.accepted and self.replayed and all(e.reproduced for e in self.episodes)
