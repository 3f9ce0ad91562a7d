"""Exceptions shared by every layer. Each says what went wrong and what to do."""

from __future__ import annotations


class AgentEnvsError(Exception):
    """Base class for every error agentenvs raises on purpose."""


class TaskFormatError(AgentEnvsError):
    """A task directory or ``task.toml`` is malformed. Names the file and the field."""

    def __init__(self, path: str, message: str, field: str | None = None):
        self.path = str(path)
        self.field = field
        where = f"{self.path}" + (f" [{field}]" if field else "")
        super().__init__(f"{where}: {message}")


class TaskNotFoundError(AgentEnvsError, KeyError):
    """No registered family or task matches the id."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "task not found"


class NoTaskChosenError(AgentEnvsError, ValueError):
    """An env was reset with no task given: it never picks one for the caller."""


class ActionError(AgentEnvsError, ValueError):
    """An action could not be parsed. Never escapes ``step``: it becomes ``info['action_error']``."""


class InfraError(AgentEnvsError):
    """The environment's machinery failed (a sandbox died, a browser crashed) through no fault of the agent.

    The harness retries these and never scores them as the agent's failure.
    When the agent caused the failure, raise ``AgentFault`` instead.
    """


class AgentFault(AgentEnvsError):
    """The agent's own action broke the environment: the agent's failure, scored 0, never infra.

    ``AgentEnv.step`` treats every exception that is not an ``InfraError`` as the
    agent's doing (a directory where the verifier reads a file, bytes that do not
    decode, a recursion the agent's state provoked). This class is for the one case
    that cannot be told apart by type: a failure that looks like dead machinery but
    that the agent caused. A family (or the sandbox beneath it) raises it from
    ``_act``, ``_check`` or ``_verify`` when it knows whose fault it was, e.g.
    ``raise AgentFault("the agent killed every process of its sandbox") from exc``
    when the sandbox is alive but the agent's shell was killed from inside, or when
    the sandbox's memory or pids limit (the agent's budget) was what killed it. Without
    it the harness would retry the episode as infra and leave it out of the score.
    """


class SandboxError(InfraError):
    """A sandbox could not be created, reached, or is gone."""


class MachineLacksError(SandboxError):
    """The task needs what this machine lacks (a host it cannot reach, a package its mirror does not
    have): an environment error, named as such, never the agent's failure, and not worth a retry."""


class NotDeterministicError(AgentEnvsError):
    """A restore or fork that replays the recorded actions did not reach the recorded state.

    The family (or the task: a clock, randomness, the network) is not deterministic under
    replay. The message names the span of steps where the state hashes first differ. The env
    is left ended: reset it, or restore another snapshot.
    """


class UnknownSnapshotError(AgentEnvsError, KeyError):
    """``restore`` got a reference this env's ``snapshot`` never returned, or one it has since dropped."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown snapshot"
