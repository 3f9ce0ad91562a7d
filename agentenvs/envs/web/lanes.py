"""An env's browser lanes: the episode runs on one while the next episode is prepared on the other.

Playwright's sync API does one thing at a time per thread, so a context made
"ahead" on the episode's own thread would only delay the agent's next step.
With ``prepare_ahead`` (the default) episodes alternate between two browser threads (two
Chromium processes): while the agent works on lane A, lane B opens the next
episode's fresh context and, for a MiniWoB++ task, loads its page. The next
reset takes that spare only if it was made for the same key (the same page;
contexts for site tasks are the same for every task, persona cookies are set
at activation) and discards it otherwise; the env's first round trip on it
notices a Chromium that died since (and makes the session afresh); a lane
stuck on a killed Chromium is replaced. Closing an episode's context is queued on its lane, not waited for.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from concurrent.futures import Future
from dataclasses import dataclass
from time import monotonic
from typing import Any

from agentenvs.envs.web.browser import BrowserThread, forget, shared_browser
from agentenvs.envs.web.session import Session

#: How long close() waits, in all, for the spare and the queued closes; a lane still busy then
#: is taken for stuck (a call on a Chromium killed under it can hang) and dropped.
WAIT_S = 20.0
#: How long a reset waits for a spare still being prepared (a context and a page load) before
#: taking its lane for stuck and making the episode's session afresh.
SPARE_WAIT_S = 30.0


@dataclass
class Spare:
    """A session being prepared on ``lane`` for an episode described by ``key``."""

    key: Hashable
    lane: int
    future: Future[Session]


class Lanes:
    """The browser threads of one env, the session prepared ahead, and the closes under way."""

    def __init__(self, given: BrowserThread | None) -> None:
        #: A browser given to the env serves both lanes (until it dies: then the process's own are used).
        self._threads: list[BrowserThread | None] = [given, given]
        #: The lane the current episode runs on.
        self.lane = 0
        self._spare: Spare | None = None
        #: Queued closes, each with the browser thread it waits on.
        self._closing: list[tuple[BrowserThread, Future[Any]]] = []

    @property
    def spare(self) -> Spare | None:
        return self._spare

    def thread(self, lane: int | None = None) -> BrowserThread:
        """The browser thread of ``lane`` (the current one by default), started if it is not running."""
        lane = self.lane if lane is None else lane
        current = self._threads[lane]
        if current is None or not current.alive:
            current = self._threads[lane] = shared_browser(lane)
        return current

    def revive(self, lane: int | None = None) -> None:
        """A new Chromium for a lane whose one died (a reset recovers from infra failures)."""
        lane = self.lane if lane is None else lane
        if not self.thread(lane).connected():
            self._threads[lane] = shared_browser(lane)

    def take(self, key: Hashable) -> Session | None:
        """The spare made for ``key`` with its lane made current; ``None`` (and the spare discarded) otherwise."""
        spare, self._spare = self._spare, None
        if spare is None:
            return None
        try:
            session = spare.future.result(timeout=SPARE_WAIT_S)
        except TimeoutError:
            self._drop(self._threads[spare.lane])
            return None
        except Exception:  # noqa: BLE001 - a spare that failed (its browser died, its page did not load) is dropped
            self.revive(spare.lane)
            return None
        if spare.key != key:
            self.retire(session, spare.lane)
            return None
        self.lane = spare.lane
        return session

    def _drop(self, stuck: BrowserThread | None) -> None:
        """Give up on a browser thread that is stuck: the lanes it served start a new browser."""
        if stuck is None:
            return
        self._threads = [None if thread is stuck else thread for thread in self._threads]
        forget(stuck)

    def prepare(self, key: Hashable, make: Callable[[Any], Session]) -> None:
        """Start making the next episode's session (``make(browser)``) on the other lane."""
        lane = 1 - self.lane
        self._spare = Spare(key, lane, self.thread(lane).submit(make))

    def retire(self, session: Session, lane: int | None = None) -> None:
        """Close a session on its lane without waiting (``release`` waits for the closes)."""
        self._closing = [(t, f) for t, f in self._closing if not f.done()]
        try:
            thread = self.thread(lane)
            self._closing.append((thread, thread.submit(lambda b: session.close())))
        except Exception:  # noqa: BLE001 - a context whose browser thread is gone is gone with it
            pass

    def release(self) -> None:
        """Close the spare and wait (bounded, ``WAIT_S`` in all) for every queued close: nothing of
        this env stays in the browsers, and a lane that does not answer in time is dropped."""
        deadline = monotonic() + WAIT_S
        spare, self._spare = self._spare, None
        if spare is not None:
            try:
                self.retire(spare.future.result(timeout=WAIT_S), spare.lane)
            except TimeoutError:
                self._drop(self._threads[spare.lane])
            except Exception:  # noqa: BLE001 - a spare of a dead browser is gone already
                pass
        closing, self._closing = self._closing, []
        for thread, future in closing:
            try:
                future.result(timeout=max(0.0, deadline - monotonic()))
            except TimeoutError:
                self._drop(thread)
            except Exception:  # noqa: BLE001 - a crashed context is gone anyway
                pass
