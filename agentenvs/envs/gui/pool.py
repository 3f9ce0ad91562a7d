"""A warm pool of desktops, each already set up for the task, so that a reset is a swap.

A used desktop is never reused: the episode ends by killing every process
in it (the agent's, the apps', the daemon's), and the agent may have been
root in it through sudo. So the layer that makes a reset cheap is ahead of
time: a background worker starts a new container, its desktop, and the
task's config steps (files downloaded, apps opened with fresh profiles)
while the current episode runs; ``take`` hands it over. Desktops for a task
the env no longer runs are closed, and a warm start that failed is retried
in the foreground, where its error is reported.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from agentenvs.envs.gui.desktop import Desktop

Build = Callable[[], Desktop]


def _close_when_done(future: Future[Desktop]) -> None:
    def close(done: Future[Desktop]) -> None:
        if not done.cancelled() and done.exception() is None:
            done.result().close()

    future.add_done_callback(close)


class WarmPool:
    """``size`` desktops kept ready per task key; ``size=0`` builds every desktop on demand."""

    def __init__(self, size: int = 0):
        self.size = max(0, size)
        self._lock = threading.Lock()
        self._ready: dict[str, deque[Future[Desktop]]] = {}
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agentenvs-gui-pool") if size else None
        self._closing: list[threading.Thread] = []

    def discard(self, desktop: Desktop) -> None:
        """Close a used desktop; with a pool, in the background, so that the reset does not wait for it."""
        if self._executor is None:
            desktop.close()
            return
        closer = threading.Thread(target=desktop.close, name="agentenvs-gui-close", daemon=True)
        closer.start()
        self._closing = [t for t in self._closing if t.is_alive()] + [closer]

    def take(self, key: str, build: Build) -> Desktop:
        """A desktop for ``key``: a warm one if there is one, else built now; the pool refills behind it."""
        if self._executor is None:
            return build()
        with self._lock:
            for other in [k for k in self._ready if k != key]:
                for future in self._ready.pop(other):
                    _close_when_done(future)
            queue = self._ready.setdefault(key, deque())
            warm = queue.popleft() if queue else None
            while len(queue) < self.size:
                queue.append(self._executor.submit(build))
        if warm is not None:
            try:
                return warm.result()
            except Exception:  # noqa: BLE001 - retried below, where a lasting failure surfaces
                pass
        return build()

    def wait(self, key: str, timeout: float | None = None) -> None:
        """Block until the desktops being prepared for ``key`` are ready (an episode usually outlasts this)."""
        with self._lock:
            pending = list(self._ready.get(key, ()))
        for future in pending:
            try:
                future.result(timeout)
            except Exception:  # noqa: BLE001 - take() retries a failed start in the foreground
                pass

    def close(self) -> None:
        """Close every warm desktop, waiting for the one being built."""
        with self._lock:
            pending = [f for queue in self._ready.values() for f in queue]
            self._ready.clear()
        for future in pending:
            if not future.cancel():
                _close_when_done(future)
        if self._executor is not None:
            self._executor.shutdown(wait=True)
        for closer in self._closing:
            closer.join()
