"""report.html opened in headless Chromium (Debian's, through Playwright): what renders."""

from __future__ import annotations

import asyncio

from conftest import ALL_TOY, run_config

from agentenvs.harness.report import write_report
from agentenvs.harness.rundir import RunDir
from agentenvs.harness.runner import Runner
from agentenvs.harness.scoring import write_summary

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip


def test_report_renders_tables_plots_and_trajectories(tmp_path):
    from playwright.sync_api import sync_playwright

    out = tmp_path / "run"
    asyncio.run(Runner(run_config(ALL_TOY, "random", trials=2), str(out)).run())
    run = RunDir(out)
    path = write_report(run, write_summary(run))
    requests: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page()
            page.on("request", lambda r: requests.append(r.url))
            page.goto(f"file://{path}")
            assert page.locator("h1").inner_text() == "agentenvs run report"
            assert page.locator("#policy-name").inner_text() == "random"
            assert page.locator("#overall-table tbody tr").count() == 1
            assert page.locator("#family-table tbody tr td").first.inner_text() == "toy"
            assert page.locator("#difficulty-table tbody tr").count() == 2
            assert page.locator("#task-table tbody tr").count() == 3
            for plot in ("success-by-family", "success-by-difficulty", "steps", "time"):
                box = page.locator(f"#plot-{plot} svg").bounding_box()
                assert box and box["width"] > 100 and box["height"] > 100
            options = page.locator("#episode-select option")
            assert options.count() == 6
            first = page.locator("section.episode").first
            assert first.is_visible()
            last_id = options.nth(5).get_attribute("value")
            page.select_option("#episode-select", last_id)
            shown = page.locator(f"#{last_id}")
            assert shown.is_visible() and not first.is_visible()
            steps = shown.locator(".step")
            assert steps.count() >= 2
            assert "counter=0 target=" in steps.first.locator("pre.obs").inner_text()
            assert shown.locator(".step").nth(1).locator("code.action").inner_text()
            assert "half" in steps.first.locator(".checks").inner_text()
            width = shown.locator("img.shot").first.evaluate("img => img.naturalWidth")
            assert width == 6  # the toy's 4x6 screenshot, decoded from the inline PNG
        finally:
            browser.close()
    assert all(url.startswith(("file:", "data:")) for url in requests), requests  # works offline


def test_report_headline_counts_infra_and_flags_and_badges_flagged_episodes(tmp_path, monkeypatch):
    import harness_toy
    from playwright.sync_api import sync_playwright
    from test_runner import KillingOracle

    root = tmp_path / "tasks"
    harness_toy.write_dir_task(root, 1, ['"add 1"', '"add 0"'])  # its sandbox is killed: infra
    harness_toy.write_dir_task(root, 2, ['"touch result.txt"', '"add 2"'])  # solved, but flagged
    harness_toy.write_dir_task(root, 3, ['"add 1"'])  # a failure
    harness_toy.register_dir(root)
    monkeypatch.setenv("TOY_PID_DIR", str(tmp_path))
    out = tmp_path / "run"
    tasks = ["toydir/reach-1", "toydir/reach-2", "toydir/reach-3"]
    config = run_config(tasks, "oracle", concurrency=1, max_infra_retries=0)
    asyncio.run(Runner(config, str(out), policy=KillingOracle(tmp_path, kills=1)).run())
    run = RunDir(out)
    path = write_report(run, write_summary(run))
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page()
            page.goto(f"file://{path}")
            headline = page.locator("#headline")
            assert headline.is_visible() and "warn" in (headline.get_attribute("class") or "")
            text = headline.inner_text()
            assert "Success 1/2 scored episodes (50.0%); 33.3% with infra counted as failure." in text
            assert "1 episode unresolved" in text and "--retry-infra" in text and "1 episode flagged" in text
            assert page.locator("#headline-infra").inner_text() == "1"
            assert page.locator("#headline-flagged").inner_text() == "1"
            assert page.locator("#overall-table td.infra-as-failure").inner_text().startswith("33.3%")
            assert page.locator("#flagged-table tbody tr").count() == 1
            assert "result-precreated" in page.locator("#flagged-table tbody tr").inner_text()
            options = page.locator("#episode-select option")
            labels = [options.nth(i).inner_text() for i in range(options.count())]
            assert [label.endswith("[flagged]") for label in labels] == [False, True, False], labels
            page.select_option("#episode-select", options.nth(1).get_attribute("value"))
            badge = page.locator("section.episode:visible .badge.flagged")
            assert badge.is_visible() and badge.inner_text() == "flagged"
            assert "result.txt existed" in page.locator("section.episode:visible .integrity-flags").inner_text()
            page.select_option("#episode-select", options.nth(2).get_attribute("value"))
            assert page.locator("section.episode:visible .badge.flagged").count() == 0
        finally:
            browser.close()
