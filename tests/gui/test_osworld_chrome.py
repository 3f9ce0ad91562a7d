"""OSWorld's Chrome tasks on our Chromium: profile getters read as data, their metrics, and how the importer sorts tasks.

The task JSON and profile files here are written for these tests (not upstream copies).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from agentenvs.envs.gui.assets import AssetIndex
from agentenvs.envs.gui.importer import classify
from agentenvs.envs.gui.osworld_task import OSWorldTask, needs_profile
from evaluators import run_check

LAUNCH = {"type": "launch", "parameters": {"command": ["google-chrome", "--remote-debugging-port=1337"]}}
FORWARD = {"type": "launch", "parameters": {"command": ["socat", "tcp-listen:9222,fork", "tcp:localhost:1337"]}}
STOP = {"type": "launch", "parameters": {"command": ["pkill", "chrome"]}}


def chrome_task(uuid: str, evaluator: dict, config: list | None = None, **extra) -> dict:
    base = {"id": uuid, "snapshot": "chrome", "instruction": "Do it.", "source": "test", "related_apps": ["chrome"]}
    return {**base, "config": [LAUNCH, FORWARD] if config is None else config, "evaluator": evaluator, **extra}


def rule(func: str, getter: str, rules: dict) -> dict:
    return {"func": func, "result": {"type": getter}, "expected": {"type": "rule", "rules": rules}}


@pytest.fixture
def profile(tmp_path: Path) -> Path:
    """A Chromium profile directory as the browser leaves it: JSON files and two SQLite databases."""
    default = tmp_path / "Default"
    default.mkdir()
    bar = {"children": [{"type": "url", "name": "A", "url": "file:///home/user/a.html"}, {"type": "folder", "name": "Liked Authors", "children": [{"type": "url", "url": "https://x.example/1"}, {"type": "url", "url": "https://x.example/2"}]}]}  # fmt: skip
    (default / "Bookmarks").write_text(json.dumps({"roots": {"bookmark_bar": bar, "other": {"children": []}}}))
    prefs = {"profile": {"name": "Work"}, "webkit": {"webprefs": {"default_font_size": 20}}, "enable_do_not_track": True}  # fmt: skip
    prefs |= {"default_search_provider_data": {"template_url_data": {"short_name": "Bing"}}}
    prefs |= {"safebrowsing": {"enabled": False}, "session": {"restore_on_startup": 5}}
    prefs |= {"browser": {"theme": {"color_scheme2": 2}}}
    (default / "Preferences").write_text(json.dumps(prefs))
    (tmp_path / "Local State").write_text(json.dumps({"intl": {"app_locale": "de"}}))
    with sqlite3.connect(default / "History") as db:
        db.execute("CREATE TABLE urls (id INTEGER PRIMARY KEY, url TEXT, title TEXT, last_visit_time INTEGER)")
        db.execute("INSERT INTO urls (url, title, last_visit_time) VALUES ('https://www.amazon.example/x', 'A', 1)")
    with sqlite3.connect(default / "Cookies") as db:
        db.execute("CREATE TABLE cookies (creation_utc INTEGER, host_key TEXT, name TEXT)")
        db.execute("INSERT INTO cookies VALUES (1, '.shop.example', 'sid')")
    return tmp_path


def score(profile: Path, func: str, getter: str, rules: dict) -> float:
    ref = {"chrome": getter, "profile": str(profile)}
    return run_check("osworld", {"metrics": [{"func": func, "result": ref, "expected": {"value": rules}}]})["score"]


def test_profile_getters_read_the_profiles_files(profile):
    assert score(profile, "exact_match", "profile_name", {"expected": "Work"}) == 1.0
    assert score(profile, "exact_match", "profile_name", {"expected": "Home"}) == 0.0
    assert score(profile, "match_in_list", "default_search_engine", {"expected": ["Bing", "bing"]}) == 1.0
    assert score(profile, "exact_match", "enable_do_not_track", {"expected": "true"}) == 1.0
    assert score(profile, "exact_match", "enable_safe_browsing", {"expected": "false"}) == 1.0
    assert score(profile, "exact_match", "new_startup_page", {"expected": "true"}) == 1.0
    assert score(profile, "exact_match", "data_delete_automacally", {"expected": "true"}) == 0.0
    assert score(profile, "match_in_list", "chrome_appearance_mode_ui", {"expected": ["dark"]}) == 1.0
    assert score(profile, "exact_match", "chrome_language", {"expected": "de"}) == 1.0
    assert score(profile, "check_font_size", "chrome_font_size", {"type": "value", "value": 20}) == 1.0
    assert score(profile, "check_font_size", "chrome_font_size", {"type": "range", "min": 16, "max": 20}) == 0.0
    urls = {"type": "bookmark_bar_websites_urls", "urls": ["file:///home/user/a.html"]}
    assert score(profile, "is_expected_bookmarks", "bookmarks", urls) == 1.0
    assert score(profile, "is_expected_bookmarks", "bookmarks", {**urls, "urls": ["file:///b.html"]}) == 0.0
    folders = {"type": "bookmark_bar_folders_names", "names": ["Liked Authors"]}
    assert score(profile, "is_expected_bookmarks", "bookmarks", folders) == 1.0
    liked = {"type": "liked_authors_websites_urls", "urls": [["https://x.example/1", "https://y.example/1"], "https://x.example/2"]}  # fmt: skip
    assert score(profile, "is_expected_bookmarks", "bookmarks", liked) == 1.0
    liked["urls"] = ["https://x.example/1"]  # an extra URL in the folder
    assert score(profile, "is_expected_bookmarks", "bookmarks", liked) == 0.0
    assert score(profile, "check_history_deleted", "history", {"type": "keywords", "keywords": ["amazon"]}) == 0.0
    assert score(profile, "check_history_deleted", "history", {"type": "keywords", "keywords": ["ebay"]}) == 1.0
    assert score(profile, "is_cookie_deleted", "cookie_data", {"type": "domains", "domains": ["shop.example"]}) == 0.0
    assert score(profile, "is_cookie_deleted", "cookie_data", {"type": "domains", "domains": [".other.example"]}) == 1.0


def test_a_missing_profile_gives_upstreams_fallbacks(tmp_path):
    assert score(tmp_path, "exact_match", "enable_do_not_track", {"expected": "false"}) == 1.0
    assert score(tmp_path, "match_in_list", "default_search_engine", {"expected": ["Google"]}) == 1.0
    assert score(tmp_path, "is_expected_bookmarks", "bookmarks", {"type": "bookmark_bar_websites_urls", "urls": []}) == 0.0  # fmt: skip
    assert score(tmp_path, "check_history_deleted", "history", {"type": "keywords", "keywords": ["x"]}) == 0.0


def test_the_importer_sorts_chrome_tasks_by_what_they_need(tmp_path):
    none = AssetIndex(None)
    bookmarks = chrome_task("b", rule("is_expected_bookmarks", "bookmarks", {"type": "bookmark_bar_folders_names", "names": []}), config=[LAUNCH, FORWARD, STOP, LAUNCH])  # fmt: skip
    assert classify("chrome", bookmarks, none).status == "imported"
    tabs = {"type": "chrome_open_tabs", "parameters": {"urls_to_open": ["https://shop.example.com/a", "file:///home/user/x.html"]}}  # fmt: skip
    online = chrome_task("n", rule("exact_match", "profile_name", {"expected": "x"}), config=[LAUNCH, tabs])
    scan = classify("chrome", online, none)
    assert (scan.status, scan.reasons) == ("network", ["network: host shop.example.com"])
    apt = {"type": "execute", "parameters": {"command": "echo p | sudo -S apt install jq -y", "shell": True}}
    live = chrome_task(
        "l", rule("is_expected_active_tab", "active_tab_info", {"type": "url", "url": "x"}), config=[apt]
    )
    scan = classify("chrome", live, none)
    assert scan.status == "network" and scan.reasons[0] == "network: apt"
    assert "also getter 'active_tab_info'" in scan.reasons
    offline = chrome_task("o", rule("is_expected_active_tab", "active_tab_info", {"type": "url", "url": "x"}))
    assert classify("chrome", offline, none).reasons == ["metric 'is_expected_active_tab'", "getter 'active_tab_info'"]
    edit = {"type": "execute", "parameters": {"command": "echo {} > ~/.config/google-chrome/Default/Preferences", "shell": True}}  # fmt: skip
    edits = chrome_task("e", rule("exact_match", "profile_name", {"expected": "x"}), config=[edit, LAUNCH])
    assert classify("chrome", edits, none).reasons == ["config edits ~/.config/google-chrome (our Chromium's profile is ~/.config/chromium)"]  # fmt: skip
    path = tmp_path / "t.json"
    path.write_text(json.dumps(bookmarks))
    args = OSWorldTask(path, None).check_args()
    assert args["metrics"][0]["result"] == {"chrome": "bookmarks", "profile": "/home/user/.config/chromium"}
    assert needs_profile(args)


PAGE = "https://pages.example.invalid/chrome/{}.html"
BOOKMARK = chrome_task(
    "c1-bookmark",
    rule(
        "is_expected_bookmarks",
        "bookmarks",
        {"type": "bookmark_bar_websites_urls", "urls": ["file:///home/user/a.html"]},
    ),  # fmt: skip
    config=[
        {"type": "download", "parameters": {"files": [{"url": PAGE.format(n), "path": f"{n}.html"} for n in "ab"]}},
        {
            "type": "launch",
            "parameters": {"command": ["google-chrome", "--start-maximized", "file:///home/user/a.html"]},
        },  # fmt: skip
        FORWARD,
        {"type": "sleep", "parameters": {"seconds": 2}},
    ],
    instruction="Bookmark the page Chromium shows (a.html) on the bookmarks bar.",
)
CLICK_PAGE = {"name": "computer", "arguments": {"action": "left_click", "coordinate": [400, 400]}}
ACTIONS = {
    # the bubble's folder box is on "Other bookmarks" in a new profile: Tab to it, Up to "Bookmarks bar", Tab twice to Done, Enter
    "oracle": [
        CLICK_PAGE,
        "pyautogui.hotkey('ctrl', 'd')",
        "WAIT",
        "pyautogui.press(['tab', 'up', 'tab', 'tab'])",
        "WAIT",
        "pyautogui.press('enter')",
        "WAIT",
        "DONE",
    ],
    "noop": ["DONE"],
    "wrong": [
        "pyautogui.hotkey('ctrl', 'l')",
        {"action_type": "TYPING", "text": "file:///home/user/b.html\n"},
        "WAIT",
        CLICK_PAGE,
        "pyautogui.hotkey('ctrl', 'd')",
        "WAIT",
        "pyautogui.press(['tab', 'up', 'tab', 'tab'])",
        "WAIT",
        "pyautogui.press('enter')",
        "WAIT",
        "DONE",
    ],
}


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("variant", ["oracle", "noop", "wrong"])
def test_a_bookmark_made_with_ctrl_d_is_read_from_the_profile_after_the_browser_stops(tmp_path, gui_image, variant):
    import agentenvs
    from agentenvs.envs.gui.importer import import_tree

    src, assets = tmp_path / "src", tmp_path / "assets"
    (src / "chrome").mkdir(parents=True)
    (src / "chrome" / "c1.json").write_text(json.dumps(BOOKMARK))
    for n in "ab":
        page = assets / "pages.example.invalid" / "chrome" / f"{n}.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(f"<html><head><title>Page {n}</title></head><body><h1>Page {n}</h1></body></html>")
    [scan] = import_tree(src, tmp_path / "t", assets)
    assert scan.status == "imported", scan.reasons
    env = agentenvs.make(agentenvs.load_task(tmp_path / "t" / scan.task_id), screen_size=(800, 600))
    try:
        env.reset(seed=0)
        info: dict = {}
        for action in ACTIONS[variant]:
            *_, info = env.step(action)
    finally:
        env.close()
    assert info["score"] == (1.0 if variant == "oracle" else 0.0), info["verifier_detail"]
