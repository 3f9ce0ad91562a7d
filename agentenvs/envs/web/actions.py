"""BrowserGym's high-level action strings and the same actions as OpenAI tools.

``click("12")`` or ``fill("5", "hello")`` (several calls, one per line, run in
order) are parsed with ``ast`` and every argument must be a literal: nothing
the agent sends is ever evaluated. A call is bound to its signature here, so
a wrong name, a missing or extra argument, or a wrong type is an
``ActionError`` before the browser sees anything.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from agentenvs.core.actions import ParsedAction
from agentenvs.core.errors import ActionError
from agentenvs.core.pyparse import parse_module

MAX_CALLS = 10
#: Characters ``keyboard_type`` may type in one step. Playwright types about one a millisecond, so a
#: megabyte of it held the env for some 20 minutes, past the harness's deadline for a step (an
#: unscored infra error the agent caused); ``fill`` sets long text at once.
MAX_TYPED_CHARS = 4000

#: name -> [(parameter, type, default)]; ``...`` marks a required parameter.
SIGNATURES: dict[str, list[tuple[str, Any, Any]]] = {
    "click": [("bid", str, ...), ("button", str, "left"), ("modifiers", list, [])],
    "dblclick": [("bid", str, ...), ("button", str, "left"), ("modifiers", list, [])],
    "hover": [("bid", str, ...)],
    "fill": [("bid", str, ...), ("value", str, ...)],
    "select_option": [("bid", str, ...), ("options", (str, list), ...)],
    "check": [("bid", str, ...)],
    "uncheck": [("bid", str, ...)],
    "press": [("bid", str, ...), ("key_comb", str, ...)],
    "focus": [("bid", str, ...)],
    "clear": [("bid", str, ...)],
    "scroll": [("delta_x", (int, float), ...), ("delta_y", (int, float), ...)],
    "goto": [("url", str, ...)],
    "go_back": [],
    "go_forward": [],
    "new_tab": [],
    "tab_close": [],
    "tab_focus": [("index", int, ...)],
    "upload_file": [("bid", str, ...), ("file", (str, list), ...)],
    "send_msg_to_user": [("text", str, ...)],
    "report_infeasible": [("reason", str, ...)],
    "mouse_click": [("x", (int, float), ...), ("y", (int, float), ...), ("button", str, "left")],
    "keyboard_type": [("text", str, ...)],
    "noop": [],
}
DESCRIPTIONS: dict[str, str] = {
    "click": "Click an element by its bid.",
    "dblclick": "Double-click an element by its bid.",
    "hover": "Move the mouse over an element.",
    "fill": "Replace the text of an input or textarea with value.",
    "select_option": "Select one option (or a list of options) of a select element by label or value.",
    "check": "Check a checkbox or radio button.",
    "uncheck": "Uncheck a checkbox.",
    "press": "Focus an element and press a key combination, e.g. 'Enter' or 'Control+a'.",
    "focus": "Focus an element.",
    "clear": "Clear an input's text.",
    "scroll": "Scroll the page by pixels (positive delta_y scrolls down).",
    "goto": "Open a URL in the current tab (only the task's sites are reachable).",
    "go_back": "Go back in the tab's history.",
    "go_forward": "Go forward in the tab's history.",
    "new_tab": "Open a new, empty tab and switch to it.",
    "tab_close": "Close the current tab.",
    "tab_focus": "Switch to the tab with this index (see the open tabs list).",
    "upload_file": "Set the file(s) of a file input; names are files the task provides.",
    "send_msg_to_user": "Send a message (your answer) to the user. The last message is the answer graded.",
    "report_infeasible": "Report that the task cannot be done, with the reason. Ends the episode.",
    "mouse_click": "Click at page coordinates (x, y) in CSS pixels.",
    "keyboard_type": "Type text with the keyboard into whatever has focus.",
    "noop": "Do nothing this step (let the page settle).",
}
_JSON_TYPES = {str: "string", int: "integer", float: "number", list: "array"}


@dataclass(frozen=True)
class Call:
    """One bound browser action."""

    name: str
    args: dict[str, Any]

    def __str__(self) -> str:
        return f"{self.name}({', '.join(repr(v) for v in self.args.values())})"


def _typed(name: str, param: str, kind: Any, value: Any) -> Any:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) or not isinstance(value, kinds):
        wanted = " or ".join(k.__name__ for k in kinds)
        raise ActionError(f"{name}(): {param} must be {wanted}, got {type(value).__name__}")
    if isinstance(value, list) and not all(isinstance(v, str) for v in value):
        raise ActionError(f"{name}(): {param} must be a list of strings")
    return value


def bind(name: str, args: list[Any], kwargs: dict[str, Any]) -> Call:
    """Bind positional and keyword arguments to the action's signature."""
    if name not in SIGNATURES:
        raise ActionError(f"unknown action {name!r}; actions: {', '.join(SIGNATURES)}")
    params = SIGNATURES[name]
    if len(args) > len(params):
        raise ActionError(f"{name}() takes {len(params)} arguments, got {len(args)}")
    bound: dict[str, Any] = {}
    for (param, kind, _), value in zip(params, args, strict=False):
        bound[param] = _typed(name, param, kind, value)
    for key, value in kwargs.items():
        match = [p for p in params if p[0] == key]
        if not match:
            raise ActionError(f"{name}() has no argument {key!r}")
        if key in bound:
            raise ActionError(f"{name}() got {key!r} twice")
        bound[key] = _typed(name, key, match[0][1], value)
    for param, _, default in params:
        if param not in bound:
            if default is ...:
                raise ActionError(f"{name}() is missing its argument {param!r}")
            bound[param] = default
    return Call(name, {p: bound[p] for p, _, _ in params})


def parse_calls(text: str) -> list[Call]:
    """Parse one or more BrowserGym action calls (literals only) from a string."""
    source = text.strip()
    if source.startswith("```"):
        source = source.strip("`").removeprefix("python").strip()
    try:
        tree = parse_module(source)
    except (SyntaxError, ValueError) as exc:
        raise ActionError(f"not an action call such as click('12'): {getattr(exc, 'msg', exc)}") from None
    except (MemoryError, RecursionError):
        # Python's parser gives up on deep nesting (``noop(------...1)``, ``not not ... 1``) this way.
        raise ActionError("not an action call such as click('12'): nested too deeply") from None
    if not tree.body:
        raise ActionError("no action; send e.g. click('12')")
    if len(tree.body) > MAX_CALLS:
        raise ActionError(f"at most {MAX_CALLS} actions per step")
    calls = []
    for stmt in tree.body:
        if not (
            isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Name)
        ):
            raise ActionError("each line must be one action call such as click('12'); nothing else is run")
        node = stmt.value
        try:
            args = [ast.literal_eval(a) for a in node.args]
            kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg is not None}
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            raise ActionError(f"{node.func.id}(): arguments must be literals (strings, numbers, lists)") from None
        if any(k.arg is None for k in node.keywords):
            raise ActionError(f"{node.func.id}(): ** arguments are not allowed")
        calls.append(bind(node.func.id, args, kwargs))
    return _typing_bounded(calls)


def _typing_bounded(calls: list[Call]) -> list[Call]:
    typed = sum(len(c.args["text"]) for c in calls if c.name == "keyboard_type")
    if typed > MAX_TYPED_CHARS:
        raise ActionError(
            f"keyboard_type(): at most {MAX_TYPED_CHARS} characters a step, got {typed}; use fill() for long text"
        )
    return calls


def calls_of(action: ParsedAction) -> list[Call]:
    """The calls an agent's action makes: a tool call bound to its signature, or text parsed as action strings."""
    if action.kind == "tool":
        if action.name not in SIGNATURES:
            raise ActionError(f"unknown tool {action.name!r}")
        return _typing_bounded([bind(action.name, [], dict(action.arguments))])
    return parse_calls(action.text)


def _schema(kind: Any) -> dict[str, Any]:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    types = [_JSON_TYPES[k] for k in kinds]
    schema: dict[str, Any] = {"type": types[0] if len(types) == 1 else types}
    if "array" in types:
        schema["items"] = {"type": "string"}
    return schema


def tool_schemas() -> list[dict[str, Any]]:
    """Every action as an OpenAI function tool, with the same names and arguments."""
    tools = []
    for name, params in SIGNATURES.items():
        tools.append(
            {
                "type": "function",
                "function": {
                    "name": name,
                    "description": DESCRIPTIONS[name],
                    "parameters": {
                        "type": "object",
                        "properties": {p: _schema(kind) for p, kind, _ in params},
                        "required": [p for p, _, default in params if default is ...],
                        "additionalProperties": False,
                    },
                },
            }
        )
    return tools


PROMPT = """You are using a web browser to complete a task. Each observation shows the page's \
accessibility tree: every element you can act on has an id in brackets, e.g. [12] button 'Save'. \
Act with one call per step (several on separate lines run in order), e.g. click('12'), \
fill('5', 'text'), select_option('7', 'Blue'), press('5', 'Enter'), scroll(0, 500), goto('http://...'), \
go_back(), tab_focus(0), mouse_click(100, 200), keyboard_type('hi'). Only the task's sites are \
reachable. If the task asks a question, answer with send_msg_to_user('answer') and then call done; \
if the task cannot be done, call report_infeasible('why'). You are graded on the sites' final state \
and your answer."""
