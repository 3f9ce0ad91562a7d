"""The file to pass OpenRLHF as ``--train.agent_func_path`` (``agentenvs.integrations.openrlhf.agent_func_path()``).

OpenRLHF loads it by path and instantiates its ``AgentExecutor``; everything is in ``openrlhf.py``.
"""

from agentenvs.integrations.openrlhf import AgentExecutor, AgentInstance

__all__ = ["AgentExecutor", "AgentInstance"]
