"""A container's processes seen from the host, through its cgroup.

They can be counted and killed without forking inside the container, where a
fork bomb may have used up the pids limit.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

from agentenvs.sandbox.cgroups import Cgroups
from agentenvs.sandbox.procs import wait_gone

CGROUP_ROOT = Path("/sys/fs/cgroup")


class ContainerProcesses:
    """A container's processes seen from the host through its cgroup: counted and killed with no fork inside.

    Every ``docker exec`` starts its own session, and the container's own
    processes (``docker-init`` and its command) are in the session of its
    init, so "what the agent started" is everything outside that session.
    ``shells`` holds the host pids of the sandbox's persistent shells, which
    survive a storm's end. Create with :meth:`open`.
    """

    def __init__(self, container_id: str, init_pid: int, cgroups: Cgroups):
        self.container = container_id
        self.init_pid = init_pid
        self.cgroups = cgroups
        self.shells: set[int] = set()
        self._hits = cgroups.pid_limit_hits()
        self._note = ""
        self._lock = threading.Lock()

    @classmethod
    def open(cls, api: Any, container_id: str) -> ContainerProcesses | None:
        """The container's cgroup (v1 ``pids``/``freezer`` or v2), or None if this host cannot read it."""
        try:
            init_pid = int(api.inspect_container(container_id)["State"]["Pid"])
            lines = Path(f"/proc/{init_pid}/cgroup").read_text().splitlines()
        except Exception:
            return None
        paths: dict[str, Path] = {}
        unified = None
        for line in lines:
            _, names, path = line.split(":", 2)
            for name in names.split(","):
                if name in ("pids", "freezer"):
                    paths[name] = CGROUP_ROOT / name / path.lstrip("/")
            if names == "":
                unified = CGROUP_ROOT / path.lstrip("/")
        if "pids" not in paths and unified is not None:
            paths = {"pids": unified}
        if "pids" not in paths or not (paths["pids"] / "pids.events").is_file():
            return None
        return cls(container_id, init_pid, Cgroups(paths))

    def host_pid(self, ns_pid: int) -> int | None:
        """The host pid of the container's process ``ns_pid`` (from ``NSpid`` in /proc/<pid>/status)."""
        for pid in self.cgroups.pids():
            try:
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            for line in status.splitlines():
                if line.startswith("NSpid:") and line.split()[-1] == str(ns_pid):
                    return pid
        return None

    def end_storm(self) -> bool:
        """If the pids limit refused a fork since the last call, kill everything the agent started.

        Returns whether it did; the note for the agent waits in :meth:`take_note`.
        """
        with self._lock:
            hits = self.cgroups.pid_limit_hits()
            if hits == self._hits:
                return False
            killed = self._kill(lambda pid, sid, _start: sid != self.init_pid and pid not in self.shells)
            self._hits = self.cgroups.pid_limit_hits()
            try:
                limit = (self.cgroups.paths["pids"] / "pids.max").read_text().strip()
            except OSError:
                limit = "?"
            self._note = (
                f"[the container reached its limit of {limit} processes: {killed} processes were "
                "killed, background jobs included]\n"
            )
            return True

    def add_note(self, note: str) -> None:
        """Something the agent should read after its current command (see :meth:`take_note`)."""
        with self._lock:
            self._note += note

    def take_note(self) -> str:
        with self._lock:
            note, self._note = self._note, ""
            return note

    def kill_all_but_init(self) -> int:
        """SIGKILL every process of the container except its init (the keeper).

        The keeper's own ``sleep`` is killed too, and the keeper starts another at once; a round that
        finds nothing but processes of the keeper's session (which only the keeper can start) ends the
        loop, which otherwise chased the new ``sleep`` until its deadline (seen: 0.3-10 s a call).
        """
        with self._lock:
            return self._kill(lambda pid, _sid, _start: pid != self.init_pid, last=lambda sid: sid == self.init_pid)

    def kill_session(self, leader: int, *, since_ticks: int, leader_too: bool = False) -> int:
        """SIGKILL the processes of ``leader``'s session started at or after ``since_ticks`` (clock ticks since boot)."""
        with self._lock:
            return self._kill(
                lambda pid, sid, start: sid == leader and start >= since_ticks and (leader_too or pid != leader)
            )

    def _kill(self, chosen: Any, timeout: float = 10.0, last: Any = None) -> int:
        """Freeze the cgroup, SIGKILL the processes ``chosen(pid, sid, start)`` picks, thaw, wait; repeat until
        none, or until every process a round killed is one that ``last(sid)`` says is respawned by design."""
        deadline = time.monotonic() + timeout
        killed: set[int] = set()
        while time.monotonic() < deadline:
            with self.cgroups.frozen():
                stats = {pid: st for pid in self.cgroups.pids() if (st := _stat(pid)) and chosen(pid, *st)}
                for pid in stats:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
            if not stats:
                break
            killed.update(stats)
            wait_gone(list(stats), max(min(1.0, deadline - time.monotonic()), 0))
            if last is not None and all(last(sid) for sid, _start in stats.values()):
                break
        return len(killed)


def _stat(pid: int) -> tuple[int, int] | None:
    """``(session, start time in clock ticks)`` of a live process, or None if it is gone or a zombie."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rfind(")") + 2 :].split()
    return None if fields[0] in "ZX" else (int(fields[3]), int(fields[19]))
