"""How a recorded episode reads: the one rendering behind ``agentenvs show`` and ``report.html``.

Both views take their text from here (actions, outcome, instruction, the
verifier's output, the submitted patch, tokens per step), so the console and
the report cannot drift apart; each only adds its own markup around it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from agentenvs.core.actions import json_too_deep
from agentenvs.harness.rundir import RunDir

Outcome = Literal["success", "fail", "agent-fault", "infra"]
#: Every outcome, in the order the report's filter lists them.
OUTCOMES: tuple[Outcome, ...] = ("success", "fail", "agent-fault", "infra")
#: The ``error`` of an episode that ran out of steps: a plain failure, not a fault.
STEP_BUDGET_SPENT = "step budget spent"
NO_ACTION_TEXT = "(no action)"
#: The one argument shown as the action itself: a shell or game command is read as typed.
COMMAND_ARGUMENT = "command"


def outcome(record: dict[str, Any]) -> Outcome:
    """``infra`` (never scored), ``success``, ``agent-fault`` (the policy refused or raised, or the
    agent's action broke the env) or ``fail`` (graded and not solved, budgets spent included)."""
    if record.get("status") == "infra":
        return "infra"
    if record.get("success"):
        return "success"
    if record.get("error_kind") == "agent" and record.get("error") and record.get("error") != STEP_BUDGET_SPENT:
        return "agent-fault"
    return "fail"


def _value(value: Any) -> str:
    """One argument value: strings quoted as Python would (multi-line ones whole), the rest as JSON."""
    if isinstance(value, str):
        if "\n" in value:
            quote = '"""' if "'''" in value else "'''"
            return f"{quote}{value}{quote}"
        return repr(value)
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def _arguments(raw: Any) -> dict[str, Any] | str:
    """Tool-call arguments as a dict where they are one (OpenAI sends a JSON string), else the raw text."""
    if isinstance(raw, dict):
        return raw
    if raw is None:
        return {}
    if isinstance(raw, str):
        if not raw.strip():
            return {}
        if not json_too_deep(raw):
            try:
                decoded = json.loads(raw)
            except json.JSONDecodeError:
                return raw
            if isinstance(decoded, dict):
                return decoded
        return raw
    return _value(raw)


def action_text(action: Any) -> str:
    """An action as a person reads it.

    A string (a BrowserGym action, a game command, ``done``) as it is; a tool call
    whose only argument is a command as the command text; any other tool call as
    ``name(arg=value, ...)``; nothing as ``(no action)``.
    """
    if action is None or action == "":
        return NO_ACTION_TEXT
    if isinstance(action, str):
        return action
    if isinstance(action, dict) and isinstance(action.get("function"), dict):
        action = action["function"]
    if isinstance(action, dict) and isinstance(action.get("name"), str):
        arguments = _arguments(action.get("arguments"))
        if isinstance(arguments, str):
            return f"{action['name']}({arguments})"
        if len(arguments) == 1 and isinstance(arguments.get(COMMAND_ARGUMENT), str):
            return arguments[COMMAND_ARGUMENT]
        return f"{action['name']}({', '.join(f'{k}={_value(v)}' for k, v in arguments.items())})"
    return _value(action)


def action_kind(action: Any) -> str:
    """What the action is, for a label: the tool's name, or ``text`` for a string."""
    if isinstance(action, dict):
        inner = action.get("function") if isinstance(action.get("function"), dict) else action
        return str(inner.get("name", "tool"))
    return "text"


def step_tokens(usage: Any) -> dict[str, int] | None:
    """A step's ``{"prompt", "completion", "total"}`` from the policy's recorded usage, or None."""
    if not isinstance(usage, dict):
        return None
    counts = {}
    for key in ("prompt", "completion", "total"):
        value = usage.get(f"{key}_tokens")
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            counts[key] = value
    if not counts:
        return None
    if "total" not in counts:
        counts["total"] = counts.get("prompt", 0) + counts.get("completion", 0)
    return counts


def tokens_text(tokens: dict[str, int]) -> str:
    parts = [f"{tokens[k]} {k}" for k in ("prompt", "completion") if k in tokens]
    return f"{tokens['total']} tokens" + (f" ({', '.join(parts)})" if parts else "")


def cut(text: Any, limit: int) -> str:
    """``text`` up to ``limit`` characters, saying how much was left out."""
    text = "" if text is None else str(text)
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[... {len(text) - limit} more characters]"


DiffKind = Literal["meta", "hunk", "add", "del", "ctx"]


def diff_lines(patch: str) -> list[tuple[DiffKind, str]]:
    """A unified diff's lines, each with its kind, for colouring."""
    lines: list[tuple[DiffKind, str]] = []
    in_header = True
    for line in patch.splitlines():
        if line.startswith(("diff --git ", "index ", "new file mode", "deleted file mode", "similarity ", "rename ")):
            in_header = True
            lines.append(("meta", line))
        elif in_header and line.startswith(("--- ", "+++ ")):
            lines.append(("meta", line))
        elif line.startswith("@@"):
            in_header = False
            lines.append(("hunk", line))
        elif line.startswith("+"):
            lines.append(("add", line))
        elif line.startswith("-"):
            lines.append(("del", line))
        else:
            lines.append(("ctx", line))
    return lines


@dataclass(frozen=True)
class StepView:
    """One recorded step, as both views show it."""

    step: int
    action: str | None  # None at reset
    kind: str | None
    instruction: str | None  # where it was recorded: at reset, and where a multi-step task moved on
    note: str | None
    message: str | None
    tokens: dict[str, int] | None
    reward: float | None
    progress: float | None
    checks: dict[str, bool]
    action_error: str | None
    task_step: str | None
    text: str
    extras: dict[str, Any]
    images: dict[str, str]


@dataclass(frozen=True)
class EpisodeView:
    """One episode: its record, what the agent was told, what the verifier said, what it submitted."""

    record: dict[str, Any]
    family: str
    outcome: Outcome
    instruction: str | None
    verifier_detail: str | None
    patch: str | None
    steps: list[StepView] = field(default_factory=list)


def step_view(s: dict[str, Any]) -> StepView:
    obs = dict(s.get("observation") or {})
    info = s.get("info") or {}
    policy = s.get("policy") or {}
    number = int(s.get("step") or 0)
    instruction = s.get("instruction")
    return StepView(
        step=number,
        action=action_text(s.get("action")) if number else None,
        kind=action_kind(s.get("action")) if number else None,
        instruction=instruction if isinstance(instruction, str) else None,
        note=policy.get("note"),
        message=policy.get("message"),
        tokens=step_tokens(policy.get("usage")),
        reward=s.get("reward"),
        progress=info.get("progress"),
        checks=info.get("checks") or {},
        action_error=info.get("action_error"),
        task_step=info.get("task_step"),
        text=str(obs.pop("text", "") or ""),
        extras=obs,
        images=dict(s.get("images") or {}),
    )


def episode_view(record: dict[str, Any], steps: list[dict[str, Any]], family: str) -> EpisodeView:
    views = [step_view(s) for s in steps]
    last_info = (steps[-1].get("info") or {}) if steps else {}
    patch = last_info.get("model_patch")
    return EpisodeView(
        record=record,
        family=family,
        outcome=outcome(record),
        instruction=next((v.instruction for v in views if v.instruction is not None), None),
        verifier_detail=record.get("verifier_detail"),
        patch=patch if isinstance(patch, str) and patch.strip() else None,
        steps=views,
    )


def families(run_meta: dict[str, Any]) -> dict[str, str]:
    """Task id -> family, from ``run.json``."""
    return {t["id"]: t.get("family") or t["id"].split("/", 1)[0] for t in run_meta.get("tasks") or [] if "id" in t}


def family_of(task_id: str, known: dict[str, str]) -> str:
    return known.get(task_id) or task_id.split("/", 1)[0]


def load_episode(run: RunDir, record: dict[str, Any], known: dict[str, str], *, with_steps: bool = True) -> EpisodeView:
    """An episode of ``run`` read back for display (its steps only when ``with_steps``)."""
    steps = run.steps_of(record) if with_steps else []
    return episode_view(record, steps, family_of(record["task_id"], known))
