"""One Chromium per process, driven from one thread of its own.

Playwright's sync API binds to the thread that started it, while the harness
calls envs from worker threads (and Gymnasium's vector envs from others).
So every browser call is marshalled to a single owner thread; envs in the
same process share the browser and each episode gets a fresh context.
A second lane (another thread and Chromium) prepares the next episode while
the agent works on this one: the sync API cannot do two things at once.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from agentenvs.core.errors import InfraError
from agentenvs.envs.web import confined

CHROMIUM = "/usr/bin/chromium"
#: The omnibox's WebUI popups: headless Chromium builds both for every window (each browser context
#: opens one), in renderers of their own, about 1.6 CPU-seconds per context that no page ever uses.
OMNIBOX_POPUPS = ("WebUIOmniboxPopup", "WebUIOmniboxAimPopup")
#: What Playwright turns off with its own ``--disable-features`` (1.65). Chromium keeps only the last
#: of several such switches, and ours comes last, so it repeats these (tests/web/test_browser.py holds
#: this list to the installed Playwright's).
PLAYWRIGHT_DISABLED_FEATURES = (
    "AvoidUnnecessaryBeforeUnloadCheckSync",
    "DestroyProfileOnBrowserClose",
    "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable",
    "LensOverlay",
    "MediaRouter",
    "PaintHolding",
    "ThirdPartyStoragePartitioning",
    "AvoidCorsURLLoaderRestartOnRedirect",
    "TcpPortRandomizationWin",
    "OptimizationHints",
    "NetworkTimeServiceQuerying",
    "AimEnabled",
    "PreconnectToSearch",
    "msForceBrowserSignIn",
    "msEdgeUpdateLaunchServicesPreferredVersion",
)
#: Without the background-networking flags Chromium keeps calling the (closed) network.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-tools",
    "--disable-features=" + ",".join(PLAYWRIGHT_DISABLED_FEATURES + OMNIBOX_POPUPS),
]
T = TypeVar("T")


class BrowserThread:
    """Owns Playwright and one Chromium; runs submitted functions on its thread."""

    def __init__(self, executable: str = CHROMIUM) -> None:
        self._executable = executable
        self._jobs: queue.SimpleQueue[tuple[Callable[[Any], Any], Future[Any]] | None] = queue.SimpleQueue()
        self._ready: Future[None] = Future()
        self._thread = threading.Thread(target=self._run, name="agentenvs-browser", daemon=True)
        self._thread.start()
        self._ready.result(timeout=60)

    def _run(self) -> None:
        try:
            from playwright.sync_api import sync_playwright

            pw = sync_playwright().start()
            if confined.ENABLED:
                executable, env = confined.chromium(self._executable), confined.ENV
            else:
                executable, env = self._executable, None
            browser = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, headless=True, env=env)
        except Exception as exc:  # noqa: BLE001 - reported to the caller waiting on _ready
            self._ready.set_exception(InfraError(f"could not start Chromium ({self._executable}): {exc}"))
            return
        self._ready.set_result(None)
        while (job := self._jobs.get()) is not None:
            fn, future = job
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(fn(browser))
                except BaseException as exc:  # noqa: BLE001 - handed to the caller
                    future.set_exception(exc)
        try:
            browser.close()
        finally:
            pw.stop()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def connected(self) -> bool:
        """Whether Chromium itself is still there (the thread outlives a crashed browser)."""
        return self.alive and bool(self.call(lambda browser: browser.is_connected(), timeout=30))

    def submit(self, fn: Callable[[Any], T]) -> Future[T]:
        """Queue ``fn(browser)`` on the browser thread without waiting for it."""
        if not self.alive:
            raise InfraError("the browser thread is gone")
        future: Future[T] = Future()
        self._jobs.put((fn, future))
        return future

    def call(self, fn: Callable[[Any], T], timeout: float = 120.0) -> T:
        """Run ``fn(browser)`` on the browser thread and return its result."""
        return self.submit(fn).result(timeout=timeout)

    def close(self) -> None:
        if self.alive:
            self._jobs.put(None)
            self._thread.join(timeout=30)


_SHARED: dict[int, BrowserThread] = {}
_LOCK = threading.Lock()
#: Episodes alternate between the lanes: one runs this episode while the other prepares the next.
LANES = 2


def shared_browser(lane: int = 0) -> BrowserThread:
    """The process's browser for ``lane``, started on first use (one browser per lane per worker process)."""
    if not 0 <= lane < LANES:
        raise ValueError(f"lane must be in 0..{LANES - 1}, not {lane}")
    with _LOCK:
        current = _SHARED.get(lane)
        if current is None or not current.connected():
            if current is not None:
                current.close()
            current = _SHARED[lane] = BrowserThread()
        return current


def forget(stuck: BrowserThread) -> None:
    """Drop a browser whose thread is stuck (a call on a Chromium killed under it can hang): the
    next ``shared_browser`` for its lane starts a new one; the old thread ends after its job, if ever.
    Only that browser: a lane's shared browser that has been replaced since stays."""
    with _LOCK:
        for lane, current in list(_SHARED.items()):
            if current is stuck:
                del _SHARED[lane]
    stuck._jobs.put(None)
