"""A lane: what a worker thread playing episodes shares with the event loop.

The thread calls the env directly, publishing the call in flight so the
runner's watchdog on the loop can abandon it past its deadline, and runs
the policy's coroutines on the loop. See :mod:`agentenvs.harness.lanes`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from agentenvs.harness.executor import EnvHandle

T = TypeVar("T")


class Abandoned(Exception):
    """The lane was told to stop (the run stopped, or the watchdog gave up on its env call)."""


class Lane:
    """What a worker thread playing episodes shares with the event loop.

    The thread publishes the env call in flight (``call_due``, ``call_what``)
    and checks ``stopping`` between calls; the loop's watchdog reads the
    call, and ``abandon`` makes the thread quit at its next check.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, halt: threading.Event):
        self.loop = loop
        self.halt = halt
        self.abandoned = False
        self.call_due: float | None = None
        self.call_what = ""
        self.call_timeout = 0.0
        self._policy_future: concurrent.futures.Future[Any] | None = None
        #: The runner's episode in hand, taken over by a new lane if this one is abandoned.
        self.job: Any = None
        self._held_slot: threading.Semaphore | None = None
        self._held_handle: EnvHandle | None = None
        self._held_lock = threading.Lock()

    def hold(self, slot: threading.Semaphore | None = None, *, handle: EnvHandle | None = None) -> None:
        """Note a sandbox slot or an env this lane must give back (``release``)."""
        with self._held_lock:
            if slot is not None:
                self._held_slot = slot
            if handle is not None:
                self._held_handle = handle

    def release(self) -> None:
        """Close the env and free the slot, once, whichever thread gets here first."""
        with self._held_lock:
            handle, slot = self._held_handle, self._held_slot
            self._held_handle = self._held_slot = None
        try:
            if handle is not None:
                handle.close_blocking()
        finally:
            if slot is not None:
                slot.release()

    @property
    def stopping(self) -> bool:
        return self.abandoned or self.halt.is_set()

    def env_call(self, timeout: float, what: str, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` under the watchdog; raises ``Abandoned`` if the lane was abandoned meanwhile."""
        self.call_what = what
        self.call_timeout = timeout
        self.call_due = time.monotonic() + timeout
        try:
            return fn(*args)
        finally:
            self.call_due = None
            if self.abandoned:
                raise Abandoned(what)

    def overdue(self) -> str | None:
        """The env call in flight, described, when it has missed its deadline."""
        due = self.call_due
        if due is not None and time.monotonic() >= due:
            return f"the env did not finish {self.call_what} within {self.call_timeout:.1f}s"
        return None

    def on_loop(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the event loop and wait for it; ``cancel_policy`` (or a stop) ends the wait."""
        if self.stopping:
            coro.close()
            raise Abandoned("stopped")
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        self._policy_future = future
        if self.stopping:
            future.cancel()
        try:
            return future.result()
        except concurrent.futures.CancelledError:
            raise Abandoned("stopped") from None
        finally:
            self._policy_future = None

    def cancel_policy(self) -> None:
        future = self._policy_future
        if future is not None:
            future.cancel()

    def abandon(self) -> None:
        self.abandoned = True
        self.cancel_policy()
