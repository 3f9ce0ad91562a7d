"""The run directory: what a run writes, and how it is read back.

    run.json                              config, versions, tasks (with content hashes), policy
    episodes.jsonl                        one line per finished episode (appended, fsynced)
    superseded.jsonl                      infra episode lines that ``--retry-infra`` took out to replay
    trajectories/<task>/<trial>/steps.jsonl  one line per step (+ images/ as PNG)
    summary.json                          the scores (scoring.py)
    report.html                           the report (report.py)

A line of ``episodes.jsonl`` is written whole and flushed at once (and
fsynced soon after), so a killed run leaves at most one partial trailing
line; readers ignore it and ``repair`` cuts it off before a resumed run
appends. docs/run-format.md
describes every field.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path
from typing import Any

import numpy as np

RUN_FORMAT_VERSION = 1


def episode_key(task_id: str, trial: int) -> tuple[str, int]:
    return (task_id, int(trial))


def write_json_atomic(path: Path, data: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2, ensure_ascii=False, default=str)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


class RunDir:
    """A run directory on disk."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    @property
    def run_json(self) -> Path:
        return self.path / "run.json"

    @property
    def episodes_jsonl(self) -> Path:
        return self.path / "episodes.jsonl"

    @property
    def superseded_jsonl(self) -> Path:
        return self.path / "superseded.jsonl"

    @property
    def summary_json(self) -> Path:
        return self.path / "summary.json"

    @property
    def report_html(self) -> Path:
        return self.path / "report.html"

    def exists(self) -> bool:
        return self.run_json.is_file()

    def trajectory_dir(self, task_id: str, trial: int) -> Path:
        return self.path / "trajectories" / task_id / str(trial)

    def read_run(self) -> dict[str, Any]:
        if not self.run_json.is_file():
            raise FileNotFoundError(
                f"{self.path} is not a run directory (no run.json); run `agentenvs run --out {self.path}`"
            )
        return json.loads(self.run_json.read_text(encoding="utf-8"))

    def write_run(self, data: dict[str, Any]) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.run_json, data)

    def read_episodes(self) -> list[dict[str, Any]]:
        """Every complete episode line; a partial or corrupt trailing line is ignored."""
        if not self.episodes_jsonl.is_file():
            return []
        episodes: list[dict[str, Any]] = []
        lines = self.episodes_jsonl.read_bytes().split(b"\n")
        for index, line in enumerate(lines):
            if not line.strip():
                continue
            last = index == len(lines) - 1  # no newline after it: the write was cut short
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                if last:
                    break
                raise ValueError(
                    f"{self.episodes_jsonl}:{index + 1} is corrupt (not JSON); fix or delete that line"
                ) from None
            if last:
                break
            episodes.append(record)
        return episodes

    def repair(self) -> int:
        """Cut a partial trailing line off ``episodes.jsonl``; returns the bytes removed."""
        if not self.episodes_jsonl.is_file():
            return 0
        data = self.episodes_jsonl.read_bytes()
        keep = data.rfind(b"\n") + 1
        if keep == len(data):
            return 0
        with open(self.episodes_jsonl, "r+b") as fh:
            fh.truncate(keep)
            fh.flush()
            os.fsync(fh.fileno())
        return len(data) - keep

    def drop_infra(self) -> int:
        """Take the episodes that ended as infra out of ``episodes.jsonl``, so a resumed run plays them again.

        Their lines go to ``superseded.jsonl`` first (appended and fsynced: nothing
        recorded is lost); then ``episodes.jsonl`` is replaced atomically by every
        other line, byte for byte and in order. A kill in between leaves the infra
        lines in both files, and a second ``--retry-infra`` simply does it again.
        Returns how many episodes were taken out.
        """
        self.repair()
        if not self.episodes_jsonl.is_file():
            return 0
        keep: list[bytes] = []
        dropped: list[bytes] = []
        for line in self.episodes_jsonl.read_bytes().splitlines(keepends=True):
            if line.strip():
                (dropped if json.loads(line).get("status") == "infra" else keep).append(line)
        if not dropped:
            return 0
        with open(self.superseded_jsonl, "ab") as fh:
            fh.write(b"".join(dropped))
            fh.flush()
            os.fsync(fh.fileno())
        tmp = self.episodes_jsonl.with_name(self.episodes_jsonl.name + ".tmp")
        with open(tmp, "wb") as fh:
            fh.write(b"".join(keep))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.episodes_jsonl)
        return len(dropped)

    def append_episode(self, record: dict[str, Any]) -> None:
        """Append one episode line and fsync it (for one-off writers; a run uses ``EpisodeLog``)."""
        with EpisodeLog(self.episodes_jsonl) as log:
            log.append(record)

    def read_steps(self, task_id: str, trial: int) -> list[dict[str, Any]]:
        path = self.trajectory_dir(task_id, trial) / "steps.jsonl"
        if not path.is_file():
            return []
        steps = []
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                steps.append(json.loads(line))
            except json.JSONDecodeError:
                break
        return steps


class EpisodeLog:
    """``episodes.jsonl`` open for appending.

    ``append`` writes the whole line and flushes it to the OS at once, so a
    killed process loses nothing; ``sync`` (fsync) makes it survive an OS
    crash too, and is cheap to call from a background thread now and then.
    """

    def __init__(self, path: Path):
        self._fh = open(path, "ab")
        self._dirty = False
        self._lock = threading.Lock()

    def append(self, record: dict[str, Any]) -> None:
        """Safe to call from several threads: each line goes out with one write."""
        line = encode_line(record).encode("utf-8")
        with self._lock:
            self._fh.write(line)
            self._fh.flush()
            self._dirty = True

    def sync(self) -> None:
        with self._lock:
            if self._dirty and not self._fh.closed:
                self._dirty = False
                os.fsync(self._fh.fileno())

    def close(self) -> None:
        with self._lock:
            if not self._fh.closed:
                self._fh.flush()
                os.fsync(self._fh.fileno())
                self._fh.close()

    def __enter__(self) -> EpisodeLog:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class TrajectoryWriter:
    """Writes one episode's ``steps.jsonl`` and images into a fresh directory.

    Lines are buffered and written ``FLUSH_LINES`` at a time, with one
    write each, and the rest at ``close``: the episode's line in
    ``episodes.jsonl`` is the commit point, written after ``close``.
    """

    FLUSH_LINES = 64

    def __init__(self, directory: Path, *, save_images: bool = True):
        self.directory = directory
        self.save_images = save_images
        self._lines: list[str] = []
        self._fd: int | None = None
        self._closed = False

    def _open(self) -> int:
        path = str(self.directory)
        try:
            os.mkdir(path)
        except FileExistsError:
            shutil.rmtree(path)
            os.mkdir(path)
        except FileNotFoundError:
            os.makedirs(path)
        self._fd = os.open(os.path.join(path, "steps.jsonl"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        return self._fd

    def write(self, record: dict[str, Any], images: dict[str, bytes]) -> None:
        if images and self.save_images:
            if self._fd is None:
                self._open()
            (self.directory / "images").mkdir(exist_ok=True)
            paths = {}
            for key, png in images.items():
                rel = f"images/step_{record['step']:04d}_{key}.png"
                (self.directory / rel).write_bytes(png)
                paths[key] = rel
            record["images"] = paths
        self._lines.append(encode_line(record))
        if len(self._lines) >= self.FLUSH_LINES:
            self.flush()

    def write_files(self, folder: str, files: dict[str, bytes]) -> list[str]:
        """Write ``files`` (relative paths) under ``folder``; paths that would leave it are skipped.
        Returns what was written, relative to the trajectory directory."""
        written = []
        base = (self.directory / folder).resolve()
        for rel, data in sorted(files.items()):
            target = (base / rel).resolve()
            if base not in target.parents:
                continue
            if self._fd is None:
                self._open()
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            written.append(str(target.relative_to(self.directory.resolve())))
        return written

    def flush(self) -> None:
        """Write the buffered lines (creating the directory on first use)."""
        fd = self._open() if self._fd is None else self._fd
        if self._lines:
            data = "".join(self._lines).encode("utf-8")
            self._lines.clear()
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]

    def close(self) -> None:
        """Written out, not fsynced: the episode's line in ``episodes.jsonl`` is the commit point."""
        if self._closed:
            return
        self._closed = True
        try:
            self.flush()
        finally:
            if self._fd is not None:
                os.close(self._fd)

    def discard(self) -> None:
        """Drop what is buffered and write nothing more (an abandoned attempt)."""
        self._closed = True
        self._lines.clear()
        if self._fd is not None:
            os.close(self._fd)


def _json_default(value: Any) -> Any:
    """Numpy values as Python values; anything else unknown as its ``str``."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)


_LINE = json.JSONEncoder(ensure_ascii=False, check_circular=False, default=_json_default)


def encode_line(record: dict[str, Any]) -> str:
    """One JSON line (with its newline), fast: one shared C encoder, no circularity check."""
    try:
        return _LINE.encode(record) + "\n"
    except (TypeError, ValueError, RecursionError):  # keys that are not strings, or a cycle: the slow, forgiving way
        return json.dumps(_plain(record), ensure_ascii=False, default=_json_default) + "\n"


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
