"""The task: a directory in Harbor's layout, validated by one typed model.

A task directory holds ``task.toml``, ``instruction.md``, ``environment/``,
``solution/`` and ``tests/``. Harbor's own sections (``[metadata]``,
``[agent]``, ``[verifier]``, ``[environment]``) are read as Harbor writes
them, so Terminal-Bench 2 tasks load unchanged; agentenvs adds ``[limits]``,
``[evaluator]``, ``[[checkpoints]]`` and one section per family.
"""

from __future__ import annotations

import difflib
import hashlib
import logging
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from agentenvs.core.errors import TaskFormatError
from agentenvs.core.task_sections import (
    AgentSection,
    ArtifactSpec,
    Checkpoint,
    CheckSpec,
    EnvironmentSection,
    EvaluatorSection,
    LimitsSection,
    MetadataSection,
    Open,
    StepSection,
    Strict,
    VerifierSection,
)

Difficulty = Literal["easy", "medium", "hard"]
Split = Literal["train", "valid", "test"]
logger = logging.getLogger(__name__)


class TaskConfig(Strict):
    """``task.toml``. Harbor's keys plus ours; unknown top-level keys are handled by ``parse_task_config``."""

    schema_version: str | None = None
    version: str = "1.0"
    id: str | None = None
    family: str | None = None
    split: Split = "test"
    difficulty: Difficulty | None = None
    tags: list[str] = Field(default_factory=list)
    source: str | None = None
    task: dict[str, Any] = Field(default_factory=dict)
    metadata: MetadataSection = Field(default_factory=MetadataSection)
    agent: AgentSection = Field(default_factory=AgentSection)
    verifier: VerifierSection = Field(default_factory=VerifierSection)
    environment: EnvironmentSection = Field(default_factory=EnvironmentSection)
    solution: dict[str, Any] = Field(default_factory=dict)
    artifacts: list[ArtifactSpec] = Field(default_factory=list)
    steps: list[StepSection] = Field(default_factory=list)
    multi_step_reward_strategy: Literal["mean", "final"] | None = None
    multi_step_reward_mode: Any = None
    limits: LimitsSection = Field(default_factory=LimitsSection)
    evaluator: EvaluatorSection | None = None
    checkpoints: list[Checkpoint] = Field(default_factory=list)
    terminal: dict[str, Any] = Field(default_factory=dict)
    swe: dict[str, Any] = Field(default_factory=dict)
    web: dict[str, Any] = Field(default_factory=dict)
    gui: dict[str, Any] = Field(default_factory=dict)
    textgame: dict[str, Any] = Field(default_factory=dict)
    _warnings: tuple[str, ...] = PrivateAttr(default=())

    @field_validator("artifacts", mode="before")
    @classmethod
    def _artifact_strings(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"source": item} if isinstance(item, str) else item for item in value]
        return value

    @field_validator("checkpoints")
    @classmethod
    def _unique_names(cls, value: list[Checkpoint]) -> list[Checkpoint]:
        names = [c.name for c in value]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"checkpoint names must be unique, repeated: {', '.join(dupes)}")
        return value

    @field_validator("steps")
    @classmethod
    def _unique_steps(cls, value: list[StepSection]) -> list[StepSection]:
        names = [s.name for s in value]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"step names must be unique, repeated: {', '.join(dupes)}")
        return value

    @property
    def warnings(self) -> tuple[str, ...]:
        """Keys that were kept but not understood (a newer Harbor's, most likely)."""
        return self._warnings

    @property
    def reward_strategy(self) -> Literal["mean", "final"]:
        """How step rewards roll up into the task's: Harbor's default is the mean."""
        return self.multi_step_reward_strategy or "mean"


@dataclass(frozen=True)
class TaskStep:
    """One step of a multi-step task: its settings and its folder (``steps/<name>/``)."""

    config: StepSection
    instruction: str
    path: Path

    @property
    def name(self) -> str:
        return self.config.name

    def dir(self, name: str) -> Path | None:
        sub = self.path / name
        return sub if sub.is_dir() else None


class Task(BaseModel):
    """A loaded task: its config, instruction and where its files are.

    Generated tasks (text games, synthesized bugs) have no ``path``; their
    family builds the state from ``params``.
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    id: str
    family: str
    instruction: str
    config: TaskConfig
    path: Path | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    #: The steps of a multi-step task (``[[steps]]``), in order; empty for a single-step task.
    steps: tuple[TaskStep, ...] = ()

    @property
    def warnings(self) -> tuple[str, ...]:
        return self.config.warnings

    @property
    def full_id(self) -> str:
        return f"{self.family}/{self.id}"

    @property
    def difficulty(self) -> str | None:
        """easy, medium or hard; Harbor's free-form ``[metadata] difficulty`` only when it is one of them."""
        named = self.config.metadata.difficulty
        return self.config.difficulty or (named.lower() if named and named.lower() in get_args(Difficulty) else None)

    @property
    def tags(self) -> list[str]:
        return sorted(set(self.config.tags) | set(self.config.metadata.tags))

    @property
    def split(self) -> str:
        return self.config.split

    @property
    def version(self) -> str:
        return str(self.config.task.get("version", self.config.version))

    def dir(self, name: str) -> Path | None:
        """A subdirectory of the task (``environment``, ``solution``, ``tests``) if it exists."""
        if self.path is None:
            return None
        sub = self.path / name
        return sub if sub.is_dir() else None

    def content_hash(self) -> str:
        """sha256 over every file of the task, so a run records exactly what it ran."""
        digest = hashlib.sha256()
        if self.path is None:
            digest.update(repr(sorted(self.params.items())).encode())
            digest.update(self.instruction.encode())
            return digest.hexdigest()
        for file in sorted(p for p in self.path.rglob("*") if p.is_file()):
            digest.update(str(file.relative_to(self.path)).encode())
            digest.update(file.read_bytes())
        return digest.hexdigest()

    def summary(self) -> dict[str, Any]:
        return {
            "id": self.full_id,
            "family": self.family,
            "split": self.split,
            "difficulty": self.difficulty,
            "tags": self.tags,
            "version": self.version,
        }


def _format_loc(loc: tuple[Any, ...]) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        else:
            parts.append(("." if parts else "") + str(item))
    return "".join(parts)


def _split_top_level(data: dict[str, Any], source: str | Path) -> tuple[dict[str, Any], list[str]]:
    """Known top-level keys, and warnings for unknown ones; an unknown key that looks like a typo of a
    known one is an error naming it."""
    known = set(TaskConfig.model_fields)
    kept: dict[str, Any] = {}
    warnings: list[str] = []
    for key, value in data.items():
        if key == "tags" and isinstance(value, dict):
            # ours is a list; a [tags] table is a Harbor task's own free-form section, which Harbor ignores
            warnings.append(f"{source}: top-level [tags] table ignored (agentenvs' tags are a list; Harbor ignores it)")
            continue
        if key in known:
            kept[key] = value
            continue
        close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.75)
        if close:
            raise TaskFormatError(str(source), f"unknown key; did you mean {close[0]!r}?", field=key)
        warnings.append(f"{source}: unknown top-level key {key!r} ignored (a newer Harbor's?)")
    return kept, warnings


def _unknown_keys(model: BaseModel, where: str) -> list[str]:
    """The keys Harbor's sections kept without understanding them, as ``[section] key`` names.
    ``[metadata]`` is free-form in Harbor (time estimates, sources, anything): its keys are data, not settings."""
    found: list[str] = []
    if isinstance(model, Open) and model.model_extra and not isinstance(model, MetadataSection):
        found += [f"{where}.{key}" if where else key for key in model.model_extra]
    for name in type(model).model_fields:
        value = getattr(model, name)
        items = value if isinstance(value, list) else [value]
        for index, item in enumerate(items):
            if isinstance(item, BaseModel):
                suffix = f"[{index}]" if isinstance(value, list) else ""
                found += _unknown_keys(item, f"{where}.{name}{suffix}" if where else f"{name}{suffix}")
    return found


def parse_task_config(data: dict[str, Any], source: str | Path) -> TaskConfig:
    """Validate a ``task.toml`` mapping; errors name the file and the field, unknown Harbor keys warn."""
    kept, warnings = _split_top_level(data, source)
    try:
        config = TaskConfig.model_validate(kept)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = _format_loc(first["loc"])
        more = f" (and {len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
        raise TaskFormatError(str(source), f"{first['msg']}{more}", field=field) from None
    warnings += [
        f"{source}: unknown key [{key}] kept but not used (a newer Harbor's?)" for key in _unknown_keys(config, "")
    ]
    if config.multi_step_reward_mode is not None:
        warnings.append(f"{source}: multi_step_reward_mode is Harbor's pre-1.3 key and is ignored, as Harbor does")
    config._warnings = tuple(warnings)
    for warning in warnings:
        logger.warning("%s", warning)
    return config


def _read_instruction(path: Path) -> str:
    if not path.is_file():
        raise TaskFormatError(str(path), "missing; write what the agent is told here")
    instruction = path.read_text(encoding="utf-8").strip()
    if not instruction:
        raise TaskFormatError(str(path), "is empty")
    return instruction


def _load_steps(root: Path, config: TaskConfig) -> tuple[TaskStep, ...]:
    """Each ``[[steps]]`` entry's folder: an instruction, and a test.sh of its own or the task's."""
    steps = []
    shared_test = (root / "tests" / "test.sh").is_file()
    for index, step in enumerate(config.steps):
        folder = root / "steps" / step.name
        if not folder.is_dir():
            raise TaskFormatError(
                str(folder), "missing: every [[steps]] entry needs its folder", field=f"steps[{index}]"
            )
        if not shared_test and not (folder / "tests" / "test.sh").is_file():
            raise TaskFormatError(
                str(folder / "tests" / "test.sh"), "missing, and the task has no tests/test.sh to fall back on"
            )
        steps.append(TaskStep(config=step, instruction=_read_instruction(folder / "instruction.md"), path=folder))
    return tuple(steps)


def load_task(path: str | Path, family: str | None = None) -> Task:
    """Load and validate a task directory, wherever it lies.

    The family is ``task.toml``'s ``family``, else ``family`` (what a task
    source says), else ``terminal``: every Harbor task is a shell task. The
    name of the folder holding the task never decides.
    """
    root = Path(path).resolve()
    toml_path = root / "task.toml"
    if not root.is_dir():
        raise TaskFormatError(str(root), "not a directory; a task is a directory holding task.toml")
    if not toml_path.is_file():
        raise TaskFormatError(str(toml_path), "missing; every task directory needs a task.toml")
    try:
        data = tomllib.loads(toml_path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise TaskFormatError(str(toml_path), f"not valid TOML: {exc}") from None
    config = parse_task_config(data, toml_path)
    steps = _load_steps(root, config)
    if steps and not (root / "instruction.md").is_file():
        instruction = steps[0].instruction  # Harbor never shows a multi-step task's own instruction
    else:
        instruction = _read_instruction(root / "instruction.md")
    # Harbor's format has no families: a task that names none is a terminal task, wherever it lies.
    task_family = config.family or family or "terminal"
    return Task(
        id=config.id or root.name, family=task_family, instruction=instruction, config=config, path=root, steps=steps
    )


__all__ = [
    "AgentSection",
    "ArtifactSpec",
    "CheckSpec",
    "Checkpoint",
    "EnvironmentSection",
    "EvaluatorSection",
    "LimitsSection",
    "MetadataSection",
    "StepSection",
    "Task",
    "TaskConfig",
    "TaskStep",
    "VerifierSection",
    "load_task",
    "parse_task_config",
]
