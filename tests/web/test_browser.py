"""The web family's Chromium switches: Playwright's own feature switches kept, the omnibox's popups off."""

from __future__ import annotations

import re
from pathlib import Path

import playwright

from agentenvs.envs.web.browser import CHROMIUM_ARGS, OMNIBOX_POPUPS, PLAYWRIGHT_DISABLED_FEATURES, shared_browser


def _playwrights_disabled_features() -> set[str]:
    """The features the installed Playwright's launcher turns off (its ``disabledFeatures`` list)."""
    driver = Path(playwright.__file__).parent / "driver"
    for source in driver.rglob("*.js"):
        text = source.read_text(encoding="utf-8", errors="replace")
        found = re.search(r"\bdisabledFeatures\s*=\s*\[(.*?)\]", text, re.S)
        if found:
            body = re.sub(r"//[^\n]*", "", found.group(1))
            return {name for name in re.findall(r'"([^"]*)"', body) if name}
    raise AssertionError(f"no disabledFeatures list in Playwright's driver under {driver}")


def test_our_disable_features_switch_keeps_every_feature_playwright_turns_off() -> None:
    # Chromium honours only the last --disable-features; ours follows Playwright's and must not undo it.
    switches = [arg for arg in CHROMIUM_ARGS if arg.startswith("--disable-features=")]
    assert len(switches) == 1
    ours = set(switches[0].partition("=")[2].split(","))
    theirs = _playwrights_disabled_features()
    assert len(theirs) >= 5
    assert theirs <= ours, f"add {sorted(theirs - ours)} to PLAYWRIGHT_DISABLED_FEATURES"
    assert set(PLAYWRIGHT_DISABLED_FEATURES) | set(OMNIBOX_POPUPS) == ours


def test_a_new_context_opens_no_browser_ui_of_its_own() -> None:
    def targets(browser) -> list[dict]:
        context = browser.new_context()
        try:
            context.new_page().goto("data:text/html,<p>hi</p>")
            session = browser.new_browser_cdp_session()
            try:
                return session.send("Target.getTargets")["targetInfos"]
            finally:
                session.detach()
        finally:
            context.close()

    found = shared_browser(0).call(targets)
    assert [t for t in found if t["type"] == "page" and t["url"].startswith("data:")], found
    assert not [t for t in found if t["type"] == "browser_ui" or "top-chrome" in t["url"]], found
