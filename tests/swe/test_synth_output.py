"""The synthesizer on a small repository the tests build: resume, scoping, issues, wrong fixes, clean edits."""

from __future__ import annotations

import ast
import json
import re
import signal

import pytest

from agentenvs.core.task import load_task
from agentenvs.envs.swe.instance import instance_of
from agentenvs.envs.swe.mutations import CATEGORIES, function_mutations
from agentenvs.envs.swe.synth_output import MANIFEST_NAME, STATE_NAME
from agentenvs.envs.swe.synthesize import SynthesisError, synthesize
from agentenvs.envs.swe.test_scope import RelevantTests, module_name
from agentenvs.validate import validate_tasks
from tests.swe.synth_repo import FILES, make_repo

TRICKY = '''"""A module with formatting ast.unparse would change."""
import os  # a comment


def pick(items, n=2):
    # keep  the  spacing
    if (len(items) >= n) and not items[0]:   # odd spacing, redundant parentheses
        return items[ 1: n+1 ]
    total = 0
    for x in items:
        total += x*2  - 1
    if total > 10:
        total = total // 3
    return max(total, n)


def flag(a, b):
    return a != b or (a is None)


def same(a, b):
    if a:
        return True
    return a
'''


def _tried(out) -> list[str]:
    return [json.loads(ln)["tried"] for ln in (out / STATE_NAME).read_text().splitlines()[1:]]


def test_mutation_edits_leave_the_rest_of_the_file_byte_identical():
    mutations = function_mutations("pkg/tricky.py", TRICKY)
    assert set(CATEGORIES) <= {m.category for m in mutations}, {m.category for m in mutations}
    for m in mutations:
        delta = len(m.edit.replacement) - (m.edit.end - m.edit.start)
        assert m.source[: m.edit.start] == TRICKY[: m.edit.start]
        assert m.source[m.edit.end + delta :] == TRICKY[m.edit.end :]
        assert m.source != TRICKY
        # Only the bug is typed: no parentheses added, no comment or spacing lost on the edited lines.
        assert m.source.count("(") <= TRICKY.count("("), m.kind
        ast.parse(m.source)
    # The comparison flip changes one token, leaving the redundant parentheses as they were.
    flip = next(m for m in mutations if m.kind == "compare GtE->Gt")
    assert "if (len(items) > n) and not items[0]:   # odd spacing" in flip.source
    slice_bump = [m for m in mutations if m.category == "off-by-one" and "items[ 1: n+2 ]" in m.source]
    assert slice_bump, "an off-by-one inside a slice keeps the slice's spacing"


def test_pass_to_pass_is_scoped_to_the_files_that_matter(tmp_path):
    repo = make_repo(tmp_path / "minilib")
    tests = [f for f in FILES if f.startswith("tests/test_")]
    scope = RelevantTests(repo, tests)
    assert module_name("src/pkg/mod.py") == "pkg.mod" and module_name("pkg/__init__.py") == "pkg"
    assert scope.files("minilib/nums.py", ["tests/test_nums.py::test_mean"]) == {"tests/test_nums.py"}
    passed = {"tests/test_nums.py::test_window", "tests/test_text.py::test_shout"}
    assert scope.pass_to_pass("minilib/nums.py", ["tests/test_nums.py::test_mean"], passed) == [
        "tests/test_nums.py::test_window"
    ]
    # A failing test in another file brings its file into scope.
    assert scope.files("minilib/nums.py", ["tests/test_text.py::test_shout"]) == {
        "tests/test_nums.py",
        "tests/test_text.py",
    }


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory):
    root = tmp_path_factory.mktemp("synth")
    repo = make_repo(root / "minilib")
    result = synthesize(
        repo, root / "out", max_tasks=4, jobs=2, seed=3, name="mini", deselect=("tests/test_text.py::test_shout",)
    )
    return root / "out", result


def test_tasks_are_scoped_reproduced_and_leak_nothing(synthesized):
    out, result = synthesized
    assert len(result.tasks) == 4
    # The test that needs a missing package failed on the clean tree: left out, never used.
    assert any("test_needs_pkg" in t for t in result.excluded_tests)
    for task_dir in result.tasks:
        task = load_task(task_dir, family="swe")
        instance = instance_of(task)
        swe = task.config.swe
        assert task.id.startswith("synth__mini-")
        assert not set(instance.FAIL_TO_PASS) & set(instance.PASS_TO_PASS)
        used = instance.FAIL_TO_PASS + instance.PASS_TO_PASS
        assert not any("test_needs_pkg" in t or t.endswith("::test_shout") for t in used)
        # PASS_TO_PASS holds only the files of the failing tests and those importing the mutated module.
        importer = "tests/test_nums.py" if swe["mutation_path"] == "minilib/nums.py" else "tests/test_text.py"
        allowed = {importer} | {t.partition("::")[0] for t in instance.FAIL_TO_PASS}
        assert {t.partition("::")[0] for t in instance.PASS_TO_PASS} <= allowed
        text = task.instruction
        assert "Expected" in text and "Actual" in text
        assert "::" not in text and not re.search(r"\btest_\w+", text), text
        assert f"line {swe['mutation_line']}" not in text and f":{swe['mutation_line']}" not in text
        patch = (task_dir / "solution" / "patch.diff").read_text()
        assert not any(ln[1:].strip() in text for ln in patch.splitlines() if ln.startswith("+") and len(ln) > 12)
        assert swe["reproduced"] is True and "```python" in text
        assert task.difficulty in ("easy", "medium", "hard") and swe["difficulty_signals"]
        assert (task_dir / "solution" / "wrong.diff").is_file()
    listed = [json.loads(ln)["instance_id"] for ln in (out / MANIFEST_NAME).read_text().splitlines()]
    assert sorted(listed) == sorted(p.name for p in result.tasks)


def test_wrong_patches_score_below_one(synthesized):
    _, result = synthesized
    tasks = [load_task(p, family="swe") for p in result.tasks[:2]]
    for validation in validate_tasks(tasks, env_kwargs={"backend": "local", "dense_checks": False}, jobs=2):
        assert validation.episodes["oracle"].score == 1.0, validation.episodes
        assert validation.episodes["noop"].score == 0.0
        assert validation.episodes["wrong"].score is not None and validation.episodes["wrong"].score < 1.0


def test_resume_after_an_interrupt_keeps_tasks_and_skips_tried_mutants(tmp_path):
    repo = make_repo(tmp_path / "minilib")
    out = tmp_path / "out"

    sent = []

    def interrupt_after_two(progress):
        if progress.tasks == 2 and not sent:
            sent.append(progress)
            signal.raise_signal(signal.SIGINT)  # what Ctrl-C does: KeyboardInterrupt in the main thread

    # Python's own Ctrl-C handler, as in a terminal: a shell starts background jobs (make test's
    # second pytest among them) with SIGINT ignored, and raise_signal would then do nothing.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        first = synthesize(repo, out, jobs=2, seed=1, on_progress=interrupt_after_two)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert first.interrupted and first.tasks
    kept = sorted(p.name for p in first.tasks)
    assert sorted(p.parent.name for p in out.glob("*/task.toml")) == kept
    assert len((out / MANIFEST_NAME).read_text().splitlines()) == len(kept)
    tried_first = _tried(out)
    assert len(tried_first) == first.tried < first.total_mutants

    with pytest.raises(SynthesisError, match="--resume"):
        synthesize(repo, out, jobs=2, seed=1)
    assert sorted(p.parent.name for p in out.glob("*/task.toml")) == kept  # the refusal lost nothing

    second = synthesize(repo, out, jobs=2, seed=1, resume=True, max_tasks=len(kept) + 2)
    assert not second.interrupted
    tried_all = _tried(out)
    assert len(tried_all) == len(set(tried_all)), "a mutant was tried twice"
    assert tried_all[: len(tried_first)] == tried_first and second.tried == len(tried_all) - len(tried_first)
    assert set(kept) <= {p.name for p in second.tasks} and len(second.tasks) == len(kept) + 2
    listed = [json.loads(ln)["instance_id"] for ln in (out / MANIFEST_NAME).read_text().splitlines()]
    assert sorted(listed) == sorted(p.name for p in second.tasks)
