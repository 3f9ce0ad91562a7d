"""Each container's disk use held to its ``storage_mb``, measured on the host.

Docker can cap a container's writable layer only on XFS with project quotas
(``--storage-opt size``), which this kind of machine's kernel does not have.
So one host thread measures every watched container's overlay upper
directory (what the container wrote) five times a second, and when a container is
over its limit, kills every process in it: the writer cannot continue, the
files stay for the verifier, and the agent is told. After a kill only growth
well past that point kills again, so the agent can start a shell and delete
files. The bound is the limit plus what a process writes in a fifth of a second.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

INTERVAL_SEC = 0.2


@dataclass
class _Watched:
    upper: Path
    limit: int
    on_exceed: Callable[[int], None]
    #: Use when the watcher last killed; only growth well past it kills again.
    killed_at: int = 0

    @property
    def slack(self) -> int:
        """Growth after a kill that does not count: a new shell, blocks the kernel allocates late."""
        return max(8 << 20, self.limit // 32)


def disk_usage(root: Path) -> int:
    """Bytes allocated under ``root`` (links are not followed)."""
    total = 0
    for here, dirs, files in os.walk(root):
        for name in dirs + files:
            try:
                total += os.lstat(os.path.join(here, name)).st_blocks * 512
            except OSError:
                continue
    return total


class DiskGuard:
    """The process-wide watcher; :func:`disk_guard` returns it."""

    def __init__(self, interval: float = INTERVAL_SEC):
        self._interval = interval
        self._watched: dict[str, _Watched] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def watch(self, key: str, upper: Path, limit_mb: int, on_exceed: Callable[[int], None]) -> None:
        """Watch ``upper``; ``on_exceed(bytes_used)`` runs in the watcher thread when it is over and growing."""
        with self._lock:
            self._watched[key] = _Watched(upper, limit_mb << 20, on_exceed)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="agentenvs-disk-guard", daemon=True)
                self._thread.start()

    def forget(self, key: str) -> None:
        with self._lock:
            self._watched.pop(key, None)

    def check_now(self) -> None:
        """One pass over every watched container (the thread does this on its own; tests call it)."""
        with self._lock:
            items = list(self._watched.items())
        for key, watched in items:
            used = disk_usage(watched.upper)
            if used > watched.limit and used > watched.killed_at + watched.slack:
                with self._lock:
                    still = self._watched.get(key) is watched
                if still:
                    watched.on_exceed(used)
                    watched.killed_at = used

    def _run(self) -> None:
        while True:
            self._wake.wait(self._interval)
            self._wake.clear()
            try:
                self.check_now()
            except Exception:  # noqa: BLE001 - a container removed mid-walk must not stop the watcher
                continue


_guard = DiskGuard()


def disk_guard() -> DiskGuard:
    return _guard
