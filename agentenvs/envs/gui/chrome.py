"""OSWorld's Chrome tasks on our Chromium: the profile getters, the steps that mean something else here, the hosts.

Upstream's Chrome runs with a DevTools port that ``socat`` forwards to its
host; ours needs no forward (nothing outside the container reads it), so
that launch is skipped. ``pkill chrome`` stops upstream's browser; ours is
named ``chromium``, so the step stops it by that name and waits until it has
exited (it writes its profile on the way out). The verifier does the same
before it reads the profile's files (``evaluators/osworld_chrome.py``).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

#: The desktop user's Chromium profile (``scripts/gui/chromium``'s ``--user-data-dir``).
PROFILE = "/home/user/.config/chromium"
#: Upstream's profile directory: a config step that writes there is not read by our Chromium.
UPSTREAM_PROFILE = ".config/google-chrome"
#: Stop the browser gracefully (it saves bookmarks, history and preferences), bounded at 10 s, then kill it.
STOP_BROWSER = (
    "pkill -TERM -x chromium; for i in $(seq 50); do pgrep -x chromium >/dev/null || exit 0; sleep 0.2; done;"
    " pkill -KILL -x chromium; exit 0"
)
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
    """A step that edits ``~/.config/google-chrome``, which our Chromium (profile ``~/.config/chromium``) never reads."""
    command = step.get("parameters", {}).get("command")
    text = " ".join(map(str, command)) if isinstance(command, list) else str(command or "")
    return UPSTREAM_PROFILE in text
