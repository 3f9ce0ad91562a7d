"""Running what people have (issue 9, item 2): task directories, folders of them and registered ids
by path, on either backend; one broken task reported while the rest run; whole details on demand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentenvs.cli import app
from agentenvs.harness.rundir import RunDir

cli = CliRunner()
#: Printed by the failing Dockerfile after 300 characters of noise: what a cut detail hid.
REAL_ERROR = "E: the real error is here, package [libfoo] not found"


def invoke(*args: str):
    return cli.invoke(app, list(args), catch_exceptions=False, env={"COLUMNS": "250"})


def harbor_task(root: Path, name: str, dockerfile: str = "FROM agentenvs/terminal\nWORKDIR /app\n") -> Path:
    """A Harbor-format task of our own making: write ``hello`` into /app/out.txt."""
    task = root / name
    for sub in ("environment", "tests", "solution"):
        (task / sub).mkdir(parents=True)
    (task / "task.toml").write_text('version = "1.0"\n[verifier]\ntimeout_sec = 60\n')
    (task / "instruction.md").write_text("Write hello into /app/out.txt.\n")
    (task / "environment" / "Dockerfile").write_text(dockerfile)
    (task / "tests" / "test.sh").write_text(
        '#!/bin/bash\nif [ "$(cat /app/out.txt 2>/dev/null)" = hello ]; then r=1; else r=0; fi\n'
        "echo $r > /logs/verifier/reward.txt\n"
    )
    (task / "solution" / "solve.sh").write_text("#!/bin/bash\necho hello > /app/out.txt\n")
    return task


@pytest.fixture()
def mixed(tmp_path: Path) -> Path:
    """A folder (not named after a family) of one good task, one that does not parse and one that does not build."""
    root = tmp_path / "downloaded"
    harbor_task(root, "good")
    noise = "x" * 300
    harbor_task(root, "nobuild", f'FROM agentenvs/terminal\nRUN echo {noise} && echo "{REAL_ERROR}" && exit 3\n')
    broken = root / "nested" / "bad-toml"
    broken.mkdir(parents=True)
    (broken / "task.toml").write_text('[limits]\nmax_steps = "many"\n')
    (broken / "instruction.md").write_text("Do it.\n")
    return root


def _row(output: str, task: str) -> str:
    return next(line for line in output.splitlines() if line.startswith(f"│ {task} "))


def test_validate_a_folder_and_an_id_isolating_broken_tasks(mixed: Path):
    result = invoke("validate", str(mixed), "terminal/fix-permissions", "--no-audit")
    assert result.exit_code == 1, result.output
    good = _row(result.stdout, "terminal/good")
    assert "1.00" in good and "0.00" in good and "yes" in good
    assert "yes" in _row(result.stdout, "terminal/fix-permissions")
    assert "NO" in _row(result.stdout, "terminal/nobuild")
    flat = " ".join(result.stdout.split())  # the detail cell wraps
    assert "SandboxError" in flat and "--verbose shows them" in flat  # the build failed (docker builds it)
    assert REAL_ERROR not in result.stdout  # cut in the table...
    assert "[limits.max_steps]" in result.stdout and "did not load" in result.stdout
    assert "2 of 4 tasks failed validation" in result.stdout
    assert "validating 3 tasks on local" in result.stderr and "9/9" in result.stderr  # the progress bar

    verbose = invoke("validate", str(mixed / "nobuild"), "--no-audit", "--verbose")
    assert verbose.exit_code == 1
    assert REAL_ERROR in verbose.stdout  # ...and whole with --verbose


def test_validate_and_audit_take_a_registered_id():
    """``agentenvs validate terminal/background-worker`` used to say "not a directory"."""
    result = invoke("audit", "terminal/background-worker", "--hack", "claim-success", "--json")
    assert result.exit_code == 0, result.output
    assert [t["task_id"] for t in json.loads(result.stdout)["tasks"]] == ["terminal/background-worker"]
    missing = invoke("validate", "terminal/no-such-task")
    assert missing.exit_code == 2
    assert "terminal/no-such-task: not a task directory, a folder of them, or a registered task id" in missing.output


def test_run_takes_paths_and_ids_and_resumes_from_them(mixed: Path, tmp_path: Path):
    out = tmp_path / "run"
    result = invoke("run", str(mixed / "good"), "terminal/fix-permissions", "textgame/coin-easy-0",
                    "--backend", "local", "--out", str(out), "--no-progress")  # fmt: skip
    assert result.exit_code == 0, result.output
    episodes = {e["task_id"]: e for e in RunDir(out).read_episodes()}
    scores = {k: e["score"] for k, e in episodes.items()}  # --backend reaches only the families with sandboxes
    assert scores == {"terminal/good": 1.0, "terminal/fix-permissions": 1.0, "textgame/coin-easy-0": 1.0}
    config = json.loads((out / "run.json").read_text())["config"]
    assert config["task_dirs"] == {"terminal/good": str((mixed / "good").resolve())} and config["backend"] == "local"
    resumed = invoke("run", "--resume", "--out", str(out), "--no-progress")
    assert resumed.exit_code == 0, resumed.output

    broken = invoke("run", str(mixed), "--out", str(tmp_path / "other"))
    assert (
        broken.exit_code == 2
        and "1 task directory did not load" in broken.output
        and "[limits.max_steps]" in broken.output
    )
    twice = tmp_path / "again"
    harbor_task(twice, "good")
    clash = invoke("run", str(mixed / "good"), str(twice / "good"), "--out", str(tmp_path / "other"))
    assert clash.exit_code == 2 and "two tasks have the id terminal/good" in clash.output
    assert not (tmp_path / "other").exists()


def test_run_exits_nonzero_naming_infra_episodes(tmp_path: Path, docker_client):
    """A task whose environment cannot be made ends as infra: the command fails and says why."""
    root = tmp_path / "tasks"
    harbor_task(root, "no-image", "FROM agentenvs/no-such-image-anywhere\n")
    result = invoke("run", str(root), "--backend", "docker", "--max-infra-retries", "0",
                    "--out", str(tmp_path / "run"), "--no-progress")  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "1 episode ended as infra errors:" in result.output
    assert "terminal/no-image trial 0:" in result.output


def test_validate_on_docker(mixed: Path, docker_client):
    result = invoke("validate", str(mixed / "good"), "--backend", "docker", "--no-audit")
    assert result.exit_code == 0, result.output
    assert "all 1 tasks valid" in result.stdout and "validate (docker)" in result.stdout
