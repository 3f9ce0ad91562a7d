"""Per-sandbox cgroups (v1: pids, memory, cpu, freezer) for the local backend.

Each sandbox gets ``<controller mount><this process's cgroup>/agentenvs/<name>``
in every hierarchy, so its limits nest under whatever already limits us.
Processes join by writing their pid into ``cgroup.procs`` before they exec
(see :meth:`Cgroups.join_prefix`), so everything they fork is counted, and
:meth:`Cgroups.kill_all` freezes the group before killing it, which makes even
a fork bomb die in one pass.
"""

from __future__ import annotations

import errno
import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CONTROLLERS = ("pids", "memory", "cpu", "freezer")
_JOIN = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'


class CgroupsUnavailable(OSError):
    """This host has no writable cgroup v1 hierarchy for the controllers we need."""


def _mounts() -> dict[str, Path]:
    found: dict[str, Path] = {}
    with open("/proc/self/mounts") as f:
        for line in f:
            _, where, kind, opts, *_ = line.split()
            if kind != "cgroup":
                continue
            for opt in opts.split(","):
                if opt in CONTROLLERS:
                    found[opt] = Path(where)
    return found


def _own_paths() -> dict[str, str]:
    paths: dict[str, str] = {}
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, names, path = line.rstrip("\n").split(":", 2)
            for name in names.split(","):
                paths[name] = path
    return paths


class Cgroups:
    """One sandbox's cgroups. Create with :meth:`create`; reopen a leftover with ``Cgroups(paths)``."""

    def __init__(self, paths: dict[str, Path]):
        self.paths = {name: Path(p) for name, p in paths.items()}

    @classmethod
    def create(cls, name: str, *, pids: int, memory_mb: int, cpus: float) -> Cgroups:
        """Make the cgroups and set the limits; raises CgroupsUnavailable if any step is refused."""
        mounts, own = _mounts(), _own_paths()
        missing = [c for c in ("pids", "memory", "freezer") if c not in mounts]
        if missing:
            raise CgroupsUnavailable(f"no cgroup v1 hierarchy for {', '.join(missing)}")
        paths = {c: mounts[c] / own.get(c, "/").lstrip("/") / "agentenvs" / name for c in mounts}
        groups = cls(paths)
        try:
            for path in paths.values():
                path.mkdir(parents=True, exist_ok=True)
            groups._write("pids", "pids.max", str(pids))
            limit = str(memory_mb * 1024 * 1024)
            groups._write("memory", "memory.limit_in_bytes", limit)
            if (paths["memory"] / "memory.memsw.limit_in_bytes").exists():
                groups._write("memory", "memory.memsw.limit_in_bytes", limit)
            if "cpu" in paths:
                period = 100_000
                groups._write("cpu", "cpu.cfs_period_us", str(period))
                groups._write("cpu", "cpu.cfs_quota_us", str(max(int(cpus * period), 1000)))
        except OSError as exc:
            groups.remove()
            raise CgroupsUnavailable(f"cannot set up cgroups under {paths['pids'].parent}: {exc}") from exc
        return groups

    def _write(self, controller: str, name: str, value: str) -> None:
        (self.paths[controller] / name).write_text(value)

    def join_prefix(self, skip: tuple[str, ...] = ()) -> list[str]:
        """An argv prefix that moves the command into these cgroups (but those in ``skip``), then execs it."""
        procs = [str(p / "cgroup.procs") for name, p in self.paths.items() if name not in skip]
        return ["/bin/sh", "-c", _JOIN, "sh", *procs, "--"]

    def pids(self) -> list[int]:
        """Host pids of every process in the sandbox."""
        try:
            return [int(x) for x in (self.paths["pids"] / "cgroup.procs").read_text().split()]
        except OSError:
            return []

    def pids_current(self) -> int:
        try:
            return int((self.paths["pids"] / "pids.current").read_text())
        except OSError:
            return 0

    def pid_limit_hits(self) -> int:
        """How many forks the pids limit has refused so far."""
        try:
            for line in (self.paths["pids"] / "pids.events").read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "max":
                    return int(value)
        except (OSError, ValueError):
            pass
        return 0

    @contextmanager
    def frozen(self, timeout: float = 5.0) -> Iterator[bool]:
        """Stop every process in the group (none can fork) for the duration of the block.

        Yields whether the group did freeze (False without a freezer, or past ``timeout``).
        """
        freezer = self.paths.get("freezer")
        deadline = time.monotonic() + timeout
        frozen = freezer is not None and self._freeze(freezer, "FROZEN", deadline)
        try:
            yield frozen
        finally:
            if frozen:
                self._freeze(freezer, "THAWED", time.monotonic() + timeout)

    def kill_all(self, timeout: float = 10.0) -> None:
        """Freeze, SIGKILL everything, thaw, and wait until the group is empty."""
        deadline = time.monotonic() + timeout
        while self.pids() and time.monotonic() < deadline:
            with self.frozen():
                for pid in self.pids():
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
            settle = time.monotonic() + 0.5
            while self.pids() and time.monotonic() < min(settle, deadline):
                time.sleep(0.005)

    @staticmethod
    def _freeze(freezer: Path, state: str, deadline: float) -> bool:
        try:
            (freezer / "freezer.state").write_text(state)
            while (freezer / "freezer.state").read_text().strip() != state:
                if time.monotonic() > deadline:
                    return False
                time.sleep(0.002)
        except OSError:
            return False
        return True

    def remove(self) -> None:
        """Remove the (empty) cgroups; a group still dying is retried briefly."""
        for path in self.paths.values():
            deadline = time.monotonic() + 5.0
            while True:
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError as exc:
                    if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                        break
                    time.sleep(0.01)
