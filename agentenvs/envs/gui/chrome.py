"""OSWorld's Chrome tasks on our Chromium: the tab getters and steps, the steps that mean something else here, the hosts.

Upstream's Chrome runs with a DevTools port that ``socat`` forwards to its
host; ours needs no forward (nothing outside the container reads it), so
that launch is skipped. ``pkill chrome`` stops upstream's browser; ours is
named ``chromium``, so the step stops it by that name and waits until it has
exited (it writes its profile on the way out). The verifier does the same
before it reads the profile's files (``evaluators/osworld_chrome.py``).

The tab getters (``open_tabs_info``, ``active_tab_info``,
``active_url_from_accessTree``, ``active_tab_url_parse``) are the tabs the
verifier's probe (``guest/probe.py``) reads from the DevTools port the task
launched Chromium with (upstream's tasks all pass ``--remote-debugging-port=1337``),
after the agent's processes are killed, and only if a Chromium process of
the desktop's user holds that port. ``chrome_open_tabs`` opens each URL in a
new tab of the running browser, as upstream does over the same port.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

from agentenvs.sandbox.daemon_client import DaemonClient

#: The desktop user's Chromium profile (``scripts/gui/chromium``'s ``--user-data-dir``).
PROFILE = "/home/user/.config/chromium"
#: Upstream's profile directory: a step that edits it gets it as a link to ours (``LINK_PROFILE``) first.
UPSTREAM_PROFILE = ".config/google-chrome"
LINK_PROFILE = (
    "mkdir -p ~/.config/chromium && { [ -e ~/.config/google-chrome ] || ln -s chromium ~/.config/google-chrome; }"
)
#: Stop the browser as a person would, by closing its windows: it then writes what it holds back (a
#: bookmark moved in the last 2.5 s is lost on SIGTERM, measured). Bounded: SIGTERM after 10 s, SIGKILL after 15.
STOP_BROWSER = (
    "for w in $(wmctrl -lx | awk '/[.]Chromium / {print $1}'); do wmctrl -ic $w; done;"
    " for i in $(seq 50); do pgrep -x chromium >/dev/null || exit 0; sleep 0.2; done; pkill -TERM -x chromium;"
    " for i in $(seq 25); do pgrep -x chromium >/dev/null || exit 0; sleep 0.2; done; pkill -KILL -x chromium; exit 0"
)
#: Upstream's DevTools port (its tasks launch ``google-chrome --remote-debugging-port=1337``).
DEVTOOLS_PORT = 1337
#: Getters read from the live browser's tabs by the verifier's probe.
TAB_GETTERS = ("open_tabs_info", "active_tab_info", "active_url_from_accessTree", "active_tab_url_parse")
#: Getters that read a live website (the page itself, not the browser's state).
SITE_GETTERS = {
    "info_from_website",
    "page_info",
    "active_tab_html_parse",
    "gotoRecreationPage_and_get_html_content",
    "pdf_from_url",
    "number_of_search_results",
    "googledrive_file",
}
_URL = re.compile(r"https?://[^\s'\"]+")
_LOCAL = {"localhost", "127.0.0.1", "::1"}


def _argv(step: dict[str, Any]) -> list[str]:
    command = step.get("parameters", {}).get("command")
    return [str(c) for c in command] if isinstance(command, list) else str(command or "").split()


def is_port_forward(step: dict[str, Any]) -> bool:
    """Upstream's ``socat tcp-listen:9222,fork tcp:localhost:1337``: its host's way to the DevTools port."""
    argv = _argv(step)
    return step.get("type") in ("launch", "execute", "command") and argv[:1] == ["socat"]


def is_stop_chrome(step: dict[str, Any]) -> bool:
    """``pkill chrome``: stop upstream's browser."""
    return step.get("type") in ("launch", "execute", "command") and _argv(step) == ["pkill", "chrome"]


def network_needs(step: dict[str, Any]) -> list[str]:
    """What a config step fetches from outside: the hosts of the tabs it opens or URLs it names, or ``apt``/``pip``."""
    params = step.get("parameters", {})
    urls = [str(u) for u in params.get("urls_to_open", [])] if step.get("type") == "chrome_open_tabs" else []
    found: list[str] = []
    if step.get("type") in ("execute", "command", "launch"):
        command = params.get("command")
        text = " ".join(map(str, command)) if isinstance(command, list) else str(command or "")
        urls += _URL.findall(text)
        found += [tool for tool in ("apt", "pip") if re.search(rf"\b{tool}(-get|3)? (install|update)\b", text)]
    for url in urls:
        host = urlsplit(url).hostname
        if host and host not in _LOCAL:
            found.append(f"host {host}")
    return found


def writes_upstream_profile(step: dict[str, Any]) -> bool:
    """A step that edits ``~/.config/google-chrome``: upstream's profile, ours is ``~/.config/chromium``."""
    command = step.get("parameters", {}).get("command")
    text = " ".join(map(str, command)) if isinstance(command, list) else str(command or "")
    return UPSTREAM_PROFILE in text


_WAIT_PORT = (
    "import time, urllib.request\n"
    "for _ in range(100):\n"
    "    try:\n"
    f"        urllib.request.urlopen('http://127.0.0.1:{DEVTOOLS_PORT}/json/version', timeout=1); break\n"
    "    except OSError: time.sleep(0.2)\n"
    "else: raise SystemExit(1)\n"
)


def open_tabs(client: DaemonClient, urls: list[str]) -> None:
    """``chrome_open_tabs``: once the browser answers on its port (at most 20 s), each URL in a new tab.

    A second ``google-chrome URL`` hands the URL to the running browser and exits; with no browser
    on the port (the task did not launch one) the first URL starts it, as upstream then does.
    """
    head, _ = client.call("run", command=["python3", "-c", _WAIT_PORT], deadline=40, timeout=30)
    if head.get("returncode") != 0 and urls:
        client.call("launch", command=["google-chrome", f"--remote-debugging-port={DEVTOOLS_PORT}", urls[0]])
        client.call("run", command=["python3", "-c", _WAIT_PORT], deadline=40, timeout=30)
        urls = urls[1:]
    for url in urls:
        client.call("run", command=["google-chrome", url], deadline=40, timeout=30)


def tab_value(kind: str, getter: dict[str, Any], tabs: Any) -> Any:
    """Upstream's value for a tab getter from the probe's tabs (most recently active first); None if unread.

    ``active_tab_info`` has the title and URL, not the page's HTML (nothing here reads a page's content);
    the URL getters give the tab's real URL where upstream prefixes the address bar's text with ``https://``.
    """
    if not isinstance(tabs, list) or not tabs:
        return None
    if kind == "open_tabs_info":
        return tabs
    active = tabs[0]
    if kind == "active_tab_info":
        return {"title": active["title"], "url": active["url"]}
    if kind == "active_url_from_accessTree":
        return active["url"]
    query = parse_qs(urlsplit(active["url"]).query)
    found: dict[str, Any] = {key: query.get(key, [""])[0] for key in getter.get("parse_keys", [])}
    for old, new in (getter.get("replace") or {}).items():
        found[new] = found.pop(old, "")
    if getter.get("split_list"):
        found = {key: str(value).split(",") for key, value in found.items()}
    return found
