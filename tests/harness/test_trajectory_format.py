"""The run format's trajectories: one steps file per lane, blocks found by ``steps_at``; format-1 runs still open."""

from __future__ import annotations

import asyncio
import itertools
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import run_config
from test_cli_edges import invoke

from agentenvs.harness.rundir import RUN_FORMAT_VERSION, RunDir, encode_line
from agentenvs.harness.runner import Runner
from agentenvs.harness.trajectory import StepsFile, TrajectoryWriter

GAMES = ["textgame/coin-easy-0", "textgame/coin-easy-1", "textgame/coin-easy-2"]


def _run(out: Path, tasks: list[str], policy: str = "random", **kwargs) -> RunDir:
    asyncio.run(Runner(run_config(tasks, policy, **kwargs), str(out), progress=False).run())
    return RunDir(out)


def test_a_text_game_run_writes_one_steps_file_per_lane_and_no_directory_per_episode(tmp_path):
    run = _run(tmp_path / "run", GAMES, trials=4, concurrency=2)
    assert run.read_run()["format_version"] == RUN_FORMAT_VERSION == 2
    files = sorted(p.name for p in (run.path / "trajectories").iterdir())
    assert files == ["steps-0.jsonl", "steps-1.jsonl"]  # two lanes; no trajectories/<task>/<trial>/
    episodes = run.read_episodes()
    assert len(episodes) == 12
    blocks: dict[str, list[tuple[int, int]]] = {}
    for record in episodes:
        at = record["steps_at"]
        blocks.setdefault(at["file"], []).append((at["offset"], at["length"]))
        steps = run.read_steps(record["task_id"], record["trial"])
        assert [s["step"] for s in steps] == list(range(record["steps"] + 1))
        assert steps[0]["seed"] == record["seed"]
        assert steps[-1]["terminated"] or steps[-1]["truncated"]
    for name, spans in blocks.items():  # each lane's blocks tile its file: nothing lost, nothing shared
        spans.sort()
        assert spans[0][0] == 0
        assert all(a + n == b for (a, n), (b, _) in itertools.pairwise(spans))
        assert spans[-1][0] + spans[-1][1] == (run.path / name).stat().st_size


def test_images_and_artifacts_still_go_to_the_episodes_folder(tmp_path):
    run = _run(tmp_path / "run", ["toy/reach-3"], "oracle")
    record = run.read_episodes()[0]
    steps = run.steps_of(record)
    assert (run.path / record["trajectory"] / steps[1]["images"]["screenshot"]).is_file()


@pytest.mark.parametrize(
    "steps_at",
    [
        {"file": "run.json", "offset": 0, "length": 10},
        {"file": "trajectories/../run.json", "offset": 0, "length": 10},
        {"file": "/etc/passwd", "offset": 0, "length": 10},
        {"file": "trajectories/steps-0.jsonl", "offset": -1, "length": 10},
        {"file": "trajectories/steps-0.jsonl", "offset": 0, "length": "all"},
        {"file": "trajectories/steps-0.jsonl"},
        "trajectories/steps-0.jsonl",
    ],
)
def test_a_forged_steps_at_is_refused_not_followed(tmp_path, steps_at):
    """A leaderboard bundle is untrusted: an episode line must not make a reader open another file."""
    run = RunDir(tmp_path)
    with pytest.raises(ValueError, match="steps_at"):
        run.steps_of({"task_id": "t/a", "trial": 0, "steps_at": steps_at})


def test_a_format_1_line_cannot_point_its_steps_outside_the_run(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "steps.jsonl").write_bytes(encode_line({"step": 0, "observation": {"text": "not this run's"}}))
    (tmp_path / "run").mkdir()
    run = RunDir(tmp_path / "run")
    assert run.steps_of({"task_id": "t/a", "trial": 0, "trajectory": "../outside"}) == []


def test_a_discarded_attempt_is_taken_back_and_the_next_one_starts_where_it_began(tmp_path):
    steps = StepsFile(tmp_path, itertools.count())
    kept = TrajectoryWriter("trajectories/t/0", steps)
    kept.write({"step": 0, "observation": {"text": "kept"}}, {})
    first = kept.close()
    abandoned = TrajectoryWriter("trajectories/t/1", steps)
    for n in range(TrajectoryWriter.FLUSH_LINES + 3):  # some lines already flushed to the file
        abandoned.write({"step": n, "observation": {"text": "lost"}}, {})
    abandoned.discard()
    retried = TrajectoryWriter("trajectories/t/1", steps)
    retried.write({"step": 0, "observation": {"text": "retried"}}, {})
    second = retried.close()
    steps.close()
    data = (tmp_path / "trajectories" / "steps-0.jsonl").read_bytes()
    assert b"lost" not in data and len(data) == first["length"] + second["length"]
    assert second["offset"] == first["length"]
    run = RunDir(tmp_path)
    assert [s["observation"]["text"] for s in run.steps_of({"steps_at": second})] == ["retried"]
    assert not (tmp_path / "trajectories" / "t").exists()  # no images, no artifacts: no folder


def test_a_resumed_run_opens_new_steps_files_and_keeps_the_old_blocks(tmp_path):
    out = tmp_path / "run"
    run = _run(out, GAMES, concurrency=1)
    episodes = run.read_episodes()
    lines = run.episodes_jsonl.read_text().splitlines(keepends=True)
    run.episodes_jsonl.write_text("".join(lines[:-1]))  # the last episode was lost: resume plays it again
    asyncio.run(Runner(run_config(GAMES, "random", concurrency=1), str(out), resume=True, progress=False).run())
    resumed = RunDir(out).read_episodes()
    assert resumed[:-1] == episodes[:-1]
    assert resumed[-1]["steps_at"]["file"] == "trajectories/steps-1.jsonl"
    for record in resumed:
        assert len(RunDir(out).steps_of(record)) == record["steps"] + 1


def _as_format_1(run: RunDir) -> None:
    """Rewrite a run the way format 1 stored it: a steps.jsonl per episode, no ``steps_at``."""
    episodes = run.read_episodes()
    for record in episodes:
        folder = run.path / record["trajectory"]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "steps.jsonl").write_bytes(b"".join(encode_line(s) for s in run.steps_of(record)))
        del record["steps_at"]
    run.episodes_jsonl.write_bytes(b"".join(encode_line(e) for e in episodes))
    for name in (run.path / "trajectories").glob("steps-*.jsonl"):
        name.unlink()
    meta = run.read_run()
    run.write_run({**meta, "format_version": 1})


def test_a_format_1_run_still_shows_replays_and_resumes(tmp_path):
    old = RunDir(tmp_path / "old")
    _run(old.path, GAMES, "oracle", concurrency=1)
    expected = {(e["task_id"], e["trial"]): RunDir(old.path).steps_of(e) for e in old.read_episodes()}
    _as_format_1(old)
    assert {k: RunDir(old.path).read_steps(*k) for k in expected} == expected
    shown = invoke("show", str(old.path), "--task", GAMES[1])
    assert shown.exit_code == 0, shown.stdout
    assert expected[(GAMES[1], 0)][1]["action"] in shown.stdout
    replay = _run(tmp_path / "replay", GAMES, "replay", options={"run": str(old.path)}, concurrency=1)
    assert [e["success"] for e in replay.read_episodes()] == [True] * 3
    # a format-1 run resumed under format 2: old episodes read from their folders, new ones from a steps file
    lines = old.episodes_jsonl.read_text().splitlines(keepends=True)
    old.episodes_jsonl.write_text("".join(lines[:-1]))
    shutil.rmtree(old.path / json.loads(lines[-1])["trajectory"])
    asyncio.run(Runner(run_config(GAMES, "oracle", concurrency=1), str(old.path), resume=True, progress=False).run())
    mixed = RunDir(old.path).read_episodes()
    assert ["steps_at" in e for e in mixed] == [False, False, True]
    assert {(e["task_id"], e["trial"]): RunDir(old.path).steps_of(e) for e in mixed}.keys() == expected.keys()
    assert all(len(RunDir(old.path).steps_of(e)) == e["steps"] + 1 for e in mixed)


def test_encode_line_writes_what_json_reads_for_every_value_a_record_may_hold():
    class Odd:
        def __str__(self) -> str:
            return "odd"

    record = {
        "np": [np.float32(0.5), np.int64(3), np.bool_(True), np.arange(3)],
        "keys": {1: "int key", "s": "é ✓"},
        "big": 1 << 70,
        "odd": Odd(),
        "tuple": (1, 2),
    }
    line = encode_line(record)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line) == {
        "np": [0.5, 3, True, [0, 1, 2]],
        "keys": {"1": "int key", "s": "é ✓"},
        "big": 1 << 70,
        "odd": "odd",
        "tuple": [1, 2],
    }
    assert json.loads(encode_line({"fast": [np.float64(1.25), {2: None}]})) == {"fast": [1.25, {"2": None}]}
