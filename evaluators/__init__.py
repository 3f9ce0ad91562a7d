"""Checkers that read the state they check.

Standard library only, and nothing from ``agentenvs``: the package runs
inside sandboxes with the system ``python3``
(``PYTHONPATH=/opt/agentenvs python3 -m evaluators``), and in a trusted
checker outside the agent's reach with the host's own isolated interpreter
(``python3 -I -S -B /opt/agentenvs/evaluators/_entry.py``), where
``AGENTENVS_STATE_ROOT`` names the directory holding the agent's filesystem
(see ``_state``). Each checker is a function registered by name that takes
keyword arguments and returns ``{"passed": bool, "score": float, "detail": str}``;
the ``live`` ones need the agent's processes and run only in the sandbox.
Each checker's module is imported on its first use (``_registry.HOMES``).
"""

from __future__ import annotations

from typing import Any

from evaluators._registry import ArgumentError, Result, check, get, is_live, names, result, run_check, signature
from evaluators._state import STATE_ROOT_ENV, SetupError

__all__ = [
    "STATE_ROOT_ENV",
    "ArgumentError",
    "Result",
    "SetupError",
    "check",
    "get",
    "is_live",
    "names",
    "result",
    "run_batch",
    "run_check",
    "signature",
]


def run_batch(specs: Any) -> list[Result]:
    """Run a list of ``{"check": name, "args": {...}}``; one result per spec, never raising for a bad spec.

    ``SetupError`` (the checker's setup is broken) does escape: no result of such a run means anything.
    """
    if not isinstance(specs, list):
        raise ArgumentError('a batch must be a JSON list of {"check": name, "args": {...}} objects')
    results = []
    for i, spec in enumerate(specs):
        try:
            if not isinstance(spec, dict) or "check" not in spec:
                raise ArgumentError(f'spec {i} must be an object with a "check" key, got {spec!r}')
            results.append(run_check(spec["check"], spec.get("args", {})))
        except ArgumentError as exc:
            results.append(result(False, f"bad check spec: {exc}"))
    return results
