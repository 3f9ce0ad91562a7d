"""OSWorld's Chromium profile getters and the metrics they feed, read from the profile's files as data.

The verifier stops the browser (it writes its profile on exit), kills every
process, then reads ``Default/Bookmarks``, ``Default/Preferences``,
``Local State`` (JSON) and ``Default/History``, ``Default/Cookies`` (SQLite,
on a private copy) beneath the root. Each getter gives what upstream's
getter of the same name gives, including its fallback when a key is absent,
so that a setting never touched scores as it does there.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import tempfile
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from evaluators import _state
from evaluators.osworld import metric

#: getter -> (file under the profile directory, how to read it)
PROFILE_FILES = {
    "bookmarks": "Default/Bookmarks",
    "history": "Default/History",
    "cookie_data": "Default/Cookies",
    "enabled_experiments": "Local State",
    "chrome_language": "Local State",
}
PREFERENCES = "Default/Preferences"


def _json(path: str) -> Any:
    try:
        return json.loads(_state.read_bytes(path))
    except (FileNotFoundError, NotADirectoryError, _state.NotRegular, ValueError):
        return None


def _rows(path: str, sql: str) -> list[tuple[Any, ...]] | None:
    """``sql`` on a private copy of the database (with its journal or WAL if the browser left one)."""
    try:
        main = _state.read_bytes(path)
    except (FileNotFoundError, NotADirectoryError, _state.NotRegular):
        return None
    with tempfile.TemporaryDirectory(prefix="evaluators-chrome-") as scratch:
        copy = os.path.join(scratch, "db")
        with open(copy, "wb") as fh:
            fh.write(main)
        for suffix in ("-journal", "-wal"):
            try:
                side = _state.read_bytes(path + suffix)
            except (FileNotFoundError, NotADirectoryError, _state.NotRegular):
                continue
            with open(copy + suffix, "wb") as fh:
                fh.write(side)
        try:
            conn = sqlite3.connect(copy, timeout=5)
            try:
                return conn.execute(sql).fetchall()
            finally:
                conn.close()
        except sqlite3.Error:
            return None


def _color_scheme(prefs: dict[str, Any]) -> str:
    """Light, dark or system, from ``browser.theme`` (``color_scheme2`` first); ``system_theme`` 0 means light."""
    theme = prefs.get("browser", {}).get("theme", {})
    raw = theme.get("color_scheme2", theme.get("color_scheme"))
    names = {"0": "system", "default": "system", "system": "system", "1": "light", "light": "light"}
    names |= {"2": "dark", "dark": "dark"}
    mode = names.get(str(int(raw)) if isinstance(raw, (int, float)) else str(raw).strip().lower())
    if prefs.get("extensions", {}).get("theme", {}).get("system_theme") in (0, "0", False):
        return "light"
    return mode or "system"


def _from_preferences(getter: str, prefs: Any) -> Any:
    """Upstream's value for a Preferences getter (its fallback when the file is unreadable)."""
    if not isinstance(prefs, dict):
        fallbacks: dict[str, Any] = {
            "profile_name": None,
            "default_search_engine": "Google",
            "chrome_font_size": {"default_fixed_font_size": 13, "default_font_size": 16},
            "enable_do_not_track": "false",
            "enable_safe_browsing": "false",
            "enable_enhanced_safety_browsing": "false",
            "chrome_appearance_mode_ui": "system",
            "find_unpacked_extension_path": [],
            "find_installed_extension_name": "Google",
        }
        return fallbacks.get(getter)
    if getter == "profile_name":
        return prefs.get("profile", {}).get("name")
    if getter == "default_search_engine":
        return prefs.get("default_search_provider_data", {}).get("template_url_data", {}).get("short_name", "Google")
    if getter == "chrome_font_size":
        default = {"default_fixed_font_size": 13, "default_font_size": 16, "minimum_font_size": 13}
        return prefs.get("webkit", {}).get("webprefs", default)
    if getter == "enable_do_not_track":
        return "true" if prefs.get("enable_do_not_track") else "false"
    if getter in ("enable_safe_browsing", "enable_enhanced_safety_browsing"):
        safe = prefs.get("safebrowsing", {})
        return "true" if safe.get("enhanced") or safe.get("enabled") else "false"
    if getter == "new_startup_page":
        return "true" if "session" not in prefs or prefs["session"].get("restore_on_startup") == 5 else "false"
    if getter == "data_delete_automacally":
        # upstream: the key exists; this Chromium writes it in every new profile, so we ask what the setting
        # ("delete site data when all windows close") writes: cookies allowed for the session only (4)
        values = prefs.get("profile", {}).get("default_content_setting_values")
        return "true" if isinstance(values, dict) and values.get("cookies") == 4 else "false"
    if getter == "chrome_appearance_mode_ui":
        return _color_scheme(prefs)
    if getter == "find_installed_extension_name":
        try:
            return [entry["manifest"]["name"] for entry in prefs.get("extensions", {}).get("settings", {}).values()]
        except (KeyError, TypeError, AttributeError):
            return "Google"  # upstream's getter answers this when an entry has no manifest name
    settings = prefs.get("extensions", {}).get("settings", {})
    if getter == "find_unpacked_extension_path":
        return [s.get("path") for s in settings.values() if isinstance(s, dict)]
    raise KeyError(getter)


PREFERENCE_GETTERS = (
    "profile_name",
    "default_search_engine",
    "chrome_font_size",
    "enable_do_not_track",
    "enable_safe_browsing",
    "enable_enhanced_safety_browsing",
    "new_startup_page",
    "data_delete_automacally",
    "chrome_appearance_mode_ui",
    "find_unpacked_extension_path",
    "find_installed_extension_name",
)
GETTERS = (*PROFILE_FILES, *PREFERENCE_GETTERS)


def profile_value(getter: str, profile: str) -> Any:
    """The value upstream's ``getter`` gives, read from the profile directory ``profile`` beneath the root."""
    if getter in PREFERENCE_GETTERS:
        return _from_preferences(getter, _json(os.path.join(profile, PREFERENCES)))
    path = os.path.join(profile, PROFILE_FILES[getter])
    if getter == "bookmarks":
        data = _json(path)
        return data.get("roots", {}) if isinstance(data, dict) else []
    if getter == "history":
        return _rows(path, "SELECT url, title, last_visit_time FROM urls")
    if getter == "cookie_data":
        return _rows(path, "SELECT * FROM cookies")
    state = _json(path)
    state = state if isinstance(state, dict) else {}
    if getter == "enabled_experiments":
        return state.get("browser", {}).get("enabled_labs_experiments", [])
    return state.get("intl", {}).get("app_locale", "en-US")


def _children(node: Any, kind: str, field: str) -> list[Any]:
    items = node.get("children", []) if isinstance(node, dict) else []
    return [c.get(field) for c in items if isinstance(c, dict) and c.get("type") == kind]


@metric
def is_expected_bookmarks(result: Any, rules: dict[str, Any]) -> float:
    """The bookmarks bar's folder names or URLs are exactly the expected set (or a folder holds one URL per slot)."""
    if not isinstance(result, dict) or not result:
        return 0.0
    bar = result.get("bookmark_bar", {})
    kind = rules["type"]
    if kind == "bookmark_bar_folders_names":
        return float(set(_children(bar, "folder", "name")) == set(rules["names"]))
    if kind == "bookmark_bar_websites_urls":
        return float(set(_children(bar, "url", "url")) == set(rules["urls"]))
    if kind == "liked_authors_websites_urls":
        folders = [c for c in bar.get("children", []) if c.get("type") == "folder" and c.get("name") == "Liked Authors"]
        if not folders:
            return 0.0
        urls = set(_children(folders[0], "url", "url"))
        slots = [[u] if isinstance(u, str) else list(u) for u in rules["urls"]]
        # each URL fills exactly one slot and every slot is filled: one choice per slot, no extras
        return float(len(urls) == len(slots) and _fill(slots, urls))
    raise ValueError(f"is_expected_bookmarks: unsupported rule type {kind!r}")


def _fill(slots: list[list[str]], urls: set[str]) -> bool:
    if not slots:
        return not urls
    return any(_fill(slots[1:], urls - {u}) for u in slots[0] if u in urls)


@metric
def check_history_deleted(result: Any, rules: dict[str, Any]) -> float:
    """No URL left in the history contains any of the keywords."""
    if rules["type"] != "keywords":
        raise ValueError(f"check_history_deleted: unsupported rule type {rules['type']!r}")
    urls = [str(row[0]) for row in result or []]
    return float(not any(k in u for k in rules["keywords"] for u in urls))


def _host(value: str) -> str:
    host = value.split("://", 1)[-1].split("/", 1)[0].lower().lstrip(".")
    return host[4:] if host.startswith("www.") else host


@metric
def is_cookie_deleted(result: Any, rules: dict[str, Any]) -> float:
    """No cookie's host is one of the domains (scheme, ``www.`` and a leading dot ignored)."""
    if rules["type"] != "domains":
        raise ValueError(f"is_cookie_deleted: unsupported rule type {rules['type']!r}")
    hosts = {_host(str(row[1])) for row in result or [] if len(row) > 1}
    return float(not any(_host(d) in hosts for d in rules["domains"]))


@metric
def check_font_size(result: Any, rules: dict[str, Any]) -> float:
    """The default font size equals the value, or lies strictly inside (min, max)."""
    size = result.get("default_font_size") if isinstance(result, dict) else None
    if not isinstance(size, (int, float)):
        return 0.0
    if rules["type"] == "value":
        return float(size == rules["value"])
    if rules["type"] == "range":
        return float(rules["min"] < size < rules["max"])
    raise ValueError(f"check_font_size: unsupported rule type {rules['type']!r}")


#: Second-level labels under a country code (``example.co.uk``): upstream's ``tldextract`` drops both as the suffix.
_SECOND_LEVEL = {"co", "com", "org", "net", "gov", "ac", "edu"}


def _same_url(a: Any, b: Any) -> bool:
    """Upstream's ``compare_urls``: scheme, host without ``www.`` and without its public suffix, path (``/`` as
    empty), query and fragment. The suffix is cut by rule (last label, two for ``co.uk``-like), not the
    public suffix list, which the standard library lacks."""
    if a is None or b is None:
        return a == b

    def norm(url: str) -> str:
        url = url if re.match(r"^[a-zA-Z][a-zA-Z0-9+\-.]*://", url) else f"http://{url}"
        parts = urlsplit(url)
        labels = (parts.hostname or "").split(".")
        cut = 2 if len(labels) > 2 and len(labels[-1]) == 2 and labels[-2] in _SECOND_LEVEL else 1
        labels = labels[:-cut] if len(labels) > cut else labels[:1] if labels != [""] else []
        labels = labels[1:] if labels[:1] == ["www"] else labels
        path = "" if parts.path == "/" else parts.path
        return urlunsplit((parts.scheme.lower(), ".".join(labels), path, parts.query, parts.fragment))

    return norm(str(a)) == norm(str(b))


def _url(tab: Any) -> Any:
    return tab.get("url") if isinstance(tab, dict) else tab


@metric
def is_expected_tabs(result: Any, rules: dict[str, Any]) -> float:
    """As many tabs as expected URLs, each expected URL open (compared as upstream's ``compare_urls``)."""
    if not result or rules.get("type") != "url":
        return 0.0
    urls = [_url(t) for t in result]
    expected = rules["urls"]
    return float(len(urls) == len(expected) and all(any(_same_url(e, u) for u in urls) for e in expected))


@metric
def is_expected_active_tab(result: Any, rules: dict[str, Any]) -> float:
    """The active tab's URL is the expected one (``compare_urls``)."""
    if not result or rules.get("type") != "url":
        return 0.0
    return float(_same_url(rules["url"], _url(result)))


@metric
def is_expected_active_tab_approximate(result: Any, rules: dict[str, Any]) -> float:
    """The active tab's URL is the expected one, both without their query strings."""
    if not result or rules.get("type") != "url" or not isinstance(_url(result), str):
        return 0.0
    return float(urlsplit(rules["url"])._replace(query="") == urlsplit(_url(result))._replace(query=""))


@metric
def is_expected_url_pattern_match(result: Any, rules: dict[str, Any]) -> float:
    """Every regular expression in ``rules["expected"]`` is found in the active tab's URL."""
    url = _url(result)
    if not result or not isinstance(url, str):
        return 0.0
    return float(all(re.search(pattern, url) for pattern in rules["expected"]))


#: Names the Chrome Web Store has given the same extension; upstream counts each group as one name.
_EXTENSION_ALIASES = ({"Zoom Chrome Extension", "Zoom for Google Chrome"},)


def _extension(name: Any) -> Any:
    return next((min(group) for group in _EXTENSION_ALIASES if name in group), name)


@metric
def is_expected_installed_extensions(result: Any, expected: dict[str, Any]) -> float:
    """Every expected extension name is among the installed ones (aliases as one name); nothing installed scores 0.

    The getter's ``"Google"`` (a profile it could not read) is iterated as upstream does, by character.
    """
    if not result:
        return 0.0
    return float({_extension(n) for n in expected["expected"]} <= {_extension(n) for n in result})
