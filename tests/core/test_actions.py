"""Action parsing is total: every input either parses or raises ActionError saying why."""

from __future__ import annotations

import pytest

from agentenvs.core import ActionError, parse_action

TOOLS = frozenset({"bash"})


def test_native_string() -> None:
    parsed = parse_action("ls -la", TOOLS)
    assert parsed.kind == "native"
    assert parsed.text == "ls -la"


@pytest.mark.parametrize("word", ["done", "DONE", " fail ", "submit"])
def test_control_words(word: str) -> None:
    assert parse_action(word, TOOLS).kind == word.strip().lower()


def test_tool_call_shapes() -> None:
    plain = parse_action({"name": "bash", "arguments": {"command": "pwd"}}, TOOLS)
    assert (plain.kind, plain.name, plain.arguments) == ("tool", "bash", {"command": "pwd"})
    openai = parse_action({"type": "function", "function": {"name": "bash", "arguments": '{"command": "pwd"}'}}, TOOLS)
    assert openai.arguments == {"command": "pwd"}
    as_json = parse_action('{"name": "bash", "arguments": {"command": "pwd"}}', TOOLS)
    assert as_json.kind == "tool"
    submit = parse_action({"name": "submit", "arguments": {"answer": "42"}}, TOOLS)
    assert (submit.kind, submit.text) == ("submit", "42")


@pytest.mark.parametrize(
    ("action", "message"),
    [
        (b"\xff\xfe\x00", "UTF-8"),
        ("x" * (2 << 20), "limit"),
        ("", "empty"),
        ("   ", "empty"),
        ("a\x00b", "NUL"),
        (None, "strings or tool-call"),
        (42, "strings or tool-call"),
        (["ls"], "strings or tool-call"),
        ({"arguments": {}}, "name"),
        ({"name": "rm_rf", "arguments": {}}, "unknown tool"),
        ({"name": "bash", "arguments": "{not json"}, "not valid JSON"),
        ({"name": "bash", "arguments": [1, 2]}, "JSON object"),
        ({"name": "bash", "arguments": {}, "extra": 1}, "unexpected keys"),
    ],
)
def test_junk_actions_raise_action_error(action: object, message: str) -> None:
    with pytest.raises(ActionError, match=message):
        parse_action(action, TOOLS)


def test_json_looking_command_is_still_a_command() -> None:
    assert parse_action('{"not": "a tool call"}', TOOLS).kind == "native"


def test_bounds_count_real_nesting_and_size() -> None:
    from agentenvs.core.actions import MAX_ACTION_CHARS, MAX_ACTION_DEPTH, action_problem, json_too_deep

    brackets_in_strings = '{"command": "echo ' + "[{" * 500 + '", "x": "\\"[[["}'
    assert not json_too_deep(brackets_in_strings)
    assert parse_action({"name": "bash", "arguments": brackets_in_strings}, TOOLS).arguments["x"] == '"[[['
    just_fits = "[" * (MAX_ACTION_DEPTH - 2) + "]" * (MAX_ACTION_DEPTH - 2)
    assert action_problem({"name": "bash", "arguments": {"k": just_fits}}) is None
    assert "nests deeper" in action_problem({"name": "bash", "arguments": {"k": "[" + just_fits + "]"}})
    # An escaped quote does not end a string; brackets after a real closing quote count.
    assert json_too_deep('"\\"' + "[" * 100 + '"' + "[" * (MAX_ACTION_DEPTH + 1)) is True
    assert json_too_deep('"\\"' + "[" * 100 + '"') is False
    many_keys = {"name": "bash", "arguments": {str(i): i for i in range(MAX_ACTION_CHARS // 4)}}
    assert "larger than the limit" in action_problem(many_keys)
    with pytest.raises(ActionError, match="larger than the limit"):
        parse_action(many_keys, TOOLS)
