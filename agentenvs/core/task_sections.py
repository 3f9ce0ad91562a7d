"""The sections of ``task.toml``: Harbor's, read as Harbor writes them, and ours.

Harbor's sections (``[task]``, ``[metadata]``, ``[agent]``, ``[verifier]``,
``[environment]``, ``[solution]``, ``[[steps]]``, ``artifacts``) keep keys we
do not know, so a task written for a newer Harbor still loads (the loader
warns about them). Our own sections (``[limits]``, ``[evaluator]``,
``[[checkpoints]]``) reject unknown keys: there they are typos. The field
names and their meaning follow Harbor's schema 1.4 (see docs/task-format.md).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

NetworkMode = Literal["public", "no-network", "allowlist"]
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT])?(?:I?B)?\s*$", re.IGNORECASE)
_SIZE_MB = {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}
STEP_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Open(BaseModel):
    """Harbor's sections: keep unknown keys so newer Harbor tasks still load."""

    model_config = ConfigDict(extra="allow", frozen=True)


def size_to_mb(value: str) -> int:
    """Harbor's size strings (``"2G"``, ``"512M"``, ``"1.5G"``, ``"4096"`` = MB) in megabytes."""
    match = _SIZE.match(value)
    if not match:
        raise ValueError(f"{value!r} is not a size; write it like '2G' or '512M'")
    return max(1, int(float(match.group(1)) * _SIZE_MB[(match.group(2) or "M").upper()]))


class PhaseNetwork(Open):
    """A phase's network override: Harbor's ``network_mode`` and ``allowed_hosts`` in ``[agent]``/``[verifier]``."""

    network_mode: NetworkMode | None = None
    allowed_hosts: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _hosts_imply_allowlist(self) -> PhaseNetwork:
        if self.allowed_hosts and self.network_mode not in (None, "allowlist"):
            raise ValueError("allowed_hosts is only valid with network_mode = 'allowlist'")
        return self

    def requested_mode(self) -> NetworkMode | None:
        if self.network_mode is None and self.allowed_hosts:
            return "allowlist"
        return self.network_mode


class MetadataSection(Open):
    author_name: str | None = None
    author_email: str | None = None
    difficulty: str | None = None
    category: str | None = None
    tags: list[str] = Field(default_factory=list)


class AgentSection(PhaseNetwork):
    """``timeout_sec`` may be left unset, as Harbor allows; agentenvs then gives 600 s."""

    timeout_sec: float = Field(600.0, gt=0)
    user: str | int | None = None

    @field_validator("timeout_sec", mode="before")
    @classmethod
    def _unset_timeout(cls, value: Any) -> Any:
        return 600.0 if value is None else value


class VerifierSection(PhaseNetwork):
    """``timeout_sec`` defaults to Harbor's 600 s: a task written for Harbor may take that long to test."""

    timeout_sec: float = Field(600.0, gt=0)
    env: dict[str, str] = Field(default_factory=dict)
    user: str | int | None = None
    environment_mode: Literal["shared", "separate"] | None = None
    environment: dict[str, Any] | None = None


class EnvironmentSection(Open):
    """The sandbox. ``memory``/``storage`` (``"2G"``) and ``[environment.network]`` are read as Harbor's
    older spellings of ``memory_mb``/``storage_mb`` and ``network_mode``/``allowed_hosts``."""

    docker_image: str | None = None
    build_timeout_sec: float = Field(600.0, gt=0)
    os: str | None = None
    cpus: float = Field(1.0, gt=0)
    memory_mb: int = Field(2048, gt=0)
    storage_mb: int | None = Field(None, gt=0)
    gpus: int = Field(0, ge=0)
    gpu_types: list[str] | None = None
    pids: int = Field(512, gt=0)
    workdir: str = "/app"
    network: bool | None = None
    allow_internet: bool | None = None
    network_mode: NetworkMode | None = None
    allowed_hosts: list[str] = Field(default_factory=list)
    mcp_servers: list[dict[str, Any]] = Field(default_factory=list)
    healthcheck: dict[str, Any] | None = None
    skills_dir: str | None = None
    env: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _older_spellings(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for old, new in (("memory", "memory_mb"), ("storage", "storage_mb")):
            value = data.pop(old, None)
            if value is None:
                continue
            if new in data:
                raise ValueError(f"give {old} or {new}, not both")
            data[new] = size_to_mb(value) if isinstance(value, str) else value
        table = data.get("network")
        if isinstance(table, dict):
            del data["network"]
            mode = table.get("network_mode", table.get("mode"))
            if mode is not None:
                data.setdefault("network_mode", mode)
            if table.get("allowed_hosts"):
                data.setdefault("allowed_hosts", table["allowed_hosts"])
        return data

    @property
    def workdir_is_set(self) -> bool:
        """Whether the task names its workdir; otherwise the image's WORKDIR decides."""
        return "workdir" in self.model_fields_set

    def requested_mode(self) -> NetworkMode:
        """The baseline network the task asks for. Unlike Harbor, nothing said means no network."""
        if self.network_mode is not None:
            return self.network_mode
        if self.allowed_hosts:
            return "allowlist"
        if self.allow_internet or self.network:
            return "public"
        return "no-network"


class ArtifactSpec(Open):
    """One ``artifacts`` entry: a path copied out of the sandbox after the episode."""

    source: str
    destination: str | None = None
    service: str | None = None

    @field_validator("source")
    @classmethod
    def _absolute(cls, value: str) -> str:
        if not value.startswith("/"):
            raise ValueError(f"artifact sources are absolute paths in the sandbox, got {value!r}")
        return value

    @field_validator("destination")
    @classmethod
    def _relative(cls, value: str | None) -> str | None:
        if value is not None and (value.startswith("/") or ".." in value.split("/")):
            raise ValueError(f"an artifact destination is a relative path without '..', got {value!r}")
        return value


class StepAgent(PhaseNetwork):
    timeout_sec: float | None = Field(None, gt=0)
    user: str | int | None = None


class StepVerifier(PhaseNetwork):
    timeout_sec: float | None = Field(None, gt=0)
    env: dict[str, str] = Field(default_factory=dict)
    user: str | int | None = None


class StepSection(Open):
    """One ``[[steps]]`` entry; its files are in ``steps/<name>/``."""

    name: str
    min_reward: float | dict[str, float] | None = None
    contributes_to_reward: bool = True
    agent: StepAgent = Field(default_factory=StepAgent)
    verifier: StepVerifier = Field(default_factory=StepVerifier)
    healthcheck: dict[str, Any] | None = None

    @field_validator("name")
    @classmethod
    def _folder_name(cls, value: str) -> str:
        if not STEP_NAME.match(value):
            raise ValueError(f"step names are folder names (letters, digits, '.', '_', '-'), got {value!r}")
        return value


class LimitsSection(Strict):
    max_steps: int = Field(50, gt=0)
    step_timeout_sec: float = Field(60.0, gt=0)
    max_output_bytes: int = Field(64 * 1024, gt=0)


class CheckSpec(Strict):
    """A call of one checker from ``evaluators/`` by name, with its arguments."""

    check: str
    args: dict[str, Any] = Field(default_factory=dict)


class Checkpoint(CheckSpec):
    """A dense step check: a cheap predicate on the state, evaluated every step."""

    name: str
    weight: float = Field(1.0, gt=0)
    description: str = ""


class EvaluatorSection(Strict):
    """The final score from checkers, for tasks with no ``tests/test.sh``."""

    checks: list[CheckSpec] = Field(min_length=1)
    mode: Literal["all", "mean"] = "all"
