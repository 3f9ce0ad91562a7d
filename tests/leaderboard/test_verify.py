"""Verification on real runs: clean bundles pass; every kind of tampering is caught, each by its own check."""

from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path

import pytest
from lbkit import MAX_STEPS, TASKS, TRIALS, edit_json, edit_lines, make_board, play

from agentenvs.harness.rundir import RunDir
from agentenvs.leaderboard import BundleError, make_bundle, verify
from agentenvs.leaderboard.bundle import read_manifest, seal
from agentenvs.leaderboard.verdict import Verdict


def kinds(verdict: Verdict) -> set[str]:
    return {p.kind for p in verdict.problems}


def test_a_clean_random_bundle_verifies_by_replay(boards):
    verdict = verify(boards.random_bundle, boards.strict)
    assert verdict.accepted, verdict.problems
    assert verdict.verified_by_replay
    assert len(verdict.episodes) == len(TASKS) * TRIALS
    assert {e.status for e in verdict.episodes} == {"reproduced"}
    assert all(e.replay_sec is not None and e.recorded_sec is not None for e in verdict.episodes)


def test_an_oracle_bundle_verifies_where_the_board_allows_the_oracle(boards):
    verdict = verify(boards.oracle_bundle, boards.open)
    assert verdict.verified_by_replay, verdict.problems
    assert verdict.episodes and all(e.reproduced for e in verdict.episodes)


def test_a_replay_policy_run_is_a_scripted_submission_that_verifies(boards, tmp_path):
    run = play(tmp_path / "replayed", "replay", {"run": str(boards.random_run)})
    bundle = make_bundle(run, "open", tmp_path / "bundle")
    verdict = verify(bundle, boards.open)
    assert verdict.verified_by_replay, verdict.problems
    assert [p.message for p in verify(bundle, boards.strict, replay=False).problems] == [
        "policy 'replay' is not allowed on this board"
    ]


def test_the_oracle_is_refused_by_name(boards):
    verdict = verify(boards.oracle_bundle, boards.strict)
    assert [p.message for p in verdict.problems] == ["policy 'oracle' is not allowed on this board"]
    assert not verdict.replayed


def test_an_edit_without_resealing_is_caught_by_the_file_hashes(boards, tmp_path):
    root = tmp_path / "b"
    shutil.copytree(boards.random_bundle, root)
    edit_lines(root / "episodes.jsonl", lambda lines: [{**line, "score": 1.0, "success": True} for line in lines])
    verdict = verify(root, boards.strict)
    assert verdict.problems[0].message == "episodes.jsonl: changed after sealing"
    assert kinds(verdict) == {"integrity"} and not verdict.replayed


def _win(lines: list[dict]) -> list[dict]:
    """A failed textgame episode rewritten as won, consistently in its record and its trajectory."""
    last = lines[-1]
    last["reward"] = 1.0
    last["info"] = {**last["info"], "score": 1.0, "success": True}
    return lines


def test_an_edited_reward_is_caught_by_the_replay(boards, tamper):
    episodes = RunDir(boards.random_bundle).read_episodes()
    lost = next(e for e in episodes if e["task_id"].startswith("textgame/") and not e["success"])

    def forge(root: Path) -> None:
        edit_lines(root / lost["trajectory"] / "steps.jsonl", _win)
        edit_lines(
            root / "episodes.jsonl",
            lambda lines: [
                {**e, "score": 1.0, "success": True} if e["episode_id"] == lost["episode_id"] else e for e in lines
            ],
        )

    verdict = verify(tamper(boards.random_bundle, forge), boards.strict)
    assert kinds(verdict) == {"replay"}
    (problem,) = verdict.problems
    assert (problem.task_id, problem.trial) == (lost["task_id"], lost["trial"])
    assert "score 1.0 recorded, 0.0 replayed" in problem.message


def test_a_reward_edited_in_the_record_only_contradicts_the_trajectory(boards, tamper):
    def forge(root: Path) -> None:
        edit_lines(root / "episodes.jsonl", lambda lines: [{**lines[0], "score": 1.0, "success": True}, *lines[1:]])

    verdict = verify(tamper(boards.random_bundle, forge), boards.strict)
    assert kinds(verdict) == {"integrity"} and not verdict.replayed
    assert any("score 1.0 recorded, 0.0 in the trajectory" in p.message for p in verdict.problems)


def test_a_reward_edited_in_the_trajectory_only_no_longer_sums_to_the_score(boards, tamper):
    record = next(e for e in RunDir(boards.random_bundle).read_episodes() if not e["success"])

    def pay(lines: list[dict]) -> list[dict]:
        lines[-1]["reward"] = 1.0
        return lines

    verdict = verify(
        tamper(boards.random_bundle, lambda root: edit_lines(root / record["trajectory"] / "steps.jsonl", pay)),
        boards.strict,
    )
    assert [(p.kind, p.task_id, p.trial, p.message) for p in verdict.problems] == [
        ("integrity", record["task_id"], record["trial"], "the rewards sum to 1, the score is 0")
    ]


def test_a_malformed_bundle_is_one_clear_problem_not_a_crash(boards, tamper):
    bundle = tamper(
        boards.random_bundle, lambda root: edit_lines(root / "episodes.jsonl", lambda ls: [{"trial": 0}, *ls[1:]])
    )
    verdict = verify(bundle, boards.strict)
    assert [p.message for p in verdict.problems] == ["malformed bundle: KeyError: 'task_id'"]


def test_a_missing_task_is_rejected(boards, tamper):
    gone = "textgame/coin-easy-1"
    bundle = tamper(
        boards.random_bundle,
        lambda root: edit_lines(root / "episodes.jsonl", lambda ls: [e for e in ls if e["task_id"] != gone]),
    )
    verdict = verify(bundle, boards.strict)
    missing = {(p.task_id, p.trial) for p in verdict.problems if p.message == "missing"}
    assert missing == {(gone, 0), (gone, 1)}


def test_a_duplicated_episode_is_rejected(boards, tamper):
    bundle = tamper(boards.random_bundle, lambda root: edit_lines(root / "episodes.jsonl", lambda ls: [*ls, ls[0]]))
    verdict = verify(bundle, boards.strict)
    assert [p.message for p in verdict.problems] == ["recorded 2 times"]


def test_a_larger_step_budget_is_rejected(boards, tamper):
    bundle = tamper(
        boards.random_bundle, lambda root: edit_json(root / "run.json", lambda m: m["config"].update(max_steps=50))
    )
    verdict = verify(bundle, boards.strict)
    assert [p.message for p in verdict.problems] == [f"max_steps 50 exceeds the board's budget {MAX_STEPS}"]


def test_a_setting_the_board_does_not_allow_is_rejected(boards, tamper):
    def dense(root: Path) -> None:
        edit_json(root / "run.json", lambda m: m["config"].update(env_kwargs={"reward_mode": "dense"}))

    verdict = verify(tamper(boards.random_bundle, dense), boards.strict)
    assert [p.message for p in verdict.problems] == ["setting reward_mode='dense' is not one of ['sparse']"]


def _rehash(task: str, digest: str):
    def edit(meta: dict) -> None:
        for record in meta["tasks"]:
            if record["id"] == task:
                record["content_hash"] = digest

    return edit


def test_a_task_whose_content_hash_differs_is_rejected(boards, tamper):
    bundle = tamper(boards.random_bundle, lambda root: edit_json(root / "run.json", _rehash(TASKS[2], "0" * 64)))
    verdict = verify(bundle, boards.strict)
    assert [(p.kind, p.task_id) for p in verdict.problems] == [("rules", TASKS[2])]
    assert "task content differs" in verdict.problems[0].message


def test_a_bundle_from_an_older_version_with_changed_tasks_is_rejected(boards, tamper):
    def older(root: Path) -> None:
        edit_json(root / "run.json", lambda m: m.update(agentenvs_version="0.0.1"))
        edit_json(root / "run.json", _rehash(TASKS[0], "f" * 64))

    verdict = verify(tamper(boards.random_bundle, older), boards.strict)
    messages = [p.message for p in verdict.problems]
    assert any(m.startswith("made with agentenvs 0.0.1") for m in messages)
    assert any("task content differs" in m for m in messages)


def _edit_action(root: Path, trajectory: str) -> None:
    def swap(lines: list[dict]) -> list[dict]:
        lines[1]["action"] = "look"
        return lines

    edit_lines(root / trajectory / "steps.jsonl", swap)


def test_an_edited_action_does_not_reproduce_the_recorded_rewards(boards, tamper):
    record = next(e for e in RunDir(boards.oracle_bundle).read_episodes() if e["task_id"] == "textgame/coin-easy-0")
    verdict = verify(tamper(boards.oracle_bundle, lambda root: _edit_action(root, record["trajectory"])), boards.open)
    (problem,) = verdict.problems
    assert (problem.kind, problem.task_id, problem.trial) == ("replay", record["task_id"], record["trial"])
    assert "recorded" in problem.message and "replayed" in problem.message


def test_a_family_not_required_to_replay_is_reported_non_deterministic_never_verified(boards, tamper):
    record = next(e for e in RunDir(boards.oracle_bundle).read_episodes() if e["task_id"] == "textgame/coin-easy-0")
    lenient = make_board(boards.root, "open-lenient", forbid=[], replay=[])
    verdict = verify(tamper(boards.oracle_bundle, lambda root: _edit_action(root, record["trajectory"])), lenient)
    assert verdict.accepted and not verdict.verified_by_replay
    statuses = {(e.task_id, e.trial): e.status for e in verdict.episodes}
    assert statuses.pop((record["task_id"], record["trial"])) == "non-deterministic"
    assert set(statuses.values()) == {"reproduced"}


def test_an_oracle_smuggled_in_under_another_name_is_rejected(boards, tamper):
    def relabel(root: Path) -> None:
        def scripted(meta: dict) -> None:
            meta["config"]["policy"] = {"name": "http", "options": {"url": "http://localhost:1"}}
            meta["policy"] = {"name": "http", "url": "http://localhost:1"}

        edit_json(root / "run.json", scripted)

    verdict = verify(tamper(boards.oracle_bundle, relabel), boards.lenient)
    smuggled = {(p.task_id, p.trial) for p in verdict.problems if p.kind == "oracle"}
    assert smuggled == {(t, n) for t in TASKS for n in range(TRIALS)}
    assert not verdict.replayed


def test_a_redacted_bundle_keeps_no_observations_and_still_verifies(boards, tmp_path):
    bundle = make_bundle(boards.random_run, "strict", tmp_path / "redacted", redact=True)
    text = "".join(p.read_text() for p in bundle.rglob("steps.jsonl"))
    lines = [json.loads(line) for line in text.splitlines()]
    assert not any("observation" in s or "instruction" in s for s in lines)
    assert '"verifier_detail"' in (boards.random_bundle / "episodes.jsonl").read_text()
    assert '"verifier_detail"' not in (bundle / "episodes.jsonl").read_text()
    assert all(len(s["observation_sha256"]) == 64 and ("action" in s or s["step"] == 0) for s in lines)
    verdict = verify(bundle, boards.strict)
    assert verdict.verified_by_replay, verdict.problems


def test_a_tar_gz_bundle_verifies_like_a_directory(boards, tmp_path):
    bundle = make_bundle(boards.random_run, "strict", tmp_path / "bundle.tar.gz")
    with tarfile.open(bundle) as tar:
        assert "bundle/bundle.json" in tar.getnames()
    verdict = verify(bundle, replay=False, board=boards.strict)
    assert verdict.accepted and not verdict.replayed and not verdict.verified_by_replay


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (
            'name = "b"\n[tasks]\ntrials = 1\n[budgets]\nmax_steps = 5\nepisode_timeout_sec = 9\n',
            "[tasks]: Value error, name the tasks",
        ),
        (
            'name = "b"\n[tasks]\nids = ["x/y"]\n[budgets]\nmax_steps = 0\nepisode_timeout_sec = 9\n',
            "[budgets.max_steps]",
        ),
        (
            'name = "b"\nmetrics = ["elo"]\n[tasks]\nids = ["x/y"]\n[budgets]\nmax_steps = 1\nepisode_timeout_sec = 9\n',
            "[metrics[0]]",
        ),
        ("name = [", "not valid TOML"),
    ],
)
def test_a_malformed_board_toml_is_a_clear_error_naming_the_field(tmp_path, text, error):
    from agentenvs.leaderboard import BoardFormatError, load_board

    (tmp_path / "board.toml").write_text(text)
    with pytest.raises(BoardFormatError) as caught:
        load_board(tmp_path)
    assert str(tmp_path / "board.toml") in str(caught.value) and error in str(caught.value)


def test_paths_in_a_bundle_never_reach_outside_it(boards, tamper):
    """A forger points a step's image at a host file, hashed as the verifier would hash it if it read the file,
    and adds an episode whose task id climbs out of trajectories/: neither is read."""
    import hashlib

    host_file = Path("/etc/hostname")
    record = json.loads((boards.random_bundle / "episodes.jsonl").read_text().splitlines()[0])

    def point_outside(step: dict) -> dict:
        rel = "../" * 12 + str(host_file).lstrip("/")
        digest = hashlib.sha256(json.dumps(step.get("observation"), sort_keys=True, ensure_ascii=False).encode())
        digest.update(b"screenshot")
        digest.update(hashlib.sha256(host_file.read_bytes()).hexdigest().encode())
        return {**step, "images": {"screenshot": rel}, "observation_sha256": digest.hexdigest()}

    def forge(root: Path) -> None:
        edit_lines(root / record["trajectory"] / "steps.jsonl", lambda steps: [point_outside(s) for s in steps])
        edit_lines(root / "episodes.jsonl", lambda ls: [*ls, {**ls[0], "task_id": "../../outside"}])

    verdict = verify(tamper(boards.random_bundle, forge), boards.strict, replay=False)
    messages = {(p.task_id, p.message) for p in verdict.problems}
    assert any(t == record["task_id"] and m.startswith("observation hashes do not match") for t, m in messages)
    assert ("../../outside", "not a task x trial of this board") in messages
    assert not any(t == "../../outside" and m != "not a task x trial of this board" for t, m in messages)


def test_a_symbolic_link_in_a_bundle_is_refused_not_followed(boards, tmp_path):
    """A forger swaps a trajectory file for a link to a file of theirs elsewhere (sealed with its hash):
    the verifier would read and hash the target as if it were in the bundle. A link is refused, whole."""
    root = tmp_path / "linked"
    shutil.copytree(boards.random_bundle, root)
    record = json.loads((root / "episodes.jsonl").read_text().splitlines()[0])
    steps = root / record["trajectory"] / "steps.jsonl"
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_bytes(steps.read_bytes())
    steps.unlink()
    steps.symlink_to(elsewhere)
    seal(root, read_manifest(root))
    with pytest.raises(BundleError, match="not symbolic links") as caught:
        verify(root, boards.strict, replay=False)
    assert str(steps.relative_to(root)) in str(caught.value)
