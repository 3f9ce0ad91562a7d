"""Actions: a family's native string, or an OpenAI-style tool call.

``done``, ``fail`` and ``submit`` end the episode in every family. Parsing is
total: anything unparseable raises ``ActionError``, which ``AgentEnv.step``
turns into ``info["action_error"]`` and a wasted step, never an exception.
That includes actions built to break the parser: nesting and size are
bounded (``action_problem``) before anything recursive (``json.loads``,
``json.dumps``, ``copy.deepcopy``) touches them, so a 100,000-deep tool call
is an ``ActionError``, never a ``RecursionError`` or ``MemoryError``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from agentenvs.core.errors import ActionError

ActionKind = Literal["native", "tool", "done", "fail", "submit"]
CONTROL_ACTIONS: tuple[str, ...] = ("done", "fail", "submit")
#: The largest action: characters of a string, or of all strings (keys included) in a tool call.
MAX_ACTION_CHARS = 1 << 20
#: The deepest nesting of a tool call (or of a JSON action); real tool calls need a handful of levels.
MAX_ACTION_DEPTH = 64

#: The tokens that matter for nesting: escapes (skipped whole), quotes and brackets.
_JSON_TOKENS = re.compile(r'\\.|["\[\]{}]', re.DOTALL)


def json_too_deep(text: str, limit: int = MAX_ACTION_DEPTH) -> bool:
    """Whether the brackets of JSON text nest deeper than ``limit`` (brackets inside strings skipped).

    Linear and without parsing, so it is safe on any input. Exact for valid JSON, and
    for the valid prefix of invalid JSON (the only part a parser descends into).
    """
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    in_string = False
    for token in _JSON_TOKENS.findall(text):
        if token == '"':
            in_string = not in_string
        elif in_string or len(token) == 2:
            continue
        elif token in "[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


def _looks_like_json(text: str) -> bool:
    stripped = text.strip()
    return stripped.startswith(("{", "[")) and stripped.endswith(("}", "]"))


_TOO_LARGE = f"the action is larger than the limit of {MAX_ACTION_CHARS} characters"
_TOO_DEEP = f"the action nests deeper than {MAX_ACTION_DEPTH} levels"


def action_problem(action: Any) -> str | None:
    """Why ``action`` is too large or too deeply nested to take, or ``None``.

    Walks containers with an explicit stack (no recursion), stops as soon as a
    bound is crossed (so a cyclic dict is caught by its depth), and counts
    every string's characters, keys included, toward ``MAX_ACTION_CHARS``.
    JSON text (a string that looks like an object or array) is measured for
    nesting before anyone parses it.
    """
    too_large, too_deep = _TOO_LARGE, _TOO_DEEP
    size = 0
    stack: list[tuple[Any, int]] = [(action, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_ACTION_DEPTH:
            return too_deep
        size += len(value) if isinstance(value, (str, bytes, bytearray, dict, list, tuple)) else 1
        if size > MAX_ACTION_CHARS:
            return too_large
        if isinstance(value, str) and _looks_like_json(value) and json_too_deep(value, MAX_ACTION_DEPTH - depth + 1):
            return too_deep
        if isinstance(value, dict):
            for key, item in value.items():
                size += len(key) if isinstance(key, str) else 1
                stack.append((item, depth + 1))
            if size > MAX_ACTION_CHARS:
                return too_large
        elif isinstance(value, (list, tuple)):
            stack.extend((item, depth + 1) for item in value)
    return None


@dataclass(frozen=True)
class ParsedAction:
    """What the agent asked for, normalised.

    ``native`` carries the family's string in ``text``; ``tool`` carries a
    tool ``name`` and its ``arguments``; control actions may carry an
    ``answer`` (a submitted string, or the reason for ``fail``).
    """

    kind: ActionKind
    text: str = ""
    name: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        if self.kind == "native":
            return self.text
        if self.kind == "tool":
            return f"{self.name}({json.dumps(self.arguments, ensure_ascii=False)})"
        return self.kind if not self.text else f"{self.kind}: {self.text}"


CONTROL_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "done",
            "description": "Declare the task finished. The final state is then graded.",
            "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "fail",
            "description": "Declare the task impossible to complete (infeasible), with a reason.",
            "parameters": {
                "type": "object",
                "properties": {"reason": {"type": "string"}},
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "submit",
            "description": "Submit an answer (if the task asks for one) and end the episode.",
            "parameters": {
                "type": "object",
                "properties": {"answer": {"type": "string"}},
                "additionalProperties": False,
            },
        },
    },
]


def _control_from_tool(name: str, arguments: dict[str, Any]) -> ParsedAction:
    text = arguments.get("answer", arguments.get("reason", ""))
    if not isinstance(text, str):
        text = json.dumps(text, ensure_ascii=False)
    return ParsedAction(kind=name, text=text)  # type: ignore[arg-type]


def _tool_call_parts(action: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Accept ``{"name", "arguments"}`` and OpenAI's ``{"type": "function", "function": {...}}``."""
    if "function" in action and isinstance(action["function"], dict):
        action = action["function"]
    name = action.get("name")
    if not isinstance(name, str) or not name:
        raise ActionError('a tool call needs a non-empty string "name", e.g. {"name": "bash", "arguments": {...}}')
    unknown = set(action) - {"name", "arguments", "id", "type"}
    if unknown:
        raise ActionError(f"unexpected keys in tool call: {', '.join(sorted(unknown))}")
    arguments = action.get("arguments", {})
    if isinstance(arguments, str):
        if json_too_deep(arguments):
            raise ActionError(f"tool call {name!r}: arguments nest deeper than {MAX_ACTION_DEPTH} levels")
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            raise ActionError(f"tool call {name!r}: arguments are not valid JSON ({exc.msg})") from None
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ActionError(f"tool call {name!r}: arguments must be a JSON object, got {type(arguments).__name__}")
    return name, arguments


def parse_action(action: Any, tool_names: set[str] | frozenset[str]) -> ParsedAction:
    """Normalise any action the env accepts, or raise ``ActionError`` saying why not."""
    if isinstance(action, (bytes, bytearray)):
        try:
            action = bytes(action).decode("utf-8")
        except UnicodeDecodeError:
            raise ActionError("action bytes are not valid UTF-8; send text or a tool call") from None
    if isinstance(action, str):
        if len(action) > MAX_ACTION_CHARS:
            raise ActionError(f"action is {len(action)} characters; the limit is {MAX_ACTION_CHARS}")
        if "\x00" in action:
            raise ActionError("action contains a NUL byte")
        stripped = action.strip()
        if stripped.lower() in CONTROL_ACTIONS:
            return ParsedAction(kind=stripped.lower())  # type: ignore[arg-type]
        if stripped.startswith("{") and stripped.endswith("}"):
            if json_too_deep(stripped):
                raise ActionError(f"the JSON action nests deeper than {MAX_ACTION_DEPTH} levels")
            try:
                decoded = json.loads(stripped)
            except json.JSONDecodeError:
                decoded = None
            if isinstance(decoded, dict) and ("name" in decoded or "function" in decoded):
                return parse_action(decoded, tool_names)
        if not stripped:
            raise ActionError("empty action; send a command, a tool call, or done/fail/submit")
        return ParsedAction(kind="native", text=action)
    if isinstance(action, dict):
        problem = action_problem(action)
        if problem is not None:
            raise ActionError(problem)
        name, arguments = _tool_call_parts(action)
        if name in CONTROL_ACTIONS:
            return _control_from_tool(name, arguments)
        if name not in tool_names:
            known = ", ".join(sorted(set(tool_names) | set(CONTROL_ACTIONS)))
            raise ActionError(f"unknown tool {name!r}; available tools: {known}")
        return ParsedAction(kind="tool", name=name, arguments=arguments)
    raise ActionError(
        f"actions are strings or tool-call dicts, got {type(action).__name__}; "
        'e.g. "ls -la" or {"name": "bash", "arguments": {"command": "ls -la"}}'
    )


def tool_names(tools: list[dict[str, Any]]) -> frozenset[str]:
    return frozenset(t["function"]["name"] for t in tools)


def require_string_argument(action: ParsedAction, key: str) -> str:
    """A tool argument that must be a string; a clear ``ActionError`` otherwise."""
    value = action.arguments.get(key)
    if not isinstance(value, str):
        raise ActionError(f"tool {action.name!r} needs a string argument {key!r}")
    return value
