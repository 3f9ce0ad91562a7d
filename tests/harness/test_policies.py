"""Oracle (actions.jsonl and the env's solver), replay, random, human, and the suites."""

from __future__ import annotations

import asyncio
import io

import harness_toy
import pytest
from conftest import ALL_TOY, run_config

from agentenvs.harness.policies import PolicyConfigError, make_policy
from agentenvs.harness.policies.human import HumanPolicy
from agentenvs.harness.policies.oracle import solve_sh_action
from agentenvs.harness.rundir import RunDir
from agentenvs.harness.runner import Runner
from agentenvs.harness.scoring import summarize
from agentenvs.harness.suites import select_tasks


def play(tmp_path, tasks, policy, name="run", obj=None, **kwargs):
    out = tmp_path / name
    asyncio.run(Runner(run_config(tasks, policy, **kwargs), str(out), policy=obj).run())
    return RunDir(out)


def test_oracle_reads_solution_actions_jsonl(tmp_path):
    root = tmp_path / "tasks"
    harness_toy.write_dir_task(root, 2, ['"add 1"', '{"name": "add", "arguments": {"n": 1}}'])
    harness_toy.write_dir_task(root, 3, ['"add 2"'])  # a wrong solution: 2 of 3
    harness_toy.register_dir(root)
    run = play(tmp_path, ["toydir/reach-2", "toydir/reach-3"], "oracle")
    by_task = summarize(run)["by_task"]
    assert by_task["toydir/reach-2"]["successes"] == 1 and by_task["toydir/reach-3"]["successes"] == 0
    assert [s.get("action") for s in run.read_steps("toydir/reach-2", 0)][1:] == [
        "add 1", {"name": "add", "arguments": {"n": 1}}, "done",
    ]  # fmt: skip


def test_solve_sh_becomes_one_bash_command(tmp_path):
    import subprocess

    script = 'set -e\necho "it\'s $((1 + 2))" > out.txt\n'
    subprocess.run(["bash", "-c", solve_sh_action(script)], cwd=tmp_path, check=True, timeout=10)
    assert (tmp_path / "out.txt").read_text() == "it's 3\n"


def test_replay_reproduces_a_recorded_run(tmp_path):
    source = play(tmp_path, ALL_TOY, "random", name="random", trials=2, options={"seed": 7})
    replay = play(tmp_path, ALL_TOY, "replay", name="replay", trials=2, options={"run": str(source.path)})
    original = {(e["task_id"], e["trial"]): (e["score"], e["steps"]) for e in source.read_episodes()}
    replayed = {(e["task_id"], e["trial"]): (e["score"], e["steps"]) for e in replay.read_episodes()}
    assert replayed == original
    with pytest.raises(PolicyConfigError, match="not a run directory"):
        make_policy("replay", run=str(tmp_path / "nothing"))


def test_random_policy_is_reproducible_and_different_per_seed(tmp_path):
    a = play(tmp_path, ALL_TOY, "random", name="a", options={"seed": 1})
    b = play(tmp_path, ALL_TOY, "random", name="b", options={"seed": 1})
    c = play(tmp_path, ALL_TOY, "random", name="c", options={"seed": 2})

    def actions(run):
        return [[s.get("action") for s in run.read_steps(t, 0)] for t in ALL_TOY]

    assert actions(a) == actions(b) and actions(a) != actions(c)


def test_human_policy_reads_typed_actions(tmp_path):
    lines = iter(["?\n", "add 1\n", '{"name": "add", "arguments": {"n": 1}}\n', "done\n"])
    out = io.StringIO()
    human = HumanPolicy(read_line=lambda: next(lines, ""), out=out)
    run = play(tmp_path, ["toy/reach-2"], "human", obj=human, concurrency=4)
    (record,) = run.read_episodes()
    assert record["success"] and record["steps"] == 3
    assert "counter=0 target=2" in out.getvalue() and "add: Add n to the counter." in out.getvalue()


def test_make_policy_errors_are_clear():
    with pytest.raises(PolicyConfigError, match="choose one of"):
        make_policy("gpt")
    with pytest.raises(PolicyConfigError, match="--model"):
        make_policy("openai", model="")
    with pytest.raises(PolicyConfigError, match="unexpected keyword"):
        make_policy("oracle", temperature=0.3)
    with pytest.raises(PolicyConfigError, match="--url"):
        make_policy("http", url="localhost:8000")


def test_suites_and_filters():
    ids = [t.full_id for t in select_tasks(None, ["toy/reach-*"], difficulty="hard")]
    assert ids == ["toy/reach-3"]
    assert [t.full_id for t in select_tasks(None, None, family="toy", tag="starter")] == ALL_TOY
    with pytest.raises(ValueError, match="unknown suite"):
        select_tasks("nope")
    with pytest.raises(ValueError, match="choose tasks"):
        select_tasks()


def test_random_policy_picks_from_a_text_games_admissible_commands():
    import asyncio

    import agentenvs
    from agentenvs.harness.policies import EpisodeStart, StepInput
    from agentenvs.harness.policies.random_policy import RandomPolicy

    env = agentenvs.make("textgame/coin-easy-0")
    obs, _ = env.reset(seed=0)
    admissible = set(obs["admissible_commands"].splitlines())
    start = EpisodeStart(
        episode_id="e",
        task_id="textgame/coin-easy-0",
        family="textgame",
        trial=0,
        seed=0,
        instruction=obs["instruction"],
        tools=env.unwrapped.action_tools,
        prompt_description="",
        task_path=None,
        task_params={},
        oracle_actions=None,
    )
    policy = RandomPolicy(seed=1, done_prob=0.0)
    actions = [asyncio.run(policy.act(start, StepInput(step=i, observation=obs))).action for i in range(20)]
    env.close()
    assert set(actions) <= admissible and len(set(actions)) > 1
