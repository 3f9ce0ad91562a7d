"""Web episodes replay: a run whose actions ``goto`` a site's absolute URL verifies on fresh envs, because
every session serves its sites at the same stable origins; an edited action is caught by the replay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lbkit import TRIALS, edit_lines, make_board, play

from agentenvs.harness.rundir import RunDir
from agentenvs.leaderboard import make_bundle, verify

#: An oracle that changes state and starts with an absolute goto (it did not replay on per-session ports).
TASK = "web/mail-send-0"


@pytest.fixture(scope="module")
def web_bundle(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("web-boards")
    make_board(root, "webopen", forbid=[], replay=["web"], tasks=[TASK])
    run = play(root / "run", "oracle", tasks=[TASK])
    return root / "webopen", make_bundle(run, "webopen", root / "bundle")


def _actions(bundle: Path, trajectory: str) -> list[str]:
    lines = (bundle / trajectory / "steps.jsonl").read_text().splitlines()
    return [step["action"] for step in map(json.loads, filter(None, lines)) if "action" in step]


def test_a_web_run_with_absolute_gotos_verifies_by_replay(web_bundle) -> None:
    board, bundle = web_bundle
    episodes = RunDir(bundle).read_episodes()
    assert len(episodes) == TRIALS and all(e["score"] == 1.0 for e in episodes)
    gotos = [a for e in episodes for a in _actions(bundle, e["trajectory"]) if str(a).startswith("goto(")]
    assert gotos and all('"http://mail.web.test/' in a for a in gotos), gotos
    verdict = verify(bundle, board)
    assert verdict.accepted and verdict.verified_by_replay, verdict.problems
    assert [e.status for e in verdict.episodes] == ["reproduced"] * TRIALS


def test_an_edited_web_action_is_rejected_by_the_replay(web_bundle, tamper) -> None:
    board, bundle = web_bundle
    record = RunDir(bundle).read_episodes()[0]

    def elsewhere(lines: list[dict]) -> list[dict]:
        first = next(line for line in lines if str(line.get("action", "")).startswith("goto("))
        first["action"] = 'goto("http://mail.web.test/")'  # the inbox instead of the compose page
        return lines

    verdict = verify(
        tamper(bundle, lambda root: edit_lines(root / record["trajectory"] / "steps.jsonl", elsewhere)), board
    )
    assert not verdict.accepted
    (problem,) = verdict.problems
    assert (problem.kind, problem.task_id, problem.trial) == ("replay", TASK, record["trial"])
    statuses = sorted(e.status for e in verdict.episodes)
    assert statuses == ["failed", "reproduced"]
