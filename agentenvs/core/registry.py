"""The registry: which families exist, which tasks each has, and how to make an env.

A family registers a ``Family`` with a task source. On-disk families use
``DirectoryTaskSource`` over ``tasks/<family>/``; generated families (text
games, synthesized bugs) supply their own. The harness and server reach
families only through here.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, get_args

from agentenvs.core.errors import AgentEnvsError, TaskNotFoundError
from agentenvs.core.task import Difficulty, Split, Task, load_task


def tasks_root() -> Path:
    """Where on-disk tasks live: ``$AGENTENVS_TASKS_DIR`` or the repository's ``tasks/``."""
    override = os.environ.get("AGENTENVS_TASKS_DIR")
    if override:
        return Path(override).resolve()
    return Path(__file__).resolve().parents[2] / "tasks"


class TaskSource(Protocol):
    """Lists and loads one family's tasks."""

    def ids(self) -> list[str]: ...

    def load(self, task_id: str) -> Task: ...


class DirectoryTaskSource:
    """Tasks stored as directories under ``root`` (``tasks/<family>/<id>/task.toml``)."""

    def __init__(self, family: str, root: Path | None = None):
        self.family = family
        self._root = root

    @property
    def root(self) -> Path:
        return self._root or tasks_root() / self.family

    def ids(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.parent.name for p in self.root.glob("*/task.toml"))

    def load(self, task_id: str) -> Task:
        path = self.root / task_id
        if not (path / "task.toml").is_file():
            raise TaskNotFoundError(f"no task {self.family}/{task_id} under {self.root}")
        return load_task(path, family=self.family)


@dataclass(frozen=True)
class Family:
    """A registered family: its name, its env class's entry point, and its tasks."""

    name: str
    entry_point: str
    source: TaskSource
    description: str = ""

    @property
    def gym_id(self) -> str:
        return f"agentenvs/{self.name}-v0"


_FAMILIES: dict[str, Family] = {}
_LOADERS: list[Callable[[], None]] = []


def register_family(family: Family) -> None:
    _FAMILIES[family.name] = family


def add_family_loader(loader: Callable[[], None]) -> None:
    """Called once before the first lookup; lets ``agentenvs.envs`` register lazily."""
    _LOADERS.append(loader)


def _ensure_loaded() -> None:
    while _LOADERS:
        _LOADERS.pop(0)()


def families() -> dict[str, Family]:
    _ensure_loaded()
    return dict(_FAMILIES)


def get_family(name: str) -> Family:
    _ensure_loaded()
    try:
        return _FAMILIES[name]
    except KeyError:
        known = ", ".join(sorted(_FAMILIES)) or "none"
        raise TaskNotFoundError(f"unknown family {name!r}; registered families: {known}") from None


def split_task_id(full_id: str) -> tuple[str, str]:
    family, sep, task_id = full_id.partition("/")
    if not sep or not task_id:
        raise TaskNotFoundError(f"task ids look like '<family>/<task>', got {full_id!r}")
    return family, task_id


def accepts_option(family: str, option: str) -> bool:
    """Whether ``family``'s env class takes the keyword ``option`` (``backend`` means nothing to a text game)."""
    return option in env_options(family)


def env_options(family: str) -> set[str]:
    """Every keyword ``family``'s env class takes, through the ``**kwargs`` it passes to its bases."""
    import inspect

    from gymnasium.envs.registration import load_env_creator

    creator = load_env_creator(get_family(family).entry_point)
    names: set[str] = set()
    for cls in inspect.getmro(creator) if inspect.isclass(creator) else ():
        if "__init__" not in vars(cls) or cls is object:
            continue
        params = inspect.signature(vars(cls)["__init__"]).parameters.values()
        names |= {p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)} - {"self"}
        if not any(p.kind is p.VAR_KEYWORD for p in params):
            break
    return names


def get_task(full_id: str) -> Task:
    """Load ``<family>/<task-id>``."""
    family, task_id = split_task_id(full_id)
    return get_family(family).source.load(task_id)


def _check_choice(what: str, value: str | None, allowed: Iterable[str]) -> None:
    if value is not None and value not in allowed:
        raise TaskNotFoundError(f"unknown {what} {value!r}; choose one of: {', '.join(sorted(allowed))}")


def list_tasks(
    family: str | Iterable[str] | None = None,
    split: str | None = None,
    difficulty: str | None = None,
    tag: str | None = None,
    pattern: str | None = None,
) -> list[Task]:
    """Every task that matches all the given filters (``pattern`` is a glob on the full id).

    A filter value that could never match (an unknown family, split or difficulty, a tag no
    task of the chosen families has) raises ``TaskNotFoundError`` naming the values that exist:
    a typo must not look like an empty selection.
    """
    wanted = [family] if isinstance(family, str) else list(family) if family else None
    for name in wanted or []:
        get_family(name)
    _check_choice("split", split, get_args(Split))
    _check_choice("difficulty", difficulty, get_args(Difficulty))
    found: list[Task] = []
    tags: set[str] = set()
    for name, fam in sorted(families().items()):
        if wanted is not None and name not in wanted:
            continue
        for task_id in fam.source.ids():
            if pattern and not fnmatch.fnmatch(f"{name}/{task_id}", pattern):
                continue
            task = fam.source.load(task_id)
            tags.update(task.tags)
            if split and task.split != split:
                continue
            if difficulty and task.difficulty != difficulty:
                continue
            if tag and tag not in task.tags:
                continue
            found.append(task)
    if tag is not None and tag not in tags:
        shown = sorted(tags)[:40]
        more = f" and {len(tags) - len(shown)} more" if len(tags) > len(shown) else ""
        raise TaskNotFoundError(f"no task has the tag {tag!r}; tags in use: {', '.join(shown) or 'none'}{more}")
    return found


def _task_dirs(folder: Path) -> list[Path]:
    """The task directories at any depth under ``folder`` (none inside another task)."""
    found: list[Path] = []
    for toml in sorted(folder.rglob("task.toml")):
        if not any(parent in found for parent in toml.parents):
            found.append(toml.parent)
    return found


def resolve_tasks(refs: Iterable[str | Path]) -> tuple[list[Task], dict[str, str]]:
    """Tasks named by path or id: a task directory, a folder of task directories (at any depth),
    or a registered ``<family>/<task>`` id.

    Returns the tasks and, apart, the task directories that did not load (path -> why), so that
    one broken task among many is reported instead of stopping the rest. A reference that names
    nothing, or two tasks with one id, raises ``TaskNotFoundError``.
    """
    tasks: dict[str, Task] = {}
    broken: dict[str, str] = {}

    def add(task: Task) -> None:
        known = tasks.get(task.full_id)
        if known is not None and known.path != task.path:
            raise TaskNotFoundError(
                f"two tasks have the id {task.full_id}: {known.path or 'registered'} and {task.path or 'registered'}; "
                "give them distinct ids (task.toml's id, or the folder's name)"
            )
        tasks[task.full_id] = task

    for ref in refs:
        path = Path(ref)
        if path.is_dir():
            dirs = [path] if (path / "task.toml").is_file() else _task_dirs(path)
            if not dirs:
                raise TaskNotFoundError(f"{path}: no task.toml in it or below it; a task is a directory holding one")
            for folder in dirs:
                try:
                    task = load_task(folder)
                except AgentEnvsError as exc:
                    broken[str(folder.resolve())] = str(exc)
                    continue
                add(task)
        elif path.exists():
            raise TaskNotFoundError(f"{path}: a file; name a task directory (the one holding task.toml)")
        else:
            try:
                add(get_task(str(ref)))
            except TaskNotFoundError as exc:
                raise TaskNotFoundError(
                    f"{ref}: not a task directory, a folder of them, or a registered task id ({exc})"
                ) from None
    return list(tasks.values()), broken
