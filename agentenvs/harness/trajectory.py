"""Writing trajectories: each lane appends the steps of the episodes it plays to one file of its own.

A directory and a file per episode cost more than a fast env's whole episode
(mkdir and open are most of it), so a lane writes every episode's step lines
as one contiguous block of ``trajectories/steps-<n>.jsonl``, and the
episode's line in ``episodes.jsonl`` says where the block is (``steps_at``).
Images and artifacts still go under ``trajectories/<task>/<trial>/``, a
directory made only when an episode has some. Readers: ``RunDir.steps_of``.
"""

from __future__ import annotations

import itertools
import os
import shutil
from pathlib import Path
from typing import Any

from agentenvs.harness.rundir import encode_line


class StepsFile:
    """One lane's steps file, opened on first use under a name no other lane (of this or an earlier run) holds.

    Only its lane's thread writes it, one episode at a time, so an episode's
    lines are one block; ``truncate`` takes back an abandoned attempt's.
    """

    def __init__(self, run_path: Path, numbers: itertools.count[int]):
        self.run_path = run_path
        self._numbers = numbers
        self._fd: int | None = None
        self.name = ""
        self.size = 0

    def _open(self) -> int:
        folder = self.run_path / "trajectories"
        folder.mkdir(parents=True, exist_ok=True)
        while True:
            name = f"trajectories/steps-{next(self._numbers)}.jsonl"
            try:
                self._fd = os.open(self.run_path / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
            except FileExistsError:  # a resumed run's earlier lanes hold it
                continue
            self.name = name
            return self._fd

    def append(self, data: bytes) -> None:
        fd = self._fd if self._fd is not None else self._open()
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        self.size += len(data)

    def truncate(self, size: int) -> None:
        """Cut the file back to ``size`` bytes (the start of an attempt that is not kept)."""
        if self._fd is not None and size < self.size:
            os.ftruncate(self._fd, size)
            self.size = size

    def sync(self) -> None:
        if self._fd is not None:
            os.fsync(self._fd)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class TrajectoryWriter:
    """One attempt at an episode: its step lines into the lane's ``StepsFile``, its images and artifacts
    into ``folder`` of the run (made on first use, emptied if an earlier attempt left it).

    Lines are buffered and appended ``FLUSH_LINES`` at a time, with one write
    each, and the rest at ``close``: the episode's line in ``episodes.jsonl``
    is the commit point, written after ``close``.
    """

    FLUSH_LINES = 64

    def __init__(self, folder: str, steps: StepsFile, *, save_images: bool = True):
        self.folder = folder
        self.save_images = save_images
        self._steps = steps
        self._start = steps.size
        self._lines: list[bytes] = []
        self._made_directory = False
        self._closed = False

    @property
    def directory(self) -> Path:
        return self._steps.run_path / self.folder

    def _folder(self, name: str) -> Path:
        directory = self.directory
        if not self._made_directory:
            self._made_directory = True
            if directory.exists():
                shutil.rmtree(directory)
            directory.mkdir(parents=True)
        folder = directory / name
        folder.mkdir(exist_ok=True)
        return folder

    def write(self, record: dict[str, Any], images: dict[str, bytes]) -> None:
        if images and self.save_images:
            folder = self._folder("images")
            paths = {}
            for key, png in images.items():
                name = f"step_{record['step']:04d}_{key}.png"
                (folder / name).write_bytes(png)
                paths[key] = f"images/{name}"
            record["images"] = paths
        self._lines.append(encode_line(record))
        if len(self._lines) >= self.FLUSH_LINES:
            self.flush()

    def write_files(self, folder: str, files: dict[str, bytes]) -> list[str]:
        """Write ``files`` (relative paths) under ``folder``; paths that would leave it are skipped.
        Returns what was written, relative to the trajectory directory."""
        if not files:
            return []
        written = []
        base = self._folder(folder).resolve()
        root = self.directory.resolve()
        for rel, data in sorted(files.items()):
            target = (base / rel).resolve()
            if base not in target.parents:
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            written.append(str(target.relative_to(root)))
        return written

    def flush(self) -> None:
        if self._lines:
            data = b"".join(self._lines)
            self._lines.clear()
            self._steps.append(data)

    def close(self) -> dict[str, Any] | None:
        """Write out what is buffered (not fsynced: the episode's line is the commit point);
        returns the episode's ``steps_at``, ``{"file", "offset", "length"}``, or None if it wrote no step."""
        if not self._closed:
            self._closed = True
            self.flush()
        length = self._steps.size - self._start
        return {"file": self._steps.name, "offset": self._start, "length": length} if length else None

    def discard(self) -> None:
        """Take back what this attempt wrote to the steps file, and write nothing more (an abandoned attempt)."""
        self._closed = True
        self._lines.clear()
        self._steps.truncate(self._start)
