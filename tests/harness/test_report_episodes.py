"""What a person reads of each episode, in report.html (headless Chromium) and in ``agentenvs show``.

Real runs: a terminal task on the local sandbox and a text game replayed from an
edited oracle run, a SWE task's oracle, and the toy family played by an
OpenAI-compatible server that reports token usage. Both views take their text
from ``harness/rendering.py``; the tests check they agree step for step.
"""

from __future__ import annotations

import asyncio
import json
import re
from io import StringIO

from conftest import ALL_TOY, rewrite_steps, run_config
from markupsafe import escape
from rich.console import Console
from servers import Faults, chat_app, serve
from test_report import ARGS, CHROMIUM

from agentenvs.harness.rendering import action_text, outcome
from agentenvs.harness.report import write_report
from agentenvs.harness.rundir import RunDir
from agentenvs.harness.runner import Runner
from agentenvs.harness.views import show_trajectory

TERMINAL = "terminal/fix-permissions"
GAME = "textgame/coin-easy-0"
#: A shell command with both quotes and HTML's special characters: shown verbatim, never as JSON.
QUOTED = """echo "it's <b>bold</b> & so on" | tr a-z A-Z"""


def _show(run: RunDir, task_id: str) -> str:
    out = StringIO()
    show_trajectory(run, task_id, 0, Console(file=out, width=4000, color_system=None))
    return out.getvalue()


def _shown_actions(text: str) -> dict[int, str]:
    """Step number -> action text, from ``show``'s ``step N kind: action`` lines."""
    found = re.findall(r"^step (\d+) [\w-]+: (.*?)(?:  \[\d+ tokens.*\])?$", text, flags=re.M)
    return {int(n): action for n, action in found}


def _report_actions(page, section: str) -> dict[int, str]:
    steps = page.locator(f"#{section} .step")
    actions = {}
    for i in range(steps.count()):
        code = steps.nth(i).locator("code.action")
        if code.count():
            actions[int(steps.nth(i).get_attribute("data-step"))] = code.inner_text()
    return actions


def _section(page, task_id: str) -> str:
    return page.locator(f'section.episode[data-task="{task_id}"]').get_attribute("id")


#: The terminal episode's actions: the quoted command, a partial fix (so the verifier passes some checks
#: and fails others), done.
CHMOD = "chmod 755 /app/deploy/bin/*.sh"


def _replayed_run(tmp_path) -> RunDir:
    """An oracle run of a terminal task and a text game, edited (the terminal's actions replaced, a ``look``
    before the game's solution), then replayed for real: the replay's run directory is what the tests read."""
    source = tmp_path / "source"
    asyncio.run(Runner(run_config([TERMINAL, GAME], "oracle"), str(source)).run())
    bash = [{"name": "bash", "arguments": {"command": c}} for c in (QUOTED, CHMOD)]
    for task_id, edit in (
        (TERMINAL, lambda steps: [*bash, "done"]),
        (GAME, lambda steps: ["look", *[s["action"] for s in steps[1:]]]),
    ):
        rewrite_steps(
            source, task_id, 0,
            lambda steps, edit=edit: [steps[0], *({"step": n, "action": a} for n, a in enumerate(edit(steps), start=1))],
        )  # fmt: skip
    out = tmp_path / "replay"
    config = run_config([TERMINAL, GAME], "replay", options={"run": str(source)})
    asyncio.run(Runner(config, str(out)).run())
    return RunDir(out)


def test_report_shows_instruction_verifier_readable_actions_and_filters(tmp_path):
    from playwright.sync_api import sync_playwright

    run = _replayed_run(tmp_path)
    records = {e["task_id"]: e for e in run.read_episodes()}
    assert records[TERMINAL]["success"] is False and records[GAME]["success"] is True
    assert run.read_steps(TERMINAL, 0)[0]["instruction"].startswith("The deployment bundle")
    path = write_report(run)
    raw = open(path, encoding="utf-8").read()
    assert "\\&#34;" not in raw and '\\"' not in raw  # no JSON escapes anywhere in the page
    assert str(escape(QUOTED)) in raw  # HTML-escaped once, nothing more
    shown_terminal, shown_game = _show(run, TERMINAL), _show(run, GAME)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page()
            page.goto(f"file://{path}")
            terminal, game = _section(page, TERMINAL), _section(page, GAME)
            assert page.locator(f"#{terminal}").get_attribute("data-outcome") == "fail"
            assert page.locator(f"#{terminal}").get_attribute("data-family") == "terminal"
            assert page.locator(f"#{game}").get_attribute("data-outcome") == "success"
            assert page.locator(f"#{game}").get_attribute("data-family") == "textgame"
            page.select_option("#episode-select", terminal)
            shown = page.locator(f"#{terminal}")
            assert "/app/deploy" in shown.locator("pre.instruction-text").inner_text()
            verifier = shown.locator("pre.verifier-detail").inner_text()
            assert "PASS deploy_sh" in verifier and "FAIL secrets_dir" in verifier
            actions = _report_actions(page, terminal)
            assert actions[1] == QUOTED  # verbatim, as typed
            assert actions[2] == CHMOD and actions[3] == "done"
            assert shown.locator('.step[data-step="1"] .kind').inner_text() == "bash"
            assert "IT'S <B>BOLD</B> & SO ON" in shown.locator('.step[data-step="1"] pre.obs').inner_text()
            assert actions == _shown_actions(shown_terminal)  # the console says the same, step for step
            page.select_option("#episode-select", game)
            told = run.read_steps(GAME, 0)[0]["instruction"]
            assert page.locator(f"#{game} pre.instruction-text").inner_text().strip() == told.strip()
            assert page.locator(f"#{game} pre.verifier-detail").inner_text()
            game_actions = _report_actions(page, game)
            assert game_actions == _shown_actions(shown_game) and game_actions[1] == "look" and len(game_actions) > 1

            counts = {o: page.locator(f'#filter-outcome input[value="{o}"]').count() for o in
                      ("success", "fail", "agent-fault", "infra")}  # fmt: skip
            assert counts == {"success": 1, "fail": 1, "agent-fault": 1, "infra": 1}
            page.select_option("#episode-select", terminal)
            page.uncheck('input.filter[data-filter="outcome"][value="fail"]')
            assert page.locator("#filter-count").inner_text() == "1 of 2 episodes"
            assert page.locator(f"#{game}").is_visible() and not page.locator(f"#{terminal}").is_visible()
            assert page.locator(f'#episode-select option[value="{terminal}"]').get_attribute("hidden") is not None
            page.check('input.filter[data-filter="outcome"][value="fail"]')
            page.select_option("#episode-select", game)
            page.uncheck('input.filter[data-filter="family"][value="textgame"]')
            assert page.locator(f"#{terminal}").is_visible() and not page.locator(f"#{game}").is_visible()
            page.uncheck('input.filter[data-filter="family"][value="terminal"]')
            assert page.locator("#no-match").is_visible() and page.locator("section.episode:visible").count() == 0
        finally:
            browser.close()
    assert "The deployment bundle" in shown_terminal and "FAIL secrets_dir" in shown_terminal
    assert f"step 1 bash: {QUOTED}" in shown_terminal


def test_tokens_per_step_from_the_policy_usage(tmp_path):
    from playwright.sync_api import sync_playwright

    out = tmp_path / "run"
    with serve(chat_app(Faults())) as url:
        options = {"model": "scripted", "base_url": f"{url}/v1", "request_timeout_sec": 5.0}
        asyncio.run(Runner(run_config(ALL_TOY, "openai", options=options), str(out)).run())
    run = RunDir(out)
    step = run.read_steps("toy/reach-2", 0)[1]
    assert step["policy"]["usage"] == {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    path = write_report(run)
    console = _show(run, "toy/reach-2")
    assert "step 1 add: add(n=1)  [15 tokens (10 prompt, 5 completion)]" in console
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page()
            page.goto(f"file://{path}")
            section = _section(page, "toy/reach-2")
            page.select_option("#episode-select", section)
            first = page.locator(f'#{section} .step[data-step="1"]')
            assert first.locator(".tokens").inner_text() == "15 tokens"
            assert first.locator(".tokens").get_attribute("title") == "prompt 10, completion 5"
            steps = page.locator(f"#{section} .step").count() - 1
            assert page.locator(f"#{section} > p .tokens").inner_text() == f"{15 * steps} tokens"
            assert _report_actions(page, section) == _shown_actions(console)
            assert _report_actions(page, section)[1] == "add(n=1)"
        finally:
            browser.close()


def test_a_swe_episode_shows_its_patch_as_a_diff(tmp_path):
    from playwright.sync_api import sync_playwright

    task = "swe/agentenvs__calcy-0001"
    asyncio.run(Runner(run_config([task], "oracle"), str(tmp_path / "run")).run())
    run = RunDir(tmp_path / "run")
    (record,) = run.read_episodes()
    assert record["success"] is True
    path = write_report(run)
    console = _show(run, task)
    assert "submitted patch" in console and '+        if token.value == "**":' in console
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page()
            page.goto(f"file://{path}")
            diff = page.locator("section.episode:visible details.patch pre.diff")
            added = [diff.locator(".d-add").nth(i).inner_text() for i in range(diff.locator(".d-add").count())]
            removed = [diff.locator(".d-del").nth(i).inner_text() for i in range(diff.locator(".d-del").count())]
            assert '+        if token.value == "**":' in added
            assert removed == ["-        right = self.expression(power + 1)"]
            assert diff.locator(".d-hunk").first.inner_text().startswith("@@ ")
            colour = diff.locator(".d-add").first.evaluate("e => getComputedStyle(e).backgroundColor")
            assert colour != diff.locator(".d-hunk").first.evaluate("e => getComputedStyle(e).backgroundColor")
            assert "FAIL_TO_PASS" in page.locator("section.episode:visible pre.verifier-detail").inner_text()
            assert "**" in page.locator("section.episode:visible pre.instruction-text").inner_text()
        finally:
            browser.close()


def test_action_text_reads_as_typed():
    bash = {"name": "bash", "arguments": {"command": 'grep -n "a\\"b" f.txt'}}
    assert action_text(bash) == 'grep -n "a\\"b" f.txt'
    openai_form = {"type": "function", "function": {"name": "bash", "arguments": json.dumps({"command": "ls -la"})}}
    assert action_text(openai_form) == "ls -la"
    edit = {"name": "str_replace_editor", "arguments": {"command": "create", "path": "/a.py", "file_text": "x = 1\n"}}
    assert action_text(edit) == "str_replace_editor(command='create', path='/a.py', file_text='''x = 1\n''')"
    assert action_text({"name": "computer", "arguments": {"action": "left_click", "coordinate": [3, 4]}}) == (
        "computer(action='left_click', coordinate=[3, 4])"
    )
    assert action_text({"name": "done", "arguments": {}}) == "done()"
    assert action_text({"name": "bash", "arguments": "{not json"}) == "bash({not json)"
    assert action_text("click('a12')") == "click('a12')" and action_text("n[c]") == "n[c]"
    assert action_text("") == action_text(None) == "(no action)"


def test_outcomes_separate_faults_from_failures():
    assert outcome({"status": "infra"}) == "infra"
    assert outcome({"status": "scored", "success": True}) == "success"
    assert (
        outcome({"status": "scored", "success": False, "error_kind": "agent", "error": "step budget spent"}) == "fail"
    )
    assert outcome({"status": "scored", "success": False, "error_kind": "timeout", "error": "time budget spent"}) == (
        "fail"
    )
    refused = {"status": "scored", "success": False, "error_kind": "agent", "error": "the policy refused at step 1"}
    assert outcome(refused) == "agent-fault"
