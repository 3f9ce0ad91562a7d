"""Harbor's task.toml (schema 1.4) loads as Harbor defines it; unknown Harbor keys warn, our typos fail."""

from __future__ import annotations

from pathlib import Path

import pytest

import agentenvs
from agentenvs.core import TaskFormatError, load_task
from tests.terminal.harbor_tasks import write_task

FULL = """
schema_version = "1.4"
artifacts = ["/workspace/answer.txt", { source = "/workspace/out", destination = "outdir" }]
multi_step_reward_strategy = "final"
source = "my-bench"
a_future_top_level_key = "kept"

[task]
name = "someone/answer"
description = "Write the answer"
authors = [{ name = "A. Author", email = "a@example.com" }]
keywords = ["demo"]

[metadata]
difficulty = "Expert"
difficulty_explanation = "not really"
category = "demo"

[agent]
user = "agent"
network_mode = "no-network"

[verifier]
timeout_sec = 60.0
env = { MODE = "strict" }
user = "root"
network_mode = "no-network"
environment_mode = "shared"

[solution]
env = { HINT = "1" }

[environment]
build_timeout_sec = 300.0
os = "linux"
cpus = 2
memory = "2G"
storage = "512M"
gpus = 0
allow_internet = false
mcp_servers = [{ name = "tools", transport = "stdio", command = "tools-server" }]
healthcheck = { command = "true", interval_sec = 1.0, retries = 1 }
skills_dir = "/skills"
some_future_environment_key = 1

[environment.network]
mode = "no-network"

[environment.env]
LANG = "C.UTF-8"

[[steps]]
name = "first"
min_reward = { reward = 1.0 }
[steps.agent]
timeout_sec = 30.0
[steps.verifier]
timeout_sec = 20.0

[[steps]]
name = "second"
contributes_to_reward = true
"""


def test_every_key_of_the_current_schema_loads(tmp_path: Path) -> None:
    root = write_task(
        tmp_path / "my-bench" / "answer",
        toml=FULL,
        files={
            "steps/first/instruction.md": "Step one.",
            "steps/second/instruction.md": "Step two.",
        },
    )
    task = load_task(root)
    env = task.config.environment
    assert task.family == "terminal" and task.full_id == "terminal/answer"
    assert (env.memory_mb, env.storage_mb, env.cpus) == (2048, 512, 2)
    assert env.requested_mode() == "no-network"
    assert [a.source for a in task.config.artifacts] == ["/workspace/answer.txt", "/workspace/out"]
    assert task.config.artifacts[1].destination == "outdir"
    assert [s.name for s in task.steps] == ["first", "second"]
    assert task.steps[0].config.min_reward == {"reward": 1.0}
    assert task.instruction == "Write 42 into answer.txt in the working directory."
    assert task.difficulty is None  # Harbor's free-form difficulty is not one of ours
    warned = "\n".join(task.warnings)
    assert "a_future_top_level_key" in warned
    assert "environment.some_future_environment_key" in warned
    # Harbor's [metadata] is a free-form table: its keys are the task's data, not settings we miss
    assert "difficulty_explanation" not in warned
    assert task.config.metadata.model_extra == {"difficulty_explanation": "not really"}


@pytest.mark.parametrize(
    ("toml", "mode"),
    [
        ("[environment]\nallow_internet = true", "public"),
        ('[environment]\nnetwork_mode = "public"', "public"),
        ('[environment]\nallowed_hosts = ["pypi.org"]', "allowlist"),
        ('[environment.network]\nnetwork_mode = "allowlist"\nallowed_hosts = ["pypi.org"]', "allowlist"),
        ("[environment]\nnetwork = true", "public"),
        ("[environment]\ncpus = 1", "no-network"),
    ],
)
def test_network_settings_are_read(tmp_path: Path, toml: str, mode: str) -> None:
    task = load_task(write_task(tmp_path / "bench" / "t", toml=toml))
    assert task.config.environment.requested_mode() == mode


def test_a_task_given_by_path_is_a_terminal_task_anywhere(tmp_path: Path) -> None:
    root = write_task(tmp_path / "textgame" / "not-a-game")
    assert load_task(root).family == "terminal"
    env = agentenvs.make(root)
    try:
        assert env.unwrapped.family == "terminal"
    finally:
        env.close()


def test_a_step_without_its_folder_is_refused(tmp_path: Path) -> None:
    root = write_task(tmp_path / "b" / "t", toml='[[steps]]\nname = "one"\n')
    with pytest.raises(TaskFormatError, match="steps") as excinfo:
        load_task(root)
    assert "one" in str(excinfo.value)


def test_a_tags_table_at_the_top_is_a_harbor_tasks_own_and_is_ignored(tmp_path: Path) -> None:
    # as a community task writes it (AyliD/sql-query-optimizer): Harbor ignores the table, so must we
    toml = 'schema_version = "1.1"\n[metadata]\ntags = ["sql"]\n[tags]\ndomain = "data_science"\n'
    task = load_task(write_task(tmp_path / "sql-task", toml=toml))
    assert task.tags == ["sql"]
    assert any("[tags] table ignored" in w for w in task.warnings)
    with pytest.raises(TaskFormatError):  # a list of the wrong kind is still ours, and wrong
        load_task(write_task(tmp_path / "bad", toml="tags = [1]\n"))
