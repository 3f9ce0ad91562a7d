"""The contract every part shares: tasks, the env base class, spaces, actions, checks, registry."""

from agentenvs.core.actions import CONTROL_ACTIONS, ParsedAction, parse_action
from agentenvs.core.checks import CheckResult, Verdict
from agentenvs.core.env import AgentEnv, StepOutcome
from agentenvs.core.errors import (
    ActionError,
    AgentEnvsError,
    InfraError,
    MachineLacksError,
    SandboxError,
    TaskFormatError,
    TaskNotFoundError,
)
from agentenvs.core.registry import DirectoryTaskSource, Family, get_task, list_tasks, register_family
from agentenvs.core.spaces import Unicode
from agentenvs.core.task import Checkpoint, CheckSpec, Task, TaskConfig, load_task

__all__ = [
    "CONTROL_ACTIONS",
    "ActionError",
    "AgentEnv",
    "AgentEnvsError",
    "CheckResult",
    "CheckSpec",
    "Checkpoint",
    "DirectoryTaskSource",
    "Family",
    "InfraError",
    "MachineLacksError",
    "ParsedAction",
    "SandboxError",
    "StepOutcome",
    "Task",
    "TaskConfig",
    "TaskFormatError",
    "TaskNotFoundError",
    "Unicode",
    "Verdict",
    "get_task",
    "list_tasks",
    "load_task",
    "parse_action",
    "register_family",
]
