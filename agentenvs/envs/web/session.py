"""One episode's browser context: the allow-list, the tabs, actions and observations.

Every method here runs on the browser thread (see ``browser.py``). Waits
are Playwright's own, bounded by page events (an action's auto-wait, the
``load`` event of a navigation it caused), never fixed sleeps.
"""

from __future__ import annotations

import base64
import io
import mimetypes
import re
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agentenvs.envs.web.actions import Call
from agentenvs.envs.web.observe import describe_page

ACTION_TIMEOUT_MS = 3000
LOAD_TIMEOUT_MS = 10000
BID = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
#: Open tabs an episode may have. Each costs Chromium a renderer (about 18 MB for a shop page), and
#: ten ``new_tab()`` a step for 30 steps came to 300 of them: one episode could take the machine's memory.
MAX_TABS = 12


class BrowserActionError(Exception):
    """The action was well formed but could not be done on this page (BrowserGym's last_action_error)."""


@dataclass
class Page:
    """What the agent is shown of the browser after a step."""

    url: str
    title: str
    tree: str
    tabs: str
    screenshot: np.ndarray | None = None

    def render(self, last_error: str) -> str:
        """The observation's text: the URL, the tabs, the last action's error if any, then the tree."""
        lines = [f"URL: {self.url}", "Open tabs:", self.tabs]
        if last_error:
            lines.append(f"Last action error: {last_error}")
        lines += ["", self.tree]
        return "\n".join(lines)

    def screenshot_at(self, viewport: tuple[int, int]) -> np.ndarray:
        """The screenshot at exactly the declared shape (a blank frame if the page gave none)."""
        w, h = viewport
        out = np.zeros((h, w, 3), dtype=np.uint8)
        if self.screenshot is not None:
            hh, ww = min(h, self.screenshot.shape[0]), min(w, self.screenshot.shape[1])
            out[:hh, :ww] = self.screenshot[:hh, :ww]
        return out


@dataclass
class Session:
    """A fresh context per episode; only ``allowed`` origins (scheme://host:port) are reachable.

    ``proxy`` (the env's ``SiteProxy``) carries every request of the context: the sites are
    reached at their stable origins (``http://shop.web.test``), never at a loopback port.
    """

    context: Any
    allowed: frozenset[str]
    uploads: Path | None = None
    load_timeout_ms: int = LOAD_TIMEOUT_MS
    blocked: list[str] = field(default_factory=list)
    active: int = 0
    #: A CDP session per tab, for screenshots.
    _cdp: dict[Any, Any] = field(default_factory=dict)
    #: What the context's route catches: every URL until ``activate``, then every URL not plainly
    #: of an allowed origin (those load without a round trip to Python).
    _caught: Any = "**/*"
    #: Tabs the page opened past ``MAX_TABS`` and the env closed again.
    tabs_refused: int = 0

    @classmethod
    def open(
        cls, browser: Any, viewport: tuple[int, int], load_timeout_ms: int = LOAD_TIMEOUT_MS, proxy: str | None = None
    ) -> Session:
        """A new context and tab that reach nothing until ``activate`` (so one can be made ahead of time)."""
        context = browser.new_context(
            proxy={"server": proxy} if proxy else None,
            viewport={"width": viewport[0], "height": viewport[1]},
            accept_downloads=False,
            service_workers="block",
            locale="en-US",
            timezone_id="UTC",
        )
        context.set_default_timeout(ACTION_TIMEOUT_MS)
        context.set_default_navigation_timeout(load_timeout_ms)
        session = cls(context, frozenset(), None, load_timeout_ms)
        context.route("**/*", session._route)
        context.on("page", session._new_page)
        context.new_page()
        return session

    def _new_page(self, page: Any) -> None:
        """A tab opened (by us or by the page: a Ctrl-click, a middle click): closed again past ``MAX_TABS``
        and one more (the env's own scratch or grading tab, opened outside actions, may be that one)."""
        if len(self.context.pages) > MAX_TABS + 1:
            self.tabs_refused += 1
            page.close()
            return
        page.on("dialog", lambda d: d.accept() if d.type == "alert" else d.dismiss())

    def activate(self, allowed: set[str], cookies: list[dict[str, Any]], uploads: Path | None) -> None:
        """Open the episode's origins to this context and sign its persona in."""
        self.allowed = frozenset(filter(None, map(origin_of, allowed)))
        self.uploads = uploads
        caught = _outside(self.allowed)
        if caught.pattern != getattr(self._caught, "pattern", None):
            # The new route first: no request finds neither (the old one still checks every URL).
            self.context.route(caught, self._route)
            self.context.unroute(self._caught, self._route)
            self._caught = caught
        if cookies:
            self.context.add_cookies(cookies)

    def allowed_url(self, url: str) -> bool:
        return origin_of(url) in self.allowed

    def _route(self, route: Any) -> None:
        url = route.request.url
        if self.allowed_url(url):
            route.continue_()
        else:
            self.blocked.append(url)
            route.abort("blockedbyclient")

    @property
    def page(self) -> Any:
        pages = self.context.pages
        if not pages:
            self.context.new_page()
            pages = self.context.pages
        self.active = min(self.active, len(pages) - 1)
        return pages[self.active]

    def goto(self, url: str) -> None:
        if not self.allowed_url(url):
            raise BrowserActionError(f"navigation to {url[:200]!r} is blocked: only the task's sites are reachable")
        self._settle(lambda: self.page.goto(url, wait_until="commit"))

    def _settle(self, fn: Any) -> None:
        """Run an action, then wait (bounded) for any navigation it started to load.

        A page that never finishes loading costs at most one ``load_timeout_ms`` and is
        observed as it is; a request the allow-list blocked is the action's error.
        """
        before = len(self.blocked)
        error: BrowserActionError | None = None
        try:
            fn()
        except Exception as exc:  # noqa: BLE001 - Playwright's errors become the agent's last_action_error
            error = BrowserActionError(_short(exc))
        else:
            try:
                self.page.wait_for_load_state("load", timeout=self.load_timeout_ms)
            except Exception:  # noqa: BLE001 - a page that never loads is shown as it is
                pass
        if len(self.blocked) > before:
            if self.page.url.startswith("chrome-error://"):
                # A blocked navigation leaves Chromium's error page: take the tab back to where it was.
                try:
                    self.page.go_back(wait_until="load", timeout=self.load_timeout_ms)
                except Exception:  # noqa: BLE001 - nothing to go back to; the error page stays
                    pass
            raise BrowserActionError(f"blocked a request outside the task's sites: {self.blocked[-1][:200]}")
        if error is not None:
            raise error

    def element(self, bid: str) -> Any:
        if not BID.match(bid):
            raise BrowserActionError(f"{bid!r} is not a bid; use the number in brackets from the tree")
        locator = self.page.locator(f'[bid="{bid}"]')
        if locator.count() == 0:
            raise BrowserActionError(f"no element with bid {bid!r} on this page")
        return locator.first

    def act(self, call: Call) -> None:
        """Carry out one BrowserGym action (send_msg_to_user and report_infeasible are the env's).

        At most ``MAX_TABS`` tabs stay open: ``new_tab`` beyond that is refused, and tabs the page
        opened beyond it (a Ctrl-click, a middle click) are closed again, newest first."""
        before = self.tabs_refused
        try:
            self._act(call)
        finally:
            for page in [p for p in self.context.pages[MAX_TABS:] if not p.is_closed()][::-1]:
                self.tabs_refused += 1
                page.close()
            self.active = max(0, min(self.active, len(self.context.pages) - 1))
        if self.tabs_refused > before:
            raise BrowserActionError(f"at most {MAX_TABS} tabs may be open; the page's new tab was closed")

    def _act(self, call: Call) -> None:
        a = call.args
        name = call.name
        if name in ("click", "dblclick"):
            kwargs = {"button": a["button"], "modifiers": a["modifiers"]}
            el = self.element(a["bid"])
            self._settle(lambda: el.click(**kwargs) if name == "click" else el.dblclick(**kwargs))
        elif name in ("hover", "check", "uncheck", "focus", "clear"):
            el = self.element(a["bid"])
            self._settle(lambda: getattr(el, name)())
        elif name == "fill":
            el = self.element(a["bid"])
            self._settle(lambda: el.fill(a["value"]))
        elif name == "select_option":
            el = self.element(a["bid"])
            self._settle(lambda: _select(el, a["options"]))
        elif name == "press":
            el = self.element(a["bid"])
            self._settle(lambda: el.press(a["key_comb"]))
        elif name == "scroll":
            self._settle(lambda: self.page.mouse.wheel(a["delta_x"], a["delta_y"]))
        elif name == "goto":
            self.goto(a["url"])
        elif name in ("go_back", "go_forward"):
            self._settle(lambda: getattr(self.page, name)(wait_until="commit"))
        elif name == "new_tab":
            if len(self.context.pages) >= MAX_TABS:
                raise BrowserActionError(f"at most {MAX_TABS} tabs may be open; close one first")
            self.context.new_page()
            self.active = len(self.context.pages) - 1
        elif name == "tab_close":
            self.page.close()
            self.active = max(0, self.active - 1)
        elif name == "tab_focus":
            if not 0 <= a["index"] < len(self.context.pages):
                raise BrowserActionError(f"no tab {a['index']}; there are {len(self.context.pages)}")
            self.active = a["index"]
            self.page.bring_to_front()
        elif name == "upload_file":
            el = self.element(a["bid"])
            files = [self._upload(f) for f in ([a["file"]] if isinstance(a["file"], str) else a["file"])]
            self._settle(lambda: el.set_input_files(files))
        elif name == "mouse_click":
            self._settle(lambda: self.page.mouse.click(a["x"], a["y"], button=a["button"]))
        elif name == "keyboard_type":
            self._settle(lambda: self.page.keyboard.type(a["text"]))
        elif name != "noop":
            raise BrowserActionError(f"{name} is not a browser action")

    def _upload(self, name: str) -> dict[str, Any]:
        """Only files the task provides, by name: the agent never reaches the host's files. The bytes
        go to the page, not the path (a confined Chromium sees no task directory)."""
        if self.uploads is None or "/" in name or name.startswith("."):
            raise BrowserActionError(f"no file {name!r} to upload; use a name the task gives")
        path = self.uploads / name
        if not path.is_file():
            raise BrowserActionError(f"no file {name!r} to upload; use a name the task gives")
        kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
        return {"name": name, "mimeType": kind, "buffer": path.read_bytes()}

    def observe(self, screenshot: bool) -> Page:
        page = self.page
        try:
            title, tree = describe_page(page)
        except Exception as exc:  # noqa: BLE001 - a page mid-navigation or crashed still gets an observation
            title, tree = "", f"(the page could not be read: {_short(exc)})"
        tabs = "\n".join(
            f"Tab {i}{' (active)' if i == self.active else ''}: {title if p is page else _title(p)} - {p.url}"
            for i, p in enumerate(self.context.pages)
        )
        return Page(
            url=page.url, title=title, tree=tree, tabs=tabs, screenshot=self._pixels(page) if screenshot else None
        )

    def read_page(self, url: str, locator: str) -> str:
        """A page's HTML (or a JS locator's value) in a fresh tab, so the agent's tabs stay as they are."""
        page = self.context.new_page()
        try:
            page.goto(url, wait_until="load")
            return str(page.evaluate(f"() => {locator}") if locator else page.content())
        finally:
            page.close()

    def cdp(self, page: Any) -> Any:
        """The tab's CDP session (made once per tab; a session prepared ahead makes its tab's early)."""
        cdp = self._cdp.get(page)
        if cdp is None:
            self._cdp = {p: c for p, c in self._cdp.items() if not p.is_closed()}
            cdp = self._cdp[page] = self.context.new_cdp_session(page)
        return cdp

    def _pixels(self, page: Any) -> np.ndarray:
        """The viewport as RGB: CDP's capture with the PNG encoder set for speed (lossless; half
        the time of Playwright's screenshot, which also injects and removes a caret-hiding style)."""
        from PIL import Image

        shot = self.cdp(page).send("Page.captureScreenshot", {"format": "png", "optimizeForSpeed": True})
        return np.asarray(Image.open(io.BytesIO(base64.b64decode(shot["data"]))).convert("RGB"))

    def close(self) -> None:
        self.context.close()


def _outside(allowed: frozenset[str]) -> re.Pattern[str]:
    """URLs not plainly of an ``allowed`` origin; ``_route`` checks these (and blocks the disallowed).

    A URL it lets through starts with ``scheme://host[:port]/`` of an allowed origin, so
    ``origin_of`` would allow it too: anything unusual (credentials, another port) is checked.
    """
    plain = []
    for origin in sorted(allowed):
        scheme, host, port = re.fullmatch(r"(https?)://(.+):(\d+)", origin).groups()  # type: ignore[union-attr]
        default = port == ("80" if scheme == "http" else "443")
        plain.append(f"{scheme}://{re.escape(host)}" + (f"(?::{port})?/" if default else f":{port}/"))
    return re.compile(f"^(?!{'|'.join(plain)})" if plain else "")


def origin_of(url: str) -> str | None:
    """``scheme://host:port`` with the default port spelled out; ``None`` for anything but plain http(s)
    without credentials (so ``http://shop.web.test`` and ``http://shop.web.test:80/x`` are one origin)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or parts.username or parts.password or not parts.hostname:
        return None
    try:
        port = parts.port or (80 if parts.scheme == "http" else 443)
    except ValueError:
        return None
    return f"{parts.scheme}://{parts.hostname}:{port}"


def _select(el: Any, options: str | list[str]) -> None:
    """BrowserGym's select_option: match options by label first, then by value."""
    wanted = [options] if isinstance(options, str) else options
    labels = el.evaluate("(s) => Array.from(s.options || []).map((o) => o.label.trim())")
    if all(w in labels for w in wanted):
        el.select_option(label=wanted)
    else:
        el.select_option(wanted)


def _title(page: Any) -> str:
    try:
        return page.title()
    except Exception:  # noqa: BLE001 - a closing page has no title
        return ""


def _short(exc: BaseException) -> str:
    text = str(exc).split("Call log:")[0].strip()
    return f"{type(exc).__name__}: {text[:400]}"
