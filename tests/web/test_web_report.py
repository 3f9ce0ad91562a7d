"""A web run's report.html, opened in Chromium: each step of the trajectory shows its screenshot."""

from __future__ import annotations

import asyncio
import base64
import io

import numpy as np
from PIL import Image

from agentenvs.harness.config import PolicySpec, RunConfig
from agentenvs.harness.report import write_report
from agentenvs.harness.rundir import RunDir
from agentenvs.harness.runner import Runner
from agentenvs.harness.scoring import write_summary

TASK = "web/shop-buy-0"
VIEWPORT = (800, 600)


def test_each_step_of_a_web_episode_shows_its_screenshot(tmp_path) -> None:
    from playwright.sync_api import sync_playwright

    from agentenvs.envs.web.browser import CHROMIUM, CHROMIUM_ARGS

    config = RunConfig(
        tasks=[TASK],
        policy=PolicySpec(name="oracle"),
        env_kwargs={"screenshot": True, "viewport": VIEWPORT},
        trials=1,
        concurrency=1,
    )
    out = tmp_path / "run"
    asyncio.run(Runner(config, str(out)).run())
    run = RunDir(out)
    steps = run.read_steps(TASK, 0)
    assert len(steps) >= 3 and steps[-1]["info"]["score"] == 1.0
    path = write_report(run, write_summary(run))
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto(f"file://{path}")
            shown = page.locator("section.episode").first
            assert shown.locator(".step").count() == len(steps)
            shots = shown.locator(".step img.shot")
            assert shots.count() == len(steps), "one screenshot per step, the reset's included"
            sources = [shots.nth(i).get_attribute("src") or "" for i in range(shots.count())]
        finally:
            browser.close()
    pixels = [np.asarray(Image.open(io.BytesIO(base64.b64decode(src.split(",", 1)[1])))) for src in sources]
    assert all(p.shape[:2] == (VIEWPORT[1], VIEWPORT[0]) for p in pixels)
    assert any(not np.array_equal(pixels[0], p) for p in pixels[1:]), "the pages the agent went through differ"
