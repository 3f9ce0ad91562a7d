"""BrowserGym action strings are parsed, never evaluated; tools mirror them one to one."""

from __future__ import annotations

import pytest

from agentenvs.core.errors import ActionError
from agentenvs.envs.web.actions import SIGNATURES, parse_calls, tool_schemas


def test_calls_bind_to_signatures() -> None:
    calls = parse_calls("fill('12', 'hello world')\nclick(\"7\", button='right')\nselect_option('3', ['A', 'B'])")
    assert [(c.name, c.args) for c in calls] == [
        ("fill", {"bid": "12", "value": "hello world"}),
        ("click", {"bid": "7", "button": "right", "modifiers": []}),
        ("select_option", {"bid": "3", "options": ["A", "B"]}),
    ]
    assert parse_calls("```python\nscroll(0, 200.5)\n```")[0].args == {"delta_x": 0, "delta_y": 200.5}


@pytest.mark.parametrize(
    "junk",
    [
        "__import__('os').system('touch /tmp/pwned')",
        "click(open('/etc/passwd').read())",
        "page.goto('http://example.com')",
        "x = 1",
        "click('1'); import os",
        "click(bid='1', **{'button': 'left'})",
        "click()",
        "click('1', 'left', [], 'extra')",
        "fill('1')",
        "fill(1, 'a')",
        "tab_focus('first')",
        "scroll(True, 3)",
        "select_option('1', [1, 2])",
        "click('1', bid='1')",
        "nope('1')",
        "click('1'",
        "\n".join(["noop()"] * 11),
        "noop(" + "-" * 50_000 + "1)",  # the parser's MemoryError: was the env failing, not an action error
        "noop(" + "not " * 5_000 + "1)",  # its RecursionError
        "keyboard_type('" + "a" * 4001 + "')",  # typing is ~1 ms a character: 1 MB outlived the step's deadline
        "\n".join(["keyboard_type('" + "a" * 1000 + "')"] * 5),
        "",
    ],
)
def test_junk_is_an_action_error(junk: str) -> None:
    with pytest.raises(ActionError):
        parse_calls(junk)


def test_tools_mirror_the_action_strings() -> None:
    tools = {t["function"]["name"]: t["function"]["parameters"] for t in tool_schemas()}
    assert set(tools) == set(SIGNATURES)
    assert tools["fill"]["required"] == ["bid", "value"]
    assert tools["click"]["required"] == ["bid"]
    assert tools["select_option"]["properties"]["options"]["type"] == ["string", "array"]


def test_typing_is_bounded_as_a_tool_call_too() -> None:
    from agentenvs.core.actions import ParsedAction
    from agentenvs.envs.web.actions import MAX_TYPED_CHARS, calls_of

    ok = ParsedAction(kind="tool", name="keyboard_type", arguments={"text": "a" * MAX_TYPED_CHARS})
    assert calls_of(ok)[0].args["text"] == "a" * MAX_TYPED_CHARS
    with pytest.raises(ActionError, match="fill"):
        calls_of(ParsedAction(kind="tool", name="keyboard_type", arguments={"text": "a" * (MAX_TYPED_CHARS + 1)}))
