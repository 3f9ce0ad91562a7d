"""The gui family's actions as pyautogui code: OSWorld's ``computer_13`` JSON and the computer tool calls.

Everything becomes one pyautogui snippet that the daemon runs, so every
action space takes the same path (and the same typing fixes). Arguments are
validated here and inserted with ``repr``, never pasted as code.
"""

from __future__ import annotations

import json
from typing import Any

from agentenvs.core.errors import ActionError

MOUSE_BUTTONS = ("left", "right", "middle")
COMPUTER_13 = (
    "MOVE_TO CLICK MOUSE_DOWN MOUSE_UP RIGHT_CLICK DOUBLE_CLICK DRAG_TO SCROLL TYPING PRESS KEY_DOWN KEY_UP HOTKEY"
).split()


def _num(args: dict[str, Any], key: str, default: float | None = None) -> float:
    value = args.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ActionError(f"{key!r} must be a number, got {value!r}")
    return value


def _xy(args: dict[str, Any]) -> str:
    if "x" in args or "y" in args:
        return f"{_num(args, 'x')!r}, {_num(args, 'y')!r}"
    return ""


def _str(args: dict[str, Any], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str):
        raise ActionError(f"{key!r} must be a string, got {value!r}")
    return value


def _button(args: dict[str, Any]) -> str:
    button = args.get("button", "left")
    if button not in MOUSE_BUTTONS:
        raise ActionError(f"button must be one of {', '.join(MOUSE_BUTTONS)}, got {button!r}")
    return button


def computer_13(action: dict[str, Any]) -> str:
    """OSWorld's ``computer_13`` action dict as pyautogui code (WAIT/DONE/FAIL are handled by the env)."""
    kind = action.get("action_type")
    args = action.get("parameters", {k: v for k, v in action.items() if k != "action_type"})
    if not isinstance(args, dict):
        raise ActionError("parameters must be an object")
    xy = _xy(args)
    if kind == "MOVE_TO":
        return f"pyautogui.moveTo({xy or 'None, None'})"
    if kind == "CLICK":
        clicks = int(_num(args, "num_clicks", 1))
        where = f"{xy}, " if xy else ""
        return f"pyautogui.click({where}button={_button(args)!r}, clicks={clicks})"
    if kind in ("MOUSE_DOWN", "MOUSE_UP"):
        return f"pyautogui.{'mouseDown' if kind == 'MOUSE_DOWN' else 'mouseUp'}(button={_button(args)!r})"
    if kind == "RIGHT_CLICK":
        return f"pyautogui.rightClick({xy})"
    if kind == "DOUBLE_CLICK":
        return f"pyautogui.doubleClick({xy})"
    if kind == "DRAG_TO":
        return f"pyautogui.dragTo({xy}, button='left')"
    if kind == "SCROLL":
        dx, dy = int(_num(args, "dx", 0)), int(_num(args, "dy", 0))
        return f"pyautogui.vscroll({dy})\npyautogui.hscroll({dx})"
    if kind == "TYPING":
        return f"pyautogui.write({_str(args, 'text')!r})"
    if kind in ("PRESS", "KEY_DOWN", "KEY_UP"):
        fn = {"PRESS": "press", "KEY_DOWN": "keyDown", "KEY_UP": "keyUp"}[kind]
        return f"pyautogui.{fn}({_str(args, 'key')!r})"
    if kind == "HOTKEY":
        keys = args.get("keys")
        if not isinstance(keys, list) or not keys or not all(isinstance(k, str) for k in keys):
            raise ActionError("HOTKEY needs keys: a non-empty list of key names")
        return f"pyautogui.hotkey({', '.join(repr(k) for k in keys)})"
    raise ActionError(f"unknown action_type {kind!r}; one of {', '.join([*COMPUTER_13, 'WAIT', 'DONE', 'FAIL'])}")


def computer_tool(args: dict[str, Any]) -> str | None:
    """The ``computer`` tool (Anthropic's and OpenAI's computer-use actions); None for screenshot/wait."""
    kind = args.get("action")
    xy = _xy(args) if "coordinate" not in args else _coordinate(args["coordinate"])
    if kind in ("screenshot", "wait"):
        return None
    if kind == "key":
        keys = [k.strip().lower() for k in _str(args, "text").replace("+", " ").split()]
        return f"pyautogui.hotkey({', '.join(repr(_KEY_ALIASES.get(k, k)) for k in keys)})"
    if kind == "type":
        return f"pyautogui.write({_str(args, 'text')!r})"
    if kind == "mouse_move":
        return f"pyautogui.moveTo({xy})"
    if kind in ("left_click", "right_click", "middle_click", "double_click", "triple_click", "click"):
        button = {"right_click": "right", "middle_click": "middle"}.get(kind, args.get("button", "left"))
        clicks = {"double_click": 2, "triple_click": 3}.get(kind, 1)
        where = f"{xy}, " if xy else ""
        return f"pyautogui.click({where}button={button!r}, clicks={clicks})"
    if kind == "left_click_drag":
        return f"pyautogui.dragTo({xy}, button='left')"
    if kind == "scroll":
        amount = int(_num(args, "scroll_amount", 3))
        direction = args.get("scroll_direction", "down")
        move = f"pyautogui.moveTo({xy})\n" if xy else ""
        if direction in ("up", "down"):
            return f"{move}pyautogui.vscroll({amount if direction == 'up' else -amount})"
        return f"{move}pyautogui.hscroll({amount if direction == 'right' else -amount})"
    raise ActionError(f"unknown computer action {kind!r}")


_KEY_ALIASES = {"return": "enter", "control": "ctrl", "super": "win", "escape": "esc", "page_down": "pagedown"}


def _coordinate(value: Any) -> str:
    if not (isinstance(value, list) and len(value) == 2 and all(isinstance(v, (int, float)) for v in value)):
        raise ActionError(f"coordinate must be [x, y], got {value!r}")
    return f"{value[0]!r}, {value[1]!r}"


def parse_json_action(text: str) -> dict[str, Any] | None:
    """A ``computer_13`` action sent as a JSON string, else None."""
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    try:
        value = json.loads(stripped)
    except ValueError:
        return None
    return value if isinstance(value, dict) and "action_type" in value else None


PYAUTOGUI_TOOL = {
    "type": "function",
    "function": {
        "name": "pyautogui",
        "description": "Run Python code that uses pyautogui (already imported) to act on the screen.",
        "parameters": {
            "type": "object",
            "properties": {"code": {"type": "string"}},
            "required": ["code"],
            "additionalProperties": False,
        },
    },
}
COMPUTER_TOOL = {
    "type": "function",
    "function": {
        "name": "computer",
        "description": "Use the mouse and keyboard (the computer-use tool's actions), coordinates in screen pixels.",
        "parameters": {
            "type": "object",
            "properties": {
                "action": {
                    "type": "string",
                    "enum": [
                        "key", "type", "mouse_move", "left_click", "right_click", "middle_click", "double_click",
                        "triple_click", "left_click_drag", "scroll", "screenshot", "wait",
                    ],
                },
                "coordinate": {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2},
                "text": {"type": "string"},
                "scroll_direction": {"type": "string", "enum": ["up", "down", "left", "right"]},
                "scroll_amount": {"type": "integer"},
            },
            "required": ["action"],
            "additionalProperties": False,
        },
    },
}  # fmt: skip
COMPUTER_13_TOOL = {
    "type": "function",
    "function": {
        "name": "computer_13",
        "description": "One of OSWorld's computer_13 actions: action_type plus its parameters.",
        "parameters": {
            "type": "object",
            "properties": {
                "action_type": {"type": "string", "enum": [*COMPUTER_13, "WAIT"]},
                "parameters": {"type": "object"},
            },
            "required": ["action_type"],
        },
    },
}
