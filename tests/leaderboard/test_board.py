"""The command line end to end: submit, verify --accept, build; and the boards shipped in leaderboards/."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lbkit import edit_json, edit_lines, make_board
from typer.testing import CliRunner

from agentenvs.cli import app
from agentenvs.core.registry import env_options
from agentenvs.leaderboard import accept, load_board, make_bundle, verify
from agentenvs.leaderboard.bundle import open_bundle
from agentenvs.leaderboard.verify import VERDICT_SUFFIX

cli = CliRunner()
ROOT = Path(__file__).resolve().parents[2]


def test_submit_verify_accept_and_build_render_the_verified_submission(boards, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTENVS_LEADERBOARDS", str(boards.root))
    board = make_board(boards.root, "render", forbid=["oracle", "replay"], replay=["textgame", "terminal"])

    submitted = cli.invoke(
        app, ["leaderboard", "submit", str(boards.random_run), "--board", "render", "--out", str(tmp_path / "b")]
    )
    assert submitted.exit_code == 0, submitted.output
    verified = cli.invoke(app, ["leaderboard", "verify", str(tmp_path / "b"), "--accept", "random-seed-1"])
    assert verified.exit_code == 0, verified.output
    assert "b: verified by replay" in " ".join(verified.output.split())
    assert (board.submissions / "random-seed-1.tar.gz").is_file()  # one compressed file, as submitted or not

    refused = cli.invoke(
        app, ["leaderboard", "verify", str(boards.oracle_bundle), "--board", "render", "--accept", "oracle"]
    )
    assert refused.exit_code == 1 and "rejected (1 problems)" in " ".join(refused.output.split())
    assert not (board.submissions / "oracle.tar.gz").exists()

    redacted = make_bundle(boards.random_run, "render", tmp_path / "redacted", redact=True)
    accept(redacted, board, verify(redacted, board, replay=False), "static-only")

    forged = board.submissions / "forged"  # a board may also hold a submission unpacked, as a directory
    with open_bundle(board.submissions / "random-seed-1.tar.gz") as root:
        shutil.copytree(root, forged)
    shutil.copy(board.submissions / f"random-seed-1{VERDICT_SUFFIX}", board.submissions / f"forged{VERDICT_SUFFIX}")
    edit_lines(forged / "episodes.jsonl", lambda lines: [{**e, "score": 1.0, "success": True} for e in lines])

    built = cli.invoke(app, ["leaderboard", "build", "--board", "render"])
    assert built.exit_code == 0, built.output
    readme = (board.path / "README.md").read_text()
    overall = readme.split("## Overall")[1].split("##")[0]
    assert "| random-seed-1 | random | verified by replay |" in overall
    assert "| static-only | random | not replayed |" in overall
    assert "forged" not in overall and "- forged: episodes.jsonl: changed after sealing" in readme
    assert "## family: terminal" in readme and "## family: textgame" in readme
    page = (board.path / "index.html").read_text()
    assert '<td class="verified">verified by replay</td>' in page and "<svg" in page
    assert 'src="http' not in page and 'href="http' not in page and "<script" not in page


def test_submit_reports_what_the_board_will_reject(boards, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTENVS_LEADERBOARDS", str(boards.root))
    result = cli.invoke(
        app, ["leaderboard", "submit", str(boards.oracle_run), "--board", "strict", "--out", str(tmp_path / "b")]
    )
    assert result.exit_code == 1
    assert "policy 'oracle' is not allowed on this board" in " ".join(result.output.split())
    assert (tmp_path / "b" / "bundle.json").is_file()


@pytest.mark.parametrize("name", ["terminal", "swe", "textgame", "web", "gui", "mixed"])
def test_every_shipped_board_loads_and_names_installed_tasks(name):
    import agentenvs

    board = load_board(ROOT / "leaderboards" / name)
    ids = board.task_ids()
    assert ids and len(ids) == len(set(ids))
    assert all(agentenvs.get_task(task_id).full_id == task_id for task_id in ids)
    families = {task_id.split("/")[0] for task_id in ids}
    assert families == ({"terminal", "swe", "textgame", "web", "gui"} if name == "mixed" else {name})
    for setting in board.rules.settings:
        assert all(setting in env_options(family) for family in families), setting


def test_a_submission_name_that_would_leave_submissions_is_refused_before_any_replay(boards, monkeypatch):
    monkeypatch.setenv("AGENTENVS_LEADERBOARDS", str(boards.root))
    result = cli.invoke(app, ["leaderboard", "verify", str(boards.random_bundle), "--accept", "../escaped"])
    assert result.exit_code == 2 and "submission name '../escaped'" in " ".join(result.output.split())
    assert not (boards.root / "escaped").exists() and not (boards.strict.submissions).exists()


def test_verify_json_is_the_verdict_and_the_exit_status_says_rejected(boards, tamper, monkeypatch):
    import json

    monkeypatch.setenv("AGENTENVS_LEADERBOARDS", str(boards.root))
    shorter = tamper(boards.random_bundle, lambda root: edit_lines(root / "episodes.jsonl", lambda lines: lines[1:]))
    result = cli.invoke(app, ["leaderboard", "verify", str(shorter), "--no-replay", "--json"])
    assert result.exit_code == 1
    verdict = json.loads(result.stdout)
    assert verdict["board"] == "strict" and not verdict["replayed"]
    assert [(p["kind"], p["message"]) for p in verdict["problems"]] == [("completeness", "missing")]


def test_a_submitters_model_name_renders_as_text(boards, tmp_path):
    """The declared model name is the submitter's to choose: in the board's markdown it stays inside its cell."""
    board = make_board(boards.root, "names", forbid=["oracle", "replay"], replay=[])
    run = tmp_path / "run"
    shutil.copytree(boards.random_run, run)
    edit_json(run / "run.json", lambda meta: meta.update(policy={"model": "m | x |\n## [verified](http://e) *"}))
    bundle = make_bundle(run, "names", tmp_path / "b")
    accept(bundle, board, verify(bundle, board, replay=False), "named")
    from agentenvs.leaderboard.render import build

    readme = build(board)[0].read_text()
    overall = readme.split("## Overall")[1].split("\n## ")[0]
    row = next(line for line in overall.splitlines() if "| named |" in line)
    assert row.count(" | ") == overall.splitlines()[2].count(" | ")
    assert "\\[verified\\](http://e) \\*" in row and "\n## [verified]" not in readme
