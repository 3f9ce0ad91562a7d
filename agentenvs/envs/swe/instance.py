"""The SWE task model: SWE-bench's instance fields plus where the repository comes from.

An on-disk SWE task is a Harbor-layout directory whose ``task.toml`` has an
``[swe]`` section (the instance fields), ``instruction.md`` (the problem
statement), ``environment/repo.bundle`` (the repository, history stopping at
``base_commit``), ``solution/patch.diff`` (gold), ``solution/wrong.diff`` (a
plausible wrong fix) and ``tests/test_patch.diff`` (the hidden tests).
Imported SWE-bench instances instead name an image that already holds the
repository at ``/testbed``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agentenvs.core.errors import TaskFormatError
from agentenvs.core.task import Task
from agentenvs.envs.swe.isolation import split_test_cmd

BUNDLE_NAME = "repo.bundle"
GOLD_PATCH = "patch.diff"
WRONG_PATCH = "wrong.diff"
TEST_PATCH = "test_patch.diff"
DEFAULT_TEST_CMD = "python3 -m pytest"
DEFAULT_IMAGE = "agentenvs/swe:latest"


class SWEInstance(BaseModel):
    """SWE-bench's instance fields (``FAIL_TO_PASS`` etc. spelled as the dataset spells them)."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    instance_id: str = Field(min_length=1)
    repo: str = ""
    base_commit: str = Field(min_length=7)
    problem_statement: str = ""
    patch: str = ""
    test_patch: str = ""
    FAIL_TO_PASS: list[str] = Field(min_length=1)
    PASS_TO_PASS: list[str] = Field(default_factory=list)
    version: str = ""
    created_at: str = ""
    hints_text: str = ""
    environment_setup_commit: str = ""
    #: Our additions: how to run the tests, and (for imported instances) the image holding the repo.
    test_cmd: str = DEFAULT_TEST_CMD
    image: str | None = None
    repo_in_image: bool = False

    @field_validator("FAIL_TO_PASS", "PASS_TO_PASS", mode="before")
    @classmethod
    def _json_list(cls, value: Any) -> Any:
        """The published datasets store these lists as JSON-encoded strings."""
        if isinstance(value, str):
            try:
                return json.loads(value) if value.strip() else []
            except json.JSONDecodeError:
                raise ValueError("must be a list of test ids or a JSON-encoded list") from None
        return value

    @field_validator("version", mode="before")
    @classmethod
    def _version_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, (int, float)) else value

    @field_validator("test_cmd")
    @classmethod
    def _runs_pytest(cls, value: str) -> str:
        """The grader isolates the interpreter that runs pytest, so it must be able to find it."""
        split_test_cmd(value)
        return value

    def to_swebench(self) -> dict[str, Any]:
        """The instance as SWE-bench publishes it (lists JSON-encoded, as in the HF dataset)."""
        return {
            "repo": self.repo,
            "instance_id": self.instance_id,
            "base_commit": self.base_commit,
            "patch": self.patch,
            "test_patch": self.test_patch,
            "problem_statement": self.problem_statement,
            "hints_text": self.hints_text,
            "created_at": self.created_at,
            "version": self.version,
            "FAIL_TO_PASS": json.dumps(self.FAIL_TO_PASS),
            "PASS_TO_PASS": json.dumps(self.PASS_TO_PASS),
            "environment_setup_commit": self.environment_setup_commit,
        }

    @property
    def test_ids(self) -> list[str]:
        return [*self.FAIL_TO_PASS, *self.PASS_TO_PASS]


def parse_instance(data: dict[str, Any], source: str | Path) -> SWEInstance:
    """Validate instance fields; errors name the source and the field."""
    try:
        return SWEInstance.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise TaskFormatError(str(source), first["msg"], field=field) from None


def _read(path: Path | None) -> str:
    return path.read_text(encoding="utf-8") if path is not None and path.is_file() else ""


#: ``[swe]`` keys that may name a file of the task instead of holding its text.
_FILE_FIELDS = {"patch": f"solution/{GOLD_PATCH}", "test_patch": f"tests/{TEST_PATCH}"}


def _task_file(task: Task, value: str, field: str) -> Path:
    assert task.path is not None
    path = (task.path / value).resolve()
    if not path.is_relative_to(task.path.resolve()) or not path.is_file():
        raise TaskFormatError(
            str(task.path / "task.toml"), f"names {value!r}, which is not a file of the task", field=f"swe.{field}"
        )
    return path


def _names_file(value: object) -> bool:
    return isinstance(value, str) and bool(value) and "\n" not in value and not value.startswith("diff ")


def instance_of(task: Task) -> SWEInstance:
    """The instance a task carries: its ``[swe]`` section plus the patches on disk.

    ``patch`` and ``test_patch`` may hold the diff itself or name a file of the
    task; by default they are ``solution/patch.diff`` and ``tests/test_patch.diff``.
    The gold patch is read here, on the host, and never enters the agent's sandbox.
    """
    where = task.path / "task.toml" if task.path else task.full_id
    if not task.config.swe:
        raise TaskFormatError(
            str(where), "an SWE task needs an [swe] section (instance_id, base_commit, FAIL_TO_PASS, ...)"
        )
    fields = dict(task.config.swe)
    fields.setdefault("problem_statement", task.instruction)
    for field, default in _FILE_FIELDS.items():
        value = fields.get(field)
        if task.path is not None and _names_file(value):
            fields[field] = _task_file(task, str(value), field).read_text(encoding="utf-8")
        elif value is None and task.path is not None and (task.path / default).is_file():
            fields[field] = (task.path / default).read_text(encoding="utf-8")
    if task.config.environment.docker_image and "image" not in fields:
        fields["image"] = task.config.environment.docker_image
    instance = parse_instance(fields, where)
    if not instance.repo_in_image and bundle_path(task) is None:
        raise TaskFormatError(
            str(where),
            f"missing environment/{BUNDLE_NAME} (the repository at base_commit); "
            "for a repository that lives in the image set [swe] repo_in_image = true",
        )
    return instance


def bundle_path(task: Task) -> Path | None:
    """The task's git bundle: ``[swe] bundle`` or ``environment/repo.bundle``."""
    named = task.config.swe.get("bundle")
    if isinstance(named, str) and task.path is not None:
        return _task_file(task, named, "bundle")
    env = task.dir("environment")
    if env is None or not (env / BUNDLE_NAME).is_file():
        return None
    return env / BUNDLE_NAME


def wrong_patch(task: Task) -> str | None:
    """The task's plausible wrong fix: ``[swe] wrong_patch`` or ``solution/wrong.diff``."""
    named = task.config.swe.get("wrong_patch")
    if isinstance(named, str) and task.path is not None:
        return _task_file(task, named, "wrong_patch").read_text(encoding="utf-8")
    solution = task.dir("solution")
    if solution is None or not (solution / WRONG_PATCH).is_file():
        return None
    return (solution / WRONG_PATCH).read_text(encoding="utf-8")
