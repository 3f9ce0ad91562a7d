"""The run directory: what a run writes, and how it is read back.

    run.json                              config, versions, tasks (with content hashes), policy
    episodes.jsonl                        one line per finished episode (appended, fsynced)
    superseded.jsonl                      infra episode lines that ``--retry-infra`` took out to replay
    trajectories/steps-<n>.jsonl          each lane's episodes' steps, one block per episode (trajectory.py)
    trajectories/<task>/<trial>/          the episode's images/ and artifacts/, when it has any
    summary.json                          the scores (scoring.py)
    report.html                           the report (report.py)

A line of ``episodes.jsonl`` is written whole and flushed at once (and
fsynced soon after), so a killed run leaves at most one partial trailing
line; readers ignore it and ``repair`` cuts it off before a resumed run
appends. Runs of format 1 kept each episode's steps in
``trajectories/<task>/<trial>/steps.jsonl``; they still open. docs/run-format.md
describes every field.
"""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path
from typing import Any

import numpy as np
import orjson

RUN_FORMAT_VERSION = 2

#: What an episode line's ``steps_at["file"]`` may name; anything else (a bundle is untrusted) is refused.
STEPS_FILE = re.compile(r"trajectories/steps-[0-9]{1,9}\.jsonl")


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
        self._records: tuple[tuple[int, int], dict[tuple[str, int], dict[str, Any]]] | None = None

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
        """The steps of the episode's last recorded line (a format-1 run's directory if it has none)."""
        record = self._latest_records().get(episode_key(task_id, trial))
        return self.steps_of(record or {"task_id": task_id, "trial": trial})

    def steps_of(self, record: dict[str, Any]) -> list[dict[str, Any]]:
        """The steps an episode line points at: its block of a lane's steps file, or its ``steps.jsonl``."""
        at = record.get("steps_at")
        if at is None:  # format 1: its task and trial's folder, never a path the line names (bundles are untrusted)
            path = self.trajectory_dir(record["task_id"], record["trial"]) / "steps.jsonl"
            data = path.read_bytes() if path.is_file() else b""
        else:
            name, offset, length = _steps_at(at)
            with open(self.path / name, "rb") as fh:
                fh.seek(offset)
                data = fh.read(length)
        steps = []
        for line in data.splitlines():
            try:
                steps.append(json.loads(line))
            except json.JSONDecodeError:
                break
        return steps

    def _latest_records(self) -> dict[tuple[str, int], dict[str, Any]]:
        """Each episode's last line, read again only when ``episodes.jsonl`` changed."""
        try:
            stat = self.episodes_jsonl.stat()
            stamp = (stat.st_size, stat.st_mtime_ns)
        except FileNotFoundError:
            stamp = (0, 0)
        cached = self._records
        if cached is None or cached[0] != stamp:
            cached = self._records = (stamp, {episode_key(e["task_id"], e["trial"]): e for e in self.read_episodes()})
        return cached[1]


def _steps_at(at: Any) -> tuple[str, int, int]:
    """``steps_at`` checked: a lane's steps file of this run and a byte range, or ``ValueError``."""
    try:
        name, offset, length = at["file"], at["offset"], at["length"]
    except (KeyError, TypeError):
        raise ValueError(f"steps_at must have file, offset and length: {at!r}") from None
    if not isinstance(name, str) or not STEPS_FILE.fullmatch(name):
        raise ValueError(f"steps_at names {name!r}, not a steps file of the run")
    if not all(type(v) is int and v >= 0 for v in (offset, length)):
        raise ValueError(f"steps_at's offset and length must be whole numbers: {at!r}")
    return name, offset, length


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
        line = encode_line(record)
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


def _json_default(value: Any) -> Any:
    """Numpy values as Python values; anything else unknown as its ``str``."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)


_LINE_OPTIONS = orjson.OPT_APPEND_NEWLINE | orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS


def encode_line(record: dict[str, Any]) -> bytes:
    """One JSON line (with its newline) in UTF-8. orjson, because the standard library's encoder cost more
    than a fast env's step; what orjson refuses (an integer past 64 bits, a tuple key) goes the slow way."""
    try:
        return orjson.dumps(record, default=_json_default, option=_LINE_OPTIONS)
    except (orjson.JSONEncodeError, TypeError):
        return (json.dumps(_plain(record), ensure_ascii=False, default=_json_default) + "\n").encode()


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
