"""Site forks: an episode's site databases backed up to files on the host, for branching rollouts.

A fork is site name -> a SQLite file on the host, the same value on both backends
(``docker_env.py`` carries the files out of its container and back in). An env keeps
the forks it makes in a directory of its own, so they live until it closes; a reset
with ``options={"fork": ...}`` starts the task's sites from those files.
"""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Iterable
from pathlib import Path

from agentenvs.core.task import Task
from agentenvs.envs.web.sites.process import SiteProcess


class SiteForks:
    """An env's forks: where they live on the host, and the one the next reset starts from."""

    def __init__(self) -> None:
        #: The fork the next episode starts from (a reset's ``options["fork"]``): site name -> file.
        self.pending: dict[str, str] = {}
        self._dir: tempfile.TemporaryDirectory[str] | None = None

    def home(self) -> Path:
        """Where this env keeps its forks on the host: they live until it closes."""
        if self._dir is None:
            self._dir = tempfile.TemporaryDirectory(prefix="agentenvs-web-fork-")
        return Path(self._dir.name)

    def for_task(self, task: Task) -> dict[str, str]:
        """The pending fork, checked against the task: a site it lacks, or a file gone, is the caller's error."""
        sites = set(task.params.get("sites", []))
        for name, path in self.pending.items():
            if name not in sites:
                raise ValueError(f"the fork has a {name!r} database, but {task.full_id} has no such site")
            if not Path(path).is_file():
                raise ValueError(f"the fork's {name} database {path} is gone: a fork lives until its env closes")
        return dict(self.pending)

    def close(self) -> None:
        """Remove the env's forks, files and all: a fork lives until its env closes."""
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None


def fork_into(sites: Iterable[SiteProcess], directory: Path) -> dict[str, str]:
    """Back up each site's episode database into ``directory``: site name -> file."""
    forked = {}
    for site in sites:
        dest = directory / f"{site.name}-{uuid.uuid4().hex}.sqlite"
        site.fork_to(dest)
        forked[site.name] = str(dest)
    return forked
