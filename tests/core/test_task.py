"""The task model: Harbor's layout loads, and every malformed file names the file and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentenvs.core import TaskFormatError, load_task


def write_task(root: Path, toml: str, instruction: str = "Do the thing.") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "task.toml").write_text(toml)
    if instruction is not None:
        (root / "instruction.md").write_text(instruction)
    return root


def test_plain_harbor_task_loads(tmp_path: Path) -> None:
    task_dir = write_task(
        tmp_path / "terminal" / "hello",
        """
version = "1.0"
[metadata]
author_name = "A"
difficulty = "easy"
category = "files"
tags = ["files", "shell"]
some_future_harbor_key = 3
[verifier]
timeout_sec = 30.0
[agent]
timeout_sec = 120.0
[environment]
build_timeout_sec = 60.0
cpus = 1
memory_mb = 1024
""",
    )
    task = load_task(task_dir)
    assert task.id == "hello"
    assert task.family == "terminal"
    assert task.full_id == "terminal/hello"
    assert task.difficulty == "easy"
    assert task.tags == ["files", "shell"]
    assert task.config.agent.timeout_sec == 120.0
    assert task.config.verifier.timeout_sec == 30.0
    assert task.config.environment.memory_mb == 1024
    assert task.config.limits.max_steps == 50
    assert task.instruction == "Do the thing."


def test_agentenvs_extensions_load(tmp_path: Path) -> None:
    task = load_task(
        write_task(
            tmp_path / "t",
            """
version = "2"
family = "terminal"
split = "train"
difficulty = "hard"
tags = ["git"]
[limits]
max_steps = 7
[[checkpoints]]
name = "made_dir"
weight = 2
check = "dir_exists"
args = { path = "/app/out" }
[[checkpoints]]
name = "wrote_file"
check = "file_exists"
args = { path = "/app/out/x" }
""",
        )
    )
    assert task.split == "train"
    assert task.difficulty == "hard"
    assert task.config.limits.max_steps == 7
    assert [c.name for c in task.config.checkpoints] == ["made_dir", "wrote_file"]
    assert task.config.checkpoints[0].weight == 2.0
    assert task.version == "2"
    assert len(task.content_hash()) == 64


@pytest.mark.parametrize(
    ("toml", "field"),
    [
        ('difficulty = "impossible"', "difficulty"),
        ("[limits]\nmax_steps = -1", "limits.max_steps"),
        ("[limits]\nmax_step = 3", "limits.max_step"),
        ("[[checkpoints]]\nname = 'a'", "checkpoints[0].check"),
        ('[[checkpoints]]\nname="a"\ncheck="x"\n[[checkpoints]]\nname="a"\ncheck="y"', "checkpoints"),
        ('[agent]\ntimeout_sec = "soon"', "agent.timeout_sec"),
        ("[limit]\nmax_steps = 3", "limit"),
        ('familly = "terminal"', "familly"),
        ('[environment]\nmemory = "lots"', "environment"),
        ('[environment]\nnetwork_mode = "sometimes"', "environment.network_mode"),
        ('[[steps]]\nname = "../up"', "steps[0].name"),
        ('artifacts = ["relative/path"]', "artifacts[0].source"),
        ("[evaluator]\nchecks = []", "evaluator.checks"),
    ],
)
def test_malformed_task_toml_names_file_and_field(tmp_path: Path, toml: str, field: str) -> None:
    task_dir = write_task(tmp_path / "bad", toml)
    with pytest.raises(TaskFormatError) as excinfo:
        load_task(task_dir)
    message = str(excinfo.value)
    assert str(task_dir / "task.toml") in message
    assert excinfo.value.field == field
    assert field in message


def test_invalid_toml_syntax_names_file(tmp_path: Path) -> None:
    task_dir = write_task(tmp_path / "bad", "version = [unclosed")
    with pytest.raises(TaskFormatError, match="not valid TOML") as excinfo:
        load_task(task_dir)
    assert str(task_dir / "task.toml") in str(excinfo.value)


def test_missing_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(TaskFormatError, match="task.toml"):
        load_task(tmp_path)
    task_dir = write_task(tmp_path / "noinstr", 'version = "1"', instruction=None)
    with pytest.raises(TaskFormatError, match="instruction.md"):
        load_task(task_dir)
    empty = write_task(tmp_path / "empty", 'version = "1"', instruction="  \n")
    with pytest.raises(TaskFormatError, match="empty"):
        load_task(empty)
