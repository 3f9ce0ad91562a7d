"""Every terminal task: the oracle scores 1, doing nothing 0, its wrong solution below 1."""

from __future__ import annotations

import pytest

import agentenvs
from agentenvs.core.task import Checkpoint
from agentenvs.validate import validate_tasks

HARBOR_PLAIN = {"terminal/harbor-count-lines", "terminal/harbor-fix-script"}


def test_corpus_shape() -> None:
    tasks = agentenvs.list_tasks(family="terminal")
    assert len(tasks) >= 20
    assert {t.difficulty for t in tasks} >= {"easy", "medium", "hard"}
    for task in tasks:
        assert task.path is not None
        assert (task.path / "solution" / "solve.sh").is_file(), task.full_id
        assert (task.path / "solution" / "wrong.sh").is_file(), task.full_id
        assert (task.path / "tests" / "test.sh").is_file(), task.full_id
        if task.full_id not in HARBOR_PLAIN:
            assert len(task.config.checkpoints) >= 2, task.full_id


def test_harbor_plain_tasks_use_no_extension() -> None:
    import tomllib

    harbor_keys = {"version", "schema_version", "metadata", "verifier", "agent", "environment", "task", "solution"}
    for full_id in HARBOR_PLAIN:
        task = agentenvs.get_task(full_id)
        data = tomllib.loads((task.path / "task.toml").read_text())
        assert set(data) <= harbor_keys, f"{full_id} uses non-Harbor keys {set(data) - harbor_keys}"


@pytest.mark.parametrize("backend", ["local", "docker"])
def test_every_task_validates(backend: str, request: pytest.FixtureRequest) -> None:
    if backend == "docker":
        request.getfixturevalue("docker_client")
    tasks = agentenvs.list_tasks(family="terminal")
    # The checkpoints run on the local backend; on docker, where each check is a process start in the
    # container, the scores alone are what this proves.
    results = validate_tasks(tasks, env_kwargs={"backend": backend, "dense_checks": backend == "local"}, jobs=2)
    problems = {
        r.task_id: {v: (e.score, e.detail[-800:]) for v, e in r.episodes.items() if not e.ok}
        for r in results
        if not r.ok
    }
    assert not problems
    for result in results:
        assert result.episodes["oracle"].score == 1.0
        assert result.episodes["noop"].score == 0.0
        assert result.episodes["wrong"].score is not None and result.episodes["wrong"].score < 1.0


def test_a_checkpoint_the_oracle_never_passes_fails_validation() -> None:
    task = agentenvs.get_task("terminal/json-group-by-city")
    unreachable = Checkpoint(check="command_exit", args={"command": "test -e /app/never-made"}, name="never")
    config = task.config.model_copy(update={"checkpoints": [*task.config.checkpoints, unreachable]})
    broken_task = task.model_copy(update={"config": config})
    (broken,) = validate_tasks([broken_task], env_kwargs={"backend": "local"})
    oracle = broken.episodes["oracle"]
    assert oracle.score == 1.0 and oracle.unreached == ("never",)
    assert not oracle.ok and not broken.ok
    assert oracle.detail.startswith("checkpoints the oracle never passed: never")
    (sound,) = validate_tasks([task], env_kwargs={"backend": "local"})
    assert sound.ok and sound.episodes["oracle"].unreached == ()
    # Without dense checks nothing is checked, so nothing is unreached.
    (unchecked,) = validate_tasks([broken_task], {"backend": "local", "dense_checks": False})
    assert unchecked.ok
