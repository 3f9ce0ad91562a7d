"""MiniWoB++ from the ``miniwob`` wheel's bundled HTML, served on loopback (never ``file://``).

An episode loads the task page, seeds the page's RNG, and starts it the way
MiniWoB's own env does (``core.startEpisodeReal``). The page's episode
timer is set to the task's time budget so it never ends an episode on its
own, and ``core.endEpisode`` is wrapped to note when the page scored it:
the time-decayed reward MiniWoB defines (over its standard 10 s) is then
reported apart from the raw reward, and success is the raw reward being 1.

The score is read from the tab the env started, and only while it still
holds the document the env started (a random mark set at start): the
agent may navigate to any MiniWoB++ page (they share an origin), and one
it started itself (another, easier task, or this one re-rolled) must not
count.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import threading
from pathlib import Path
from typing import Any

STANDARD_EPISODE_MS = 10_000
#: Tasks that need more than the static pages (the flight domain's own server) or never end.
EXCLUDED = {"flight.Alaska", "flight.AA", "flight.Delta", "flight.Cheapflights", "flight.JetBlue", "flight.United"}

START = """([seed, maxMs, mark]) => {
  Math.seedrandom(String(seed));
  core.EPISODE_MAX_TIME = maxMs;
  if (!core.__agentenvsWrapped) {
    const original = core.endEpisode;
    core.endEpisode = function (reward, timeProportional, reason) {
      if (core.EP_TIMER !== null) {
        window.__agentenvsEnd = {ms: new Date().getTime() - core.ept0, proportional: !!timeProportional};
      }
      return original.apply(this, arguments);
    };
    core.__agentenvsWrapped = true;
  }
  window.__agentenvsEnd = null;
  window.__agentenvsEpisode = mark;
  // MiniWoB's running score and countdown are the harness's, not the task's: out of the agent's tree.
  const stats = document.getElementById('reward-display');
  if (stats) stats.setAttribute('aria-hidden', 'true');
  core.startEpisodeReal();
  return {utterance: core.getUtterance(), ready: !!WOB_TASK_READY};
}"""
STATE = """(mark) => (window.__agentenvsEpisode !== mark || typeof WOB_DONE_GLOBAL === 'undefined') ? null
  : ({done: WOB_DONE_GLOBAL, raw: WOB_RAW_REWARD_GLOBAL, reward: WOB_REWARD_GLOBAL,
  reason: WOB_REWARD_REASON === null ? null : String(WOB_REWARD_REASON), end: window.__agentenvsEnd || null})"""
#: The state of an episode whose page the agent left, closed or replaced: not done, nothing scored.
LEFT = {"done": False, "raw": None, "reward": None, "reason": "the episode's page was left", "end": None}


def load(session: Any, url: str) -> None:
    """Load a task's page in an episode's ``Session`` (browser thread) until MiniWoB's core is ready."""
    session.goto(url)
    session.page.wait_for_function("() => typeof core !== 'undefined' && WOB_TASK_READY", timeout=10_000)


def start(page: Any, seed: int, max_ms: int, mark: str) -> str:
    """Seed and start the loaded page's episode (browser thread), marked ``mark``; its utterance."""
    started = page.evaluate(START, [seed, max_ms, mark])
    if not started["ready"]:
        page.wait_for_function("() => WOB_TASK_READY", timeout=10_000)
    return str(started["utterance"])


def state(page: Any, mark: str) -> dict[str, Any]:
    """The episode's state on ``page`` (browser thread), or ``LEFT`` when the page no longer holds the
    document started with ``mark`` (closed, navigated, reloaded; another MiniWoB++ page in its place)."""
    if page.is_closed():
        return dict(LEFT)
    try:
        found = page.evaluate(STATE, mark)
    except Exception:  # noqa: BLE001 - a page mid-navigation or gone has no episode of ours
        browser = page.context.browser
        if browser is not None and not browser.is_connected():
            raise  # Chromium died: the env's infra, not the agent's doing
        return dict(LEFT)
    return dict(LEFT) if found is None else found


def html_root() -> Path:
    spec = importlib.util.find_spec("miniwob")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(
            "the web family's MiniWoB++ tasks need the `miniwob` package: pip install 'agentenvs[web]'"
        )
    return Path(spec.origin).parent / "html"


def task_names() -> list[str]:
    """Every bundled MiniWoB++ task page we can serve statically."""
    try:
        root = html_root() / "miniwob"
    except ModuleNotFoundError:
        return []
    return sorted(p.stem for p in root.glob("*.html") if p.stem not in EXCLUDED)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        pass


_SERVER: http.server.ThreadingHTTPServer | None = None
_LOCK = threading.Lock()


def origin() -> str:
    """The process's static server for the MiniWoB++ pages (started once, loopback only)."""
    global _SERVER
    with _LOCK:
        if _SERVER is None:
            handler = functools.partial(_Quiet, directory=str(html_root()))
            _SERVER = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
            _SERVER.daemon_threads = True
            threading.Thread(target=_SERVER.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{_SERVER.server_port}"


def decayed(state: dict[str, Any]) -> float | None:
    """MiniWoB's time-decayed reward over its standard 10 s episode, from the page's own timing."""
    end, raw = state.get("end"), state.get("raw")
    if not state.get("done") or end is None or raw is None:
        return None
    if not end["proportional"]:
        return float(raw)
    return float(raw) * max(0.0, 1.0 - end["ms"] / STANDARD_EPISODE_MS)
