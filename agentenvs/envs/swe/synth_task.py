"""One synthesized task directory in the corpus format, built in a staging directory."""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from agentenvs.envs.swe.instance import SWEInstance
from agentenvs.envs.swe.mutations import Mutation
from agentenvs.envs.swe.synth_output import SYNTH_DATE, git


@dataclass(frozen=True)
class TaskSpec:
    """Everything a kept mutant's task holds besides the repository."""

    instance_id: str
    repo_name: str
    mutation: Mutation
    fail_to_pass: list[str]
    pass_to_pass: list[str]
    statement: str
    wrong_source: str | None
    difficulty: str
    difficulty_signals: list[str]
    reproduced: bool
    test_cmd: str


def _toml_value(value: object) -> str:
    if isinstance(value, list):
        if not value:
            return "[]"
        return "[\n" + "".join(f"    {json.dumps(v)},\n" for v in value) + "]"
    return json.dumps(value)


def build_task(pristine: Path, files: list[str], spec: TaskSpec, task_dir: Path) -> dict[str, object]:
    """Write the task into ``task_dir`` (empty); return its SWE-bench instance."""
    m = spec.mutation
    for sub in ("environment", "solution", "tests"):
        (task_dir / sub).mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="agentenvs-synth-task-") as tmp:
        work = Path(tmp)
        for rel in files:
            (work / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(pristine / rel, work / rel)
        target = work / m.path
        original = target.read_bytes()
        target.write_text(m.source, encoding="utf-8")
        git(work, "init", "-q")
        git(work, "add", "-A")
        git(work, "commit", "-q", "-m", f"{spec.repo_name} snapshot")
        base = git(work, "rev-parse", "HEAD").strip()
        git(work, "bundle", "create", "-q", str(task_dir / "environment" / "repo.bundle"), "main")
        target.write_bytes(original)
        patch = git(work, "diff")
        (task_dir / "solution" / "patch.diff").write_text(patch, encoding="utf-8")
        if spec.wrong_source is not None:
            target.write_text(spec.wrong_source, encoding="utf-8")
            (task_dir / "solution" / "wrong.diff").write_text(git(work, "diff"), encoding="utf-8")
    (task_dir / "instruction.md").write_text(spec.statement, encoding="utf-8")
    swe = {
        "instance_id": spec.instance_id,
        "repo": f"synth/{spec.repo_name}",
        "base_commit": base,
        "version": "synth",
        "created_at": SYNTH_DATE,
        "test_cmd": spec.test_cmd,
        "FAIL_TO_PASS": spec.fail_to_pass,
        "PASS_TO_PASS": spec.pass_to_pass,
        "mutation_kind": m.kind,
        "mutation_path": m.path,
        "mutation_function": m.function,
        "mutation_line": m.line,
        "difficulty_signals": spec.difficulty_signals,
        "reproduced": spec.reproduced,
    }
    tags = ["synthesized", spec.repo_name, m.category]
    lines = [
        f"id = {json.dumps(spec.instance_id)}",
        'family = "swe"',
        'version = "1.0"',
        f"difficulty = {json.dumps(spec.difficulty)}",
        f"tags = {json.dumps(tags)}",
        "",
        "[metadata]",
        'category = "software-engineering"',
        "",
        "[environment]",
        'workdir = "/testbed"',
        "",
        "[limits]",
        "max_steps = 40",
        "",
        "[swe]",
    ]
    lines += [f"{key} = {_toml_value(value)}" for key, value in swe.items()]
    (task_dir / "task.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    instance = SWEInstance(
        instance_id=spec.instance_id,
        repo=f"synth/{spec.repo_name}",
        base_commit=base,
        problem_statement=spec.statement,
        patch=patch,
        FAIL_TO_PASS=spec.fail_to_pass,
        PASS_TO_PASS=spec.pass_to_pass,
        version="synth",
        created_at=SYNTH_DATE,
        test_cmd=spec.test_cmd,
    )
    return instance.to_swebench()
