"""Harbor-format tasks written for the tests, in folders not named after a family, on both backends."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from agentenvs.core import load_task
from agentenvs.validate import validate_tasks
from tests.terminal.harbor_tasks import BASE, write_task


def play(env: Any, actions: list[Any] | None = None) -> tuple[float, dict[str, Any], list[float]]:
    """Reset, play ``actions`` (the oracle's by default) until the episode ends; the score, the last
    info and every reward."""
    env.reset(seed=0)
    actions = env.unwrapped.oracle_actions() if actions is None else actions
    rewards: list[float] = []
    info: dict[str, Any] = {}
    for action in actions:
        _, reward, terminated, truncated, info = env.step(action)
        rewards.append(reward)
        if terminated or truncated:
            break
    return float(info["score"]), info, rewards


def test_workdir_logs_and_python_as_harbor_has_them(tmp_path: Path, make_env: Any) -> None:
    env = make_env(write_task(tmp_path / "my-bench" / "answer"))
    obs, _ = env.reset(seed=0)
    assert obs["cwd"] == "/workspace"
    obs, *_ = env.step("stat -c '%a %n' /logs/agent /logs/verifier /logs/artifacts; command -v python")
    assert "777 /logs/agent" in obs["text"] and "777 /logs/artifacts" in obs["text"]
    assert "python" in obs["text"].splitlines()[-1]
    assert play(env)[0] == 1.0
    assert play(env, ["done"])[0] == 0.0


REWARD_JSON = """#!/bin/bash
if [ "$(cat answer.txt 2>/dev/null)" = 42 ]; then v=1; else v=0; fi
echo "{$(sed "s/V/$v/g" /tests/keys)}" > /logs/verifier/reward.json
"""


@pytest.mark.parametrize(
    ("keys", "score", "warned"),
    [
        ('"reward": V, "style": 0.25', 1.0, False),
        ('"accuracy": V', 1.0, False),
        ('"accuracy": V, "style": V', 0.0, True),
    ],
)
def test_reward_json_as_harbor_documents_it(
    tmp_path: Path, make_env: Any, keys: str, score: float, warned: bool
) -> None:
    root = write_task(tmp_path / "my-bench" / "metrics", test_sh=REWARD_JSON, files={"tests/keys": keys})
    env = make_env(root)
    got, info, _ = play(env)
    assert got == score
    warnings = "\n".join(info.get("warnings", []))
    assert ("no 'reward' key" in warnings) is warned
    assert set(info["verifier_metrics"]) == {k.split('"')[1] for k in keys.split(",")}
    assert play(env, ["done"])[0] == 0.0


def test_a_task_that_asks_for_network_gets_a_warning_not_a_silent_zero(tmp_path: Path, make_env: Any) -> None:
    toml = '[environment]\nallow_internet = true\n[verifier]\nnetwork_mode = "public"\n'
    env = make_env(write_task(tmp_path / "my-bench" / "online", toml=toml))
    _, info = env.reset(seed=0)
    assert any("asks for network (public)" in w for w in info["warnings"])
    score, info, _ = play(env)
    assert score == 1.0 and any("asks for network" in w for w in info["warnings"])
    assert play(env, ["done"])[0] == 0.0


def test_more_cpus_than_the_machine_has_are_clamped_with_a_warning(tmp_path: Path, make_env: Any) -> None:
    many = len(os.sched_getaffinity(0)) + 2
    env = make_env(write_task(tmp_path / "my-bench" / "wide", toml=f"[environment]\ncpus = {many}\n"))
    _, info = env.reset(seed=0)
    assert any(f"asks for {many} CPUs" in w for w in info["warnings"])
    assert env.unwrapped.sandbox.spec.cpus == len(os.sched_getaffinity(0))
    assert play(env)[0] == 1.0


def test_an_allowlist_is_never_taken_for_open_network(tmp_path: Path, make_env: Any) -> None:
    toml = '[agent]\nnetwork_mode = "allowlist"\nallowed_hosts = ["pypi.org"]\n'
    env = make_env(write_task(tmp_path / "my-bench" / "allow", toml=toml))
    _, info = env.reset(seed=0)
    assert any("pypi.org" in w and "cannot be enforced" in w for w in info["warnings"])
    assert not env.unwrapped.sandbox.spec.network


ARTIFACT_TEST = """#!/bin/bash
echo "graded" > /logs/artifacts/grader.log
if [ "$(cat answer.txt 2>/dev/null)" = 42 ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt
"""


def test_artifacts_are_collected(tmp_path: Path, make_env: Any) -> None:
    toml = 'artifacts = ["/workspace/answer.txt", { source = "/workspace/out", destination = "outdir" }, "/nowhere"]\n'
    solve = "echo 42 > answer.txt; mkdir -p out/sub; echo deep > out/sub/f.txt\n"
    env = make_env(write_task(tmp_path / "my-bench" / "arts", toml=toml, test_sh=ARTIFACT_TEST, solve_sh=solve))
    score, info, _ = play(env)
    assert score == 1.0
    files = env.unwrapped.episode_artifacts()
    assert files["workspace/answer.txt"] == b"42\n"
    assert files["outdir/sub/f.txt"] == b"deep\n"
    assert files["logs/artifacts/grader.log"] == b"graded\n"
    assert any("/nowhere" in w for w in info["warnings"])


def test_a_task_without_solution_validates_as_no_oracle(tmp_path: Path, backend: str) -> None:
    task = load_task(write_task(tmp_path / "my-bench" / "unsolved", solve_sh=None))
    (result,) = validate_tasks([task], env_kwargs={"backend": backend})
    oracle, noop = result.episodes["oracle"], result.episodes["noop"]
    assert oracle.score is None and oracle.detail.startswith("no oracle")
    assert noop.score == 0.0
    assert result.ok


STEP_TEST = """#!/bin/bash
want=$(cat /tests/expected)
if [ "$(cat notes.txt 2>/dev/null)" = "$want" ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt
"""


def two_steps(root: Path, toml: str = "") -> Path:
    return write_task(
        root,
        toml=toml + '[[steps]]\nname = "first"\n[[steps]]\nname = "second"\n',
        instruction=None,
        test_sh=STEP_TEST,
        solve_sh=None,
        files={
            "steps/first/instruction.md": "Write 'one' into notes.txt.",
            "steps/first/tests/expected": "one",
            "steps/first/solution/solve.sh": "echo one > notes.txt\n",
            "steps/second/instruction.md": "Append a line 'two' to notes.txt.",
            "steps/second/workdir/setup.sh": "echo ready > ready.txt\n",
            "steps/second/workdir/hint.txt": "the second step's file\n",
            "steps/second/tests/expected": "one\ntwo",
            "steps/second/solution/solve.sh": "test -f ready.txt && test -f hint.txt && echo two >> notes.txt\n",
        },
    )


def test_multi_step_task_is_graded_step_by_step(tmp_path: Path, make_env: Any) -> None:
    env = make_env(two_steps(tmp_path / "my-bench" / "notes"))
    obs, _ = env.reset(seed=0)
    assert obs["instruction"] == "Write 'one' into notes.txt."
    actions = env.unwrapped.oracle_actions()
    obs, reward, terminated, _, info = env.step(actions[0])
    obs, reward, terminated, _, info = env.step(actions[1])  # done: grade the first step, show the second
    assert not terminated and reward == 0.5
    assert obs["instruction"].startswith("Append") and "reward 1.00" in obs["text"]
    assert info["task_step"] == "second" and info["task_steps"][0]["reward"] == 1.0
    obs, *_ = env.step("find /tests /logs/verifier -mindepth 1 | wc -l; ls")
    assert obs["text"].split() == ["0", "hint.txt", "notes.txt", "ready.txt"]  # no tests left; setup.sh ran, gone
    for action in actions[2:]:
        obs, reward, terminated, _, info = env.step(action)
    assert terminated and reward == 0.5 and info["score"] == 1.0
    assert [s["reward"] for s in info["task_steps"]] == [1.0, 1.0]
    score, info, rewards = play(env, ["done", "done"])
    assert score == 0.0 and sum(rewards) == 0.0
    assert [s["reward"] for s in info["task_steps"]] == [0.0, 0.0]


def test_a_step_below_min_reward_stops_the_episode(tmp_path: Path, make_env: Any) -> None:
    root = two_steps(tmp_path / "my-bench" / "gated")
    toml = (root / "task.toml").read_text().replace('name = "first"\n', 'name = "first"\nmin_reward = 1.0\n')
    (root / "task.toml").write_text(toml)
    env = make_env(root)
    score, info, _ = play(env, ["echo wrong > notes.txt", "done"])
    assert score == 0.0 and [s["name"] for s in info["task_steps"]] == ["first"]
    assert "min_reward" in info["verifier_detail"]


def test_final_strategy_scores_the_last_step(tmp_path: Path, make_env: Any) -> None:
    env = make_env(two_steps(tmp_path / "my-bench" / "last", toml='multi_step_reward_strategy = "final"\n'))
    score, info, rewards = play(env, ["echo nope > notes.txt", "done", "printf 'one\\ntwo\\n' > notes.txt", "done"])
    assert score == 1.0 and rewards[1] == 0.0
    assert [s["reward"] for s in info["task_steps"]] == [0.0, 1.0]


SCHEMA_KEYS = """schema_version = "1.4"
artifacts = ["/workspace/answer.txt"]
[agent]
timeout_sec = 120.0
network_mode = "no-network"
[environment]
memory = "2G"
storage = "1G"
allow_internet = false
[environment.network]
mode = "no-network"
"""


def test_schema_keys_once_refused_validate_on_both_backends(tmp_path: Path, backend: str) -> None:
    """The issue's second row: top-level ``artifacts``, ``[environment.network]``, ``network_mode``,
    ``allow_internet`` and memory as ``"2G"``, in a folder named after no family."""
    task = load_task(write_task(tmp_path / "my-bench" / "schema", toml=SCHEMA_KEYS))
    assert task.config.environment.memory_mb == 2048
    (result,) = validate_tasks([task], env_kwargs={"backend": backend})
    scores = {variant: check.score for variant, check in result.episodes.items()}
    assert scores["oracle"] == 1.0 and scores["noop"] == 0.0, result.episodes


def test_one_broken_task_does_not_stop_the_others(tmp_path: Path, backend: str) -> None:
    """The issue's third row: a task whose image cannot be made is reported; the next one still runs."""
    dockerfile = BASE + "WORKDIR /workspace\nRUN echo the-setup-step-fails && exit 3\n"
    broken = load_task(write_task(tmp_path / "my-bench" / "broken", dockerfile=dockerfile))
    good = load_task(write_task(tmp_path / "my-bench" / "good"))
    bad_result, good_result = validate_tasks([broken, good], env_kwargs={"backend": backend})
    assert not bad_result.ok and "the-setup-step-fails" in bad_result.episodes["oracle"].detail
    assert good_result.ok and good_result.episodes["oracle"].score == 1.0


AS_ANOTHER_USER = """#!/bin/bash
d=$(mktemp -d) && chmod 777 "$d" && cp answer.txt "$d/a" && chmod 644 "$d/a"
if [ "$(setpriv --reuid=65534 --regid=65534 --clear-groups cat "$d/a")" = 42 ]; then v=1; else v=0; fi
echo $v > /logs/verifier/reward.txt
"""


def test_a_verifier_may_run_code_as_another_user_from_its_tmpdir(tmp_path: Path, backend: str, make_env: Any) -> None:
    # ABHISHEK3209/terminal-bench-tasks-finding-triage-task runs the agent's solver as `nobody` from a
    # mkdtemp() folder; under a mode-700 TMPDIR parent that was "Permission denied"
    if backend != "docker":
        pytest.skip("the local sandbox runs as root without capabilities: no other user to switch to")
    env = make_env(write_task(tmp_path / "my-bench" / "other-user", test_sh=AS_ANOTHER_USER))
    assert play(env)[0] == 1.0
    assert play(env, ["done"])[0] == 0.0
