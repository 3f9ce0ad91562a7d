"""Policies, chosen with ``--policy``: openai, http, oracle, random, replay, human."""

from __future__ import annotations

from typing import Any

from agentenvs.harness.policies.base import (
    NO_ACTION,
    Decision,
    EpisodeStart,
    Feedback,
    Policy,
    PolicyConfigError,
    PolicyError,
    PolicyRequestError,
    PolicyUnavailable,
    StepInput,
)
from agentenvs.harness.policies.retry import RetryPolicy


def _openai(**options: Any) -> Policy:
    from agentenvs.harness.policies.openai_policy import OpenAIPolicy

    return OpenAIPolicy(**_with_retry(options))


def _http(**options: Any) -> Policy:
    from agentenvs.harness.policies.http_policy import HttpPolicy

    return HttpPolicy(**_with_retry(options))


def _oracle(**options: Any) -> Policy:
    from agentenvs.harness.policies.oracle import OraclePolicy

    return OraclePolicy(**options)


def _random(**options: Any) -> Policy:
    from agentenvs.harness.policies.random_policy import RandomPolicy

    return RandomPolicy(**options)


def _replay(**options: Any) -> Policy:
    from agentenvs.harness.policies.replay import ReplayPolicy

    return ReplayPolicy(**options)


def _human(**options: Any) -> Policy:
    from agentenvs.harness.policies.human import HumanPolicy

    return HumanPolicy(**options)


def _with_retry(options: dict[str, Any]) -> dict[str, Any]:
    retry = {k: options.pop(k) for k in ("max_retries", "retry_base_delay", "retry_max_delay") if k in options}
    if retry:
        options["retry"] = RetryPolicy(
            max_retries=int(retry.get("max_retries", 5)),
            base_delay=float(retry.get("retry_base_delay", 0.5)),
            max_delay=float(retry.get("retry_max_delay", 20.0)),
        )
    return options


POLICIES = {"openai": _openai, "http": _http, "oracle": _oracle, "random": _random, "replay": _replay, "human": _human}


def make_policy(name: str, **options: Any) -> Policy:
    """Build a policy by its ``--policy`` name; unknown names or options get a clear error."""
    if name not in POLICIES:
        raise PolicyConfigError(f"unknown policy {name!r}; choose one of: {', '.join(POLICIES)}")
    try:
        return POLICIES[name](**dict(options))
    except TypeError as exc:
        raise PolicyConfigError(f"--policy {name}: {exc}") from None


__all__ = [
    "NO_ACTION",
    "POLICIES",
    "Decision",
    "EpisodeStart",
    "Feedback",
    "Policy",
    "PolicyConfigError",
    "PolicyError",
    "PolicyRequestError",
    "PolicyUnavailable",
    "RetryPolicy",
    "StepInput",
    "make_policy",
]
