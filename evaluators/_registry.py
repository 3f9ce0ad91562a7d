"""The checker registry, the result shape, and argument validation.

Checkers are plain functions registered by name. They take keyword
arguments and return ``{"passed": bool, "score": float, "detail": str}``.
Bad *state* (a missing file, a wrong value) is a failed result; bad
*arguments* (a typo in a task file) raise ``ArgumentError`` so the task
author hears about it instead of every agent silently scoring 0.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from typing import Any, Callable

Result = dict[str, Any]
Checker = Callable[..., Result]

_CHECKS: dict[str, Checker] = {}
_LIVE: set[str] = set()
#: The module that registers each checker, imported on the checker's first use: a checker process
#: in a sandbox then loads what its batch needs (~15 ms) instead of every module (~60 ms).
#: ``tests/evaluators/test_registry.py`` keeps this in step with the ``@check`` decorators.
HOMES: dict[str, str] = {
    "json_path_equals": "data",
    "csv_query": "data",
    "sqlite_query": "data",
    "file_exists": "files",
    "file_absent": "files",
    "dir_exists": "files",
    "file_sha256": "files",
    "file_mode": "files",
    "file_owner": "files",
    "tree_hash": "files",
    "docx_contains": "osworld",
    "pptx_contains": "osworld",
    "osworld": "osworld",
    "command_exit": "procs",
    "process_running": "procs",
    "port_listening": "procs",
    "junit_report": "reports",
    "pytest_report": "reports",
    "file_contains": "text",
    "file_matches": "text",
    "text_equals": "text",
    "text_match": "text",
}


class ArgumentError(ValueError):
    """A checker was called with arguments it cannot use."""


def check(name: str, live: bool = False) -> Callable[[Checker], Checker]:
    """Register a checker under ``name``.

    ``live`` marks a checker that needs the agent's running processes or its
    network namespace (not only its files): it can run only inside the
    sandbox, and refuses to run against a state root (``AGENTENVS_STATE_ROOT``),
    where there are files and nothing else.
    """

    def decorate(fn: Checker) -> Checker:
        if name in _CHECKS:
            raise ValueError(f"checker {name!r} is registered twice")
        if live:
            fn = _refuse_on_state_root(name, fn)
            _LIVE.add(name)
        _CHECKS[name] = fn
        return fn

    return decorate


def _refuse_on_state_root(name: str, fn: Checker) -> Checker:
    @functools.wraps(fn)
    def guarded(*args: Any, **kwargs: Any) -> Result:
        from evaluators._state import state_root

        if state_root() is not None:
            return result(
                False,
                f"{name} is a live check (it needs the agent's running processes) and cannot run on a state root",
            )
        return fn(*args, **kwargs)

    return guarded


def is_live(name: str) -> bool:
    """Whether the checker ``name`` needs the agent's processes (see ``check``)."""
    get(name)
    return name in _LIVE


def result(passed: bool, detail: str = "", score: float | None = None) -> Result:
    """Build a result; the score defaults to 1.0 or 0.0 from ``passed``."""
    if score is None:
        score = 1.0 if passed else 0.0
    return {"passed": bool(passed), "score": min(1.0, max(0.0, float(score))), "detail": detail}


def names() -> list[str]:
    return sorted(HOMES.keys() | _CHECKS.keys())


def get(name: str) -> Checker:
    if isinstance(name, str) and name not in _CHECKS and name in HOMES:
        importlib.import_module(f"evaluators.{HOMES[name]}")
    if not isinstance(name, str) or name not in _CHECKS:
        raise ArgumentError(f"unknown check {name!r}; known checks: {', '.join(names())}")
    return _CHECKS[name]


def signature(name: str) -> str:
    """``name(arg, opt=default, ...)``, for listings and error messages."""
    params = []
    for param in inspect.signature(get(name)).parameters.values():
        params.append(param.name if param.default is inspect.Parameter.empty else f"{param.name}={param.default!r}")
    return f"{name}({', '.join(params)})"


def run_check(name: str, args: dict[str, Any] | None = None) -> Result:
    """Run one checker by name.

    Raises ``ArgumentError`` for an unknown check or arguments it does not
    accept, and ``SetupError`` when the checker's own setup is broken (an
    unusable state root, no /proc), which must not score as the agent's failure.
    Any other exception escaping a checker is reported as a failed result
    naming the exception, so a batch never crashes on odd state. Messages
    name in-sandbox paths only.
    """
    from evaluators._budget import begin_check
    from evaluators._state import SetupError, scrub

    fn = get(name)
    args = {} if args is None else args
    if not isinstance(args, dict):
        raise ArgumentError(f"{name}: args must be an object of keyword arguments, got {type(args).__name__}")
    try:
        inspect.signature(fn).bind(**args)
    except TypeError as exc:
        raise ArgumentError(f"{name}: {exc}; expected {signature(name)}") from None
    begin_check()
    try:
        res = fn(**args)
    except (ArgumentError, SetupError):
        raise
    except Exception as exc:  # noqa: BLE001 - odd state must not crash the grader
        res = result(False, f"{name}: {type(exc).__name__}: {exc}")
    return {**res, "detail": scrub(str(res.get("detail", "")))}


def require(value: Any, kind: type | tuple[type, ...], what: str) -> Any:
    """Check one argument's type, with an error that says what was expected."""
    if isinstance(value, bool) and kind in (int, float, (int, float)):
        raise ArgumentError(f"{what} must be a number, got a boolean")
    if not isinstance(value, kind):
        expected = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise ArgumentError(f"{what} must be {expected}, got {type(value).__name__} {value!r}")
    return value
