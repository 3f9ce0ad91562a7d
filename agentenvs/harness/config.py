"""``RunConfig``: everything that defines a run, recorded in ``run.json``."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class PolicySpec(BaseModel):
    """Which policy and its options, as given on the command line (no secrets: keys come from env vars)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    options: dict[str, Any] = Field(default_factory=dict)


class RunConfig(BaseModel):
    """A run: which tasks, which policy, how many trials, how much at once, which deadlines."""

    model_config = ConfigDict(extra="forbid")

    tasks: list[str] = Field(min_length=1, description="full task ids, in order")
    task_dirs: dict[str, str] = Field(
        default_factory=dict, description="full id -> directory, for the tasks named by path rather than registered"
    )
    selection: dict[str, Any] = Field(default_factory=dict, description="the suite, globs and filters as given")
    policy: PolicySpec
    trials: int = Field(1, ge=1)
    seed: int = 0
    same_seed: bool = Field(
        False,
        description="every trial of a task uses `seed` (repeated rollouts of one initial state, a group for "
        "group-based RL such as GRPO); otherwise trial t uses seed + t",
    )
    concurrency: int = Field(4, ge=1, description="episodes in flight")
    max_sandboxes: int | None = Field(None, ge=1, description="envs alive at once (default: concurrency)")
    max_policy_calls: int | None = Field(None, ge=1, description="policy requests in flight (default: concurrency)")
    max_infra_retries: int = Field(2, ge=0)
    infra_retry_delay_sec: float = Field(1.0, ge=0)
    policy_timeout_sec: float | None = Field(None, gt=0, description="deadline of one policy decision (default 600)")
    env_timeout_sec: float | None = Field(None, gt=0, description="deadline of one env call (default: from the task)")
    episode_timeout_sec: float | None = Field(None, gt=0, description="deadline of an episode (default: from the task)")
    max_steps: int | None = Field(None, ge=1)
    env_kwargs: dict[str, Any] = Field(default_factory=dict)
    backend: str | None = Field(None, description="sandbox backend, for the families that have sandboxes")
    executor: str = Field("local", description="where envs live: local (this process) or ray (Ray actors)")
    executor_options: dict[str, Any] = Field(default_factory=dict, description="e.g. the ray executor's address")
    save_images: bool = True
    policy_feedback: bool = Field(
        False,
        description="pass rewards, checks and progress to the policy each step: for training only, "
        "since it reveals what the hidden tests check; an evaluation leaves it off",
    )

    def task_ref(self, full_id: str) -> str:
        """What ``agentenvs.make`` takes for this task: its directory, or its registered id."""
        return self.task_dirs.get(full_id, full_id)

    def seed_for(self, trial: int) -> int:
        """Distinct, reproducible seeds per trial (one seed for all with ``same_seed``)."""
        return self.seed if self.same_seed else self.seed + trial
