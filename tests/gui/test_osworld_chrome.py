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
    prefs = json.loads((profile / "Default/Preferences").read_text())
    prefs["profile"]["default_content_setting_values"] = {"has_migrated_local_network_access": True}  # a new profile
    (profile / "Default/Preferences").write_text(json.dumps(prefs))
    assert score(profile, "exact_match", "data_delete_automacally", {"expected": "false"}) == 1.0
    prefs["profile"]["default_content_setting_values"]["cookies"] = 4  # delete site data on close
    (profile / "Default/Preferences").write_text(json.dumps(prefs))
    assert score(profile, "exact_match", "data_delete_automacally", {"expected": "true"}) == 1.0
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
    live = chrome_task("l", rule("is_expected_active_tab", "url_dashPart", {"type": "url", "url": "x"}), config=[apt])
    scan = classify("chrome", live, none)
    assert scan.reasons == ["network: apt", "also getter 'url_dashPart'"] and scan.status == "network"
    offline = chrome_task("o", rule("is_expected_active_tab", "url_dashPart", {"type": "url", "url": "x"}))
    assert classify("chrome", offline, none).reasons == ["getter 'url_dashPart'"]
    tabs_task = chrome_task("t", rule("is_expected_active_tab", "active_tab_info", {"type": "url", "url": "x"}))
    assert classify("chrome", tabs_task, none).status == "imported"
    edit = {"type": "execute", "parameters": {"command": "echo {} > ~/.config/google-chrome/Default/Preferences", "shell": True}}  # fmt: skip
    edits = chrome_task("e", rule("exact_match", "profile_name", {"expected": "x"}), config=[edit, LAUNCH])
    assert classify("chrome", edits, none).status == "imported"
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
#: The bubble's folder box is on "Other bookmarks" in a new profile: Tab to it, Up to "Bookmarks bar",
#: Tab twice to Done, Enter.
TO_BOOKMARKS_BAR = [
    CLICK_PAGE,
    "pyautogui.hotkey('ctrl', 'd')",
    "WAIT",
    "pyautogui.press(['tab', 'up', 'tab', 'tab'])",
    "WAIT",
    "pyautogui.press('enter')",
    "WAIT",
]
ACTIONS = {
    "oracle": [*TO_BOOKMARKS_BAR, "DONE"],
    "noop": ["DONE"],
    "wrong": [
        "pyautogui.hotkey('ctrl', 'l')",
        {"action_type": "TYPING", "text": "file:///home/user/b.html\n"},
        "WAIT",
        *TO_BOOKMARKS_BAR,
        "DONE",
    ],
}


FILE = "file:///home/user/{}.html"
TABS = chrome_task(
    "c2-tabs",
    {
        "func": ["is_expected_tabs", "is_expected_active_tab"],
        "result": [{"type": "open_tabs_info"}, {"type": "active_tab_info"}],
        "expected": [
            {"type": "rule", "rules": {"type": "url", "urls": [FILE.format(n) for n in "abc"]}},
            {"type": "rule", "rules": {"type": "url", "url": FILE.format("c")}},
        ],
    },
    config=[
        {"type": "download", "parameters": {"files": [{"url": PAGE.format(n), "path": f"{n}.html"} for n in "abc"]}},
        {
            "type": "launch",
            "parameters": {
                "command": ["google-chrome", "--remote-debugging-port=1337", "--start-maximized", FILE.format("a")]
            },
        },  # fmt: skip
        FORWARD,
        {"type": "chrome_open_tabs", "parameters": {"urls_to_open": [FILE.format("b")]}},
    ],
    instruction="Keep the open tabs and open file:///home/user/c.html in a new tab.",
)
TAB_ACTIONS = {
    "oracle": [
        "pyautogui.hotkey('ctrl', 't')",
        "WAIT",
        {"action_type": "TYPING", "text": FILE.format("c") + "\n"},
        "WAIT",
        "DONE",
    ],  # fmt: skip
    "noop": ["DONE"],
    "wrong": [
        "pyautogui.hotkey('ctrl', 'l')",
        {"action_type": "TYPING", "text": FILE.format("c") + "\n"},
        "WAIT",
        "DONE",
    ],  # fmt: skip
}


def run_chrome_task(tmp_path: Path, data: dict, actions: list) -> dict:
    """Import ``data`` with its local pages as assets, play ``actions`` on a desktop, return the last info."""
    import agentenvs
    from agentenvs.envs.gui.importer import import_tree

    src, assets = tmp_path / "src", tmp_path / "assets"
    (src / "chrome").mkdir(parents=True)
    (src / "chrome" / "c.json").write_text(json.dumps(data))
    for n in "abc":
        page = assets / "pages.example.invalid" / "chrome" / f"{n}.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(f"<html><head><title>Page {n}</title></head><body><h1>Page {n}</h1></body></html>")
    [scan] = import_tree(src, tmp_path / "t", assets)
    assert scan.status == "imported", scan.reasons
    env = agentenvs.make(agentenvs.load_task(tmp_path / "t" / scan.task_id), screen_size=(800, 600))
    try:
        env.reset(seed=0)
        info: dict = {}
        for action in actions:
            *_, info = env.step(action)
    finally:
        env.close()
    return info


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("variant", ["oracle", "noop", "wrong"])
def test_a_bookmark_made_with_ctrl_d_is_read_from_the_profile_after_the_browser_stops(tmp_path, gui_image, variant):
    info = run_chrome_task(tmp_path, BOOKMARK, ACTIONS[variant])
    assert info["score"] == (1.0 if variant == "oracle" else 0.0), info["verifier_detail"]


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("variant", ["oracle", "noop", "wrong"])
def test_open_tabs_are_read_by_the_probe_from_chromiums_devtools_port(tmp_path, gui_image, variant):
    """A new tab by Ctrl+T scores 1; a no-op (two tabs) and replacing the active tab's page (two tabs) 0."""
    info = run_chrome_task(tmp_path, TABS, TAB_ACTIONS[variant])
    assert info["score"] == (1.0 if variant == "oracle" else 0.0), info["verifier_detail"]


def test_chrome_steps_become_what_they_mean_on_our_chromium(tmp_path):
    """socat's port forward is skipped, ``pkill chrome`` stops Chromium, upstream's profile path is linked to ours."""
    from agentenvs.envs.gui import chrome

    calls: list[tuple[str, dict]] = []

    class Client:
        def call(self, op: str, **kw):
            calls.append((op, kw))
            return {"returncode": 0}, b""

    edit = {"type": "execute", "parameters": {"command": "echo {} > ~/.config/google-chrome/Default/Preferences", "shell": True}}  # fmt: skip
    path = tmp_path / "t.json"
    path.write_text(json.dumps(chrome_task("s", rule("exact_match", "profile_name", {"expected": "x"}))))
    OSWorldTask(path, None).run_steps(Client(), [edit, LAUNCH, FORWARD, STOP], {})  # type: ignore[arg-type]
    assert [(op, kw.get("command")) for op, kw in calls] == [
        ("run", chrome.LINK_PROFILE),
        ("run", edit["parameters"]["command"]),
        ("launch", LAUNCH["parameters"]["command"]),
        ("run", chrome.STOP_BROWSER),
    ]


def test_tab_getters_become_the_probes_tabs_and_their_metrics_score_as_upstream():
    from agentenvs.envs.gui.osworld_task import fill_live, needs_live

    parse = {"type": "active_tab_url_parse", "parse_keys": ["q", "from"], "replace": {"from": "origin"}}
    evaluator = {
        "func": [
            "is_expected_tabs",
            "is_expected_active_tab",
            "check_direct_json_object",
            "is_expected_url_pattern_match",
        ],  # fmt: skip
        "result": [
            {"type": "open_tabs_info"},
            {"type": "active_tab_info"},
            parse,
            {"type": "active_url_from_accessTree"},
        ],  # fmt: skip
        "expected": [
            {
                "type": "rule",
                "rules": {
                    "type": "url",
                    "urls": ["https://www.shop.example.com/?q=tea&from=NYC", "https://b.example.org/x"],
                },
            },  # fmt: skip
            # upstream's compare_urls drops www. and the public suffix: .net matches .com
            {"type": "rule", "rules": {"type": "url", "url": "https://shop.example.net/?q=tea&from=NYC"}},
            {"type": "rule", "rules": {"expected": {"q": "tea", "origin": "NYC"}}},
            {"type": "rule", "rules": {"expected": [r"q=tea", r"^https://"]}},
        ],
    }
    loaded = OSWorldTask.__new__(OSWorldTask)  # the evaluator only
    loaded.data = chrome_task("t", evaluator)
    args = loaded.check_args()
    assert needs_live(args)["tabs"] == 1337
    tabs = [{"title": "Shop", "url": "https://shop.example.com/?q=tea&from=NYC"}, {"title": "B", "url": "https://b.example.co.uk/x"}]  # fmt: skip
    fill_live(args, {"tabs": tabs})
    assert [m["result"]["value"] for m in args["metrics"]][1:3] == [tabs[0], {"q": "tea", "origin": "NYC"}]
    assert run_check("osworld", args)["score"] == 1.0
    for value in ([tabs[1], tabs[0]], tabs[:1], [{"title": "", "url": "https://shop.example.com/?q=tea"}, tabs[1]]):
        args = loaded.check_args()  # another tab active, one tab closed, the query changed
        fill_live(args, {"tabs": value})
        assert run_check("osworld", args)["score"] == 0.0, value
    args = loaded.check_args()
    fill_live(args, {"tabs": None})  # the probe read nothing: every tab getter None, scored 0
    assert run_check("osworld", args)["score"] == 0.0


def test_the_probe_asks_only_a_port_chromium_holds(tmp_path):
    """A server that is not Chromium (the agent's, say) on the DevTools port is not read."""
    import http.server
    import threading

    from agentenvs.envs.gui.guest import probe

    server = http.server.HTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        port = server.server_address[1]
        assert probe._listener(port) is not None  # it is found listening ...
        assert probe.tabs(port) is None  # ... and refused: its process is not /usr/lib/chromium/chromium
    finally:
        server.shutdown()
    assert probe.tabs(port) is None  # nothing listens


SEEDED = chrome_task(
    "c3-seeded",
    rule("exact_match", "enable_do_not_track", {"expected": "true"}),
    config=[
        {
            "type": "execute",
            "parameters": {
                "command": "mkdir -p ~/.config/google-chrome/Default && echo '{\"enable_do_not_track\": true}' > ~/.config/google-chrome/Default/Preferences",
                "shell": True,
            },
        },  # fmt: skip
        LAUNCH,
        FORWARD,
        STOP,
        LAUNCH,
        {"type": "sleep", "parameters": {"seconds": 1}},
    ],
)


@pytest.mark.docker
@pytest.mark.slow
def test_preferences_written_at_upstreams_path_are_what_chromium_reads_and_keeps(tmp_path, gui_image):
    """The config edits ~/.config/google-chrome (linked to our profile), Chromium starts, stops, starts again;
    the verifier stops it and reads the setting back (without the link Chromium never sees it: "false", 0)."""
    info = run_chrome_task(tmp_path, SEEDED, ["DONE"])
    assert info["score"] == 1.0, info["verifier_detail"]


FONT = chrome_task(
    "c4-font",
    rule("check_font_size", "chrome_font_size", {"type": "value", "value": 20}),
    config=[
        {"type": "launch", "parameters": {"command": ["google-chrome", "--start-maximized"]}},
        {"type": "sleep", "parameters": {"seconds": 1}},
    ],
    instruction="Set Chromium's font size to 20.",
)
FONT_OPEN = ["pyautogui.hotkey('ctrl', 'l')", {"action_type": "TYPING", "text": "chrome://settings/fonts\n"}]
FONT_OPEN += ["WAIT"] * 5  # the settings page takes seconds to draw on a loaded machine
KNOB = {"name": "computer", "arguments": {"action": "left_click", "coordinate": [577, 240]}}  # 16 at 800x600
FONT_ACTIONS = {
    "oracle": [*FONT_OPEN, KNOB, "pyautogui.press(['right', 'right', 'right'])", "WAIT", "DONE"],  # 17, 18, 20
    "noop": ["DONE"],
    "wrong": [*FONT_OPEN, KNOB, "pyautogui.press('right')", "WAIT", "DONE"],  # 17
}


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("variant", ["oracle", "noop", "wrong"])
def test_a_font_size_set_on_the_settings_page_is_read_from_preferences(tmp_path, gui_image, variant):
    """The slider moved to 20 scores 1; untouched (16) and one step (17) score 0."""
    info = run_chrome_task(tmp_path, FONT, FONT_ACTIONS[variant])
    assert info["score"] == (1.0 if variant == "oracle" else 0.0), info["verifier_detail"]
