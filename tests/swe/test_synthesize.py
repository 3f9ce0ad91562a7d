"""The bug synthesizer: validated tasks from the corpus repositories."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import pytest

from agentenvs.core.task import load_task
from agentenvs.envs.swe.instance import instance_of, wrong_patch
from agentenvs.envs.swe.interop import load_instances
from agentenvs.envs.swe.mutations import function_mutations
from agentenvs.envs.swe.synthesize import SynthesisError, snapshot, synthesize
from agentenvs.validate import validate_tasks
from tests.swe.swe_helpers import corpus_repos


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True, timeout=60).stdout


def _tree(directory: Path) -> str:
    """The git tree id of a directory's files (what `git add -A` would record)."""
    if not (directory / ".git").exists():
        _git(directory, "init", "-q")
    _git(directory, "add", "-A")
    return _git(directory, "write-tree").strip()


def check_task(task_dir: Path, pristine_tree: str, tmp: Path) -> None:
    """A synthesized task is sound: one commit of history, the bug is real, the gold patch undoes it."""
    task = load_task(task_dir, family="swe")
    instance = instance_of(task)
    assert instance.FAIL_TO_PASS and instance.PASS_TO_PASS
    assert not set(instance.FAIL_TO_PASS) & set(instance.PASS_TO_PASS)
    assert not any(t.split("::")[-1].split("[")[0] in task.instruction for t in instance.FAIL_TO_PASS)
    assert "Expected" in task.instruction and "Actual" in task.instruction
    clone = tmp / task.id
    bundle = task_dir / "environment" / "repo.bundle"
    assert _git(tmp, "bundle", "list-heads", str(bundle)).split() == [instance.base_commit, "refs/heads/main"]
    _git(tmp, "clone", "-q", "--branch", "main", str(bundle), str(clone))
    assert _git(clone, "rev-list", "--all").split() == [instance.base_commit]
    assert _tree(clone) != pristine_tree
    (clone / "gold.diff").write_text(instance.patch)
    _git(clone, "apply", "gold.diff")
    (clone / "gold.diff").unlink()
    assert _tree(clone) == pristine_tree


def test_mutations_cover_the_kinds():
    source = (
        "def f(a, b):\n    if a < b and b > 0:\n        return a + b\n    if not a:\n        return 1\n"
        "    return a[0] == b\n"
    )
    kinds = {m.category for m in function_mutations("m.py", source)}
    assert {"compare", "binop", "boolop", "drop-condition", "off-by-one"} <= kinds
    for m in function_mutations("m.py", source):
        compile(m.source, "m.py", "exec")
        assert m.source != source


def test_a_failing_suite_is_refused(tmp_path):
    repo = tmp_path / "bad"
    (repo / "tests").mkdir(parents=True)
    (repo / "lib.py").write_text("def one():\n    return 1\n")
    (repo / "tests" / "test_lib.py").write_text("from lib import one\ndef test_one():\n    assert one() == 2\n")
    with pytest.raises(SynthesisError, match="no test passes"):
        synthesize(repo, tmp_path / "out")


def test_the_repository_code_never_runs_on_this_host(tmp_path, backend):
    """The suites run in a sandbox: a module that writes to this host's disk at import cannot."""
    repo, marker = tmp_path / "probe", tmp_path / "ran-on-the-host"
    (repo / "tests").mkdir(parents=True)
    (repo / "lib.py").write_text(
        f"try:\n    open({str(marker)!r}, 'w').close()\nexcept OSError:\n    pass\n\n\n"
        "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
    )
    (repo / "tests" / "test_lib.py").write_text(
        "from lib import add, sub\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
        "def test_sub():\n    assert sub(5, 3) == 2\n"
    )
    result = synthesize(repo, tmp_path / "out", max_tasks=1, jobs=1, backend=backend)
    # The clean suite and every mutant's suite imported lib.py (in the sandbox); whether a mutant
    # became a task (one-line functions leave no wrong fix to prove) does not matter here.
    assert result.baseline_tests == 2 and result.tried == result.total_mutants == 2
    assert not marker.exists()


def test_synthesized_tasks_validate_end_to_end(tmp_path):
    repo = corpus_repos()[0]
    result = synthesize(repo, tmp_path / "out", max_tasks=4, seed=1)
    assert len(result.tasks) == 4
    pristine = tmp_path / "pristine"
    snapshot(repo, pristine)
    tree = _tree(pristine)
    for task_dir in result.tasks:
        check_task(task_dir, tree, tmp_path)
    assert [i.instance_id for i in load_instances(tmp_path / "out" / "instances.jsonl")] == [
        p.name for p in result.tasks
    ]
    tasks = [load_task(p, family="swe") for p in result.tasks[:2]]
    for validation in validate_tasks(tasks, env_kwargs={"backend": "local", "dense_checks": False}, jobs=2):
        assert validation.ok, validation.episodes
        assert validation.episodes["oracle"].score == 1.0 and validation.episodes["noop"].score == 0.0
        if wrong_patch(load_task(tmp_path / "out" / validation.task_id.split("/")[1], family="swe")):
            assert validation.episodes["wrong"].score == 0.0


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_at_least_100_validated_tasks_from_the_corpus(tmp_path):
    """The proof: 100+ tasks over the corpus, each checked against its repository."""
    repos = corpus_repos()
    assert repos
    per_repo = math.ceil(104 / len(repos))
    total = 0
    for repo in repos:
        out = tmp_path / repo.parent.name
        result = synthesize(repo, out, max_tasks=per_repo, jobs=2)
        pristine = tmp_path / f"{repo.parent.name}-pristine"
        snapshot(repo, pristine)
        tree = _tree(pristine)
        for task_dir in result.tasks:
            check_task(task_dir, tree, tmp_path)
        total += len(result.tasks)
    assert total >= 100
