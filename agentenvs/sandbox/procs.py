"""Processes on this host, read from /proc: children, descendants, sessions, and killing trees.

Shared by the local shell transport, the namespace holder, capped command
execution and the Docker exec transport; nothing here knows about shells.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterable, Sequence


def proc_children(pid: int) -> list[int]:
    """Direct children of ``pid`` (all its threads), from /proc."""
    kids: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return kids
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                kids.extend(int(x) for x in f.read().split())
        except OSError:
            continue
    return kids


def proc_descendants(pid: int) -> list[int]:
    """``pid``'s descendants, breadth first (orphans reparented inside a pid namespace stay in it)."""
    found: list[int] = []
    frontier = [pid]
    while frontier:
        nxt: list[int] = []
        for p in frontier:
            nxt.extend(proc_children(p))
        found.extend(nxt)
        frontier = nxt
    return found


def session_members(sid: int, pids: Sequence[int] | None = None) -> list[int]:
    """Live processes (of ``pids``, or of the whole host) whose session is ``sid``.

    A sandbox's commands run in shared namespaces, where an orphan is adopted by
    the namespace's init and leaves its parent's tree, but it keeps its session.
    """
    found: list[int] = []
    for pid in pids if pids is not None else (int(p) for p in os.listdir("/proc") if p.isdigit()):
        fields = _stat_fields(pid)
        if fields is not None and fields[0] not in "ZX" and int(fields[3]) == sid:
            found.append(pid)
    return found


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (state first), or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            raw = f.read()
    except OSError:
        return None
    return raw[raw.rfind(")") + 2 :].split()


def proc_stat(pid: int) -> tuple[str, str, int] | None:
    """``(comm, state, pgid)`` of a process, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            raw = f.read()
    except OSError:
        return None
    comm = raw[raw.find("(") + 1 : raw.rfind(")")]
    fields = raw[raw.rfind(")") + 2 :].split()
    return comm, fields[0], int(fields[2])


def proc_exiting(pid: int) -> bool:
    """``pid`` is gone or on its way out (``PF_EXITING``: killed, still ending its children or itself)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            raw = f.read()
    except OSError:
        return True
    fields = raw[raw.rfind(")") + 2 :].split()
    return fields[0] in "ZX" or bool(int(fields[6]) & 0x4)


def proc_start_time(pid: int) -> str | None:
    """When ``pid`` started, in clock ticks since boot (tells a process from a later one with its pid)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            raw = f.read()
    except OSError:
        return None
    return raw[raw.rfind(")") + 2 :].split()[19]


def kill_tree(pid: int) -> list[int]:
    """SIGKILL ``pid`` and its descendants; returns the pids it signalled."""
    tree = [pid, *proc_descendants(pid)]
    for p in tree:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return tree


def wait_gone(pids: Sequence[int], timeout: float) -> None:
    """Wait until none of ``pids`` is alive (zombies count as gone)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all((st := proc_stat(p)) is None or st[1] in "ZX" for p in pids):
            return
        time.sleep(0.01)


def cpu_sample(pids: Iterable[int]) -> tuple[dict[int, int], bool]:
    """User plus system CPU time, in clock ticks, of each process of ``pids`` still alive, and
    whether any of them is running or waiting for the CPU or the disk (state R or D)."""
    used: dict[int, int] = {}
    running = False
    for pid in pids:
        fields = _stat_fields(pid)
        if fields is None:
            continue
        used[pid] = int(fields[11]) + int(fields[12])
        running = running or fields[0] in "RD"
    return used, running


def wait_idle(pids: Callable[[], Iterable[int]], timeout: float, window: float = 0.25, quiet_windows: int = 2) -> bool:
    """Wait until no process ``pids()`` lists runs, waits for the CPU or the disk, or uses more
    than a clock tick, for ``quiet_windows`` windows in a row (sampled every 50 ms); give up after
    ``timeout`` seconds. Return whether they went idle.

    For "the app has finished what it was doing" (a save, a render) where a fixed sleep is
    either too long or, on a loaded machine, too short. The run state counts as well as the
    CPU time because under load a busy process gets little CPU but stays runnable. A process
    that appears mid-window counts with all its CPU time.
    """
    deadline = time.monotonic() + timeout
    samples = max(1, round(window / 0.05))
    before, _ = cpu_sample(pids())
    quiet = 0
    while quiet < quiet_windows:
        busy = False
        for _ in range(samples):
            if time.monotonic() >= deadline:
                return False
            time.sleep(window / samples)
            after, running = cpu_sample(pids())
            busy = busy or running
        used = sum(ticks - before.get(pid, 0) for pid, ticks in after.items())
        quiet = 0 if busy or used > 1 else quiet + 1
        before = after
    return True
