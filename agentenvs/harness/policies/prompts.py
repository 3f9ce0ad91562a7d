"""System prompts and observation text for chat-model policies.

One generic prompt, the env's own ``prompt_description``, and a short hint
per family. A family that is not listed still works: the description and
tools the env publishes are enough.
"""

from __future__ import annotations

import json
import re
from typing import Any

FAMILY_HINTS: dict[str, str] = {
    "terminal": (
        "You work at a bash shell in a sandbox with no network access. Each command's output "
        "and exit code come back to you. Check your work before you call done."
    ),
    "swe": (
        "You work in a checked-out software repository at a bash shell with no network access. "
        "Change the code so the described problem is fixed; the hidden tests decide."
    ),
    "textgame": (
        "You play a text adventure. Each turn you send one game command; the game describes "
        "what happens. Use the listed admissible commands when they are given."
    ),
    "web": "You operate a web browser. Act on elements by the ids in the page's accessibility tree.",
    "gui": "You operate a Linux desktop through the mouse and keyboard; the screenshot shows the screen.",
}

GENERIC = (
    "You are an agent solving a task in an interactive environment. Act by calling exactly one "
    "tool per turn. A reply without a tool call is itself taken as the action, as plain text "
    "(a shell command, a game command): then write only the action, nothing else. When the task "
    "is complete, call `done`; if it cannot be done, call `fail` with the reason; if the task "
    "asks for an answer, call `submit` with it."
)

#: A reply that is one fenced block: the action is what is inside.
_FENCED = re.compile(r"\A```[\w+-]*[ \t]*\n(.*?)\n?```\Z", re.DOTALL)
#: A reasoning model's thinking at the start of its text, when no reasoning parser took it out: a
#: ``<think>`` block, or text up to ``</think>`` (when the chat template put ``<think>`` in the prompt).
_THOUGHT = re.compile(r"\A(?:<think>(?:(?!</think>).)*(?:</think>|\Z)|(?:(?!<think>).)*?</think>)", re.DOTALL)


def system_prompt(family: str, prompt_description: str) -> str:
    parts = [GENERIC]
    if family in FAMILY_HINTS:
        parts.append(FAMILY_HINTS[family])
    if prompt_description.strip():
        parts.append(prompt_description.strip())
    return "\n\n".join(parts)


def plain_text_action(content: str) -> str:
    """A chat reply with no tool call, as the plain-text action the system prompt allows: the reply
    itself, or the inside of the one fenced code block it consists of; ``""`` if there is none. Thinking
    before it (``<think>...</think>``, from a model served without a reasoning parser) is not the action;
    an unclosed ``<think>`` (cut off at ``max_tokens``) leaves none."""
    # lstrip first: a leading \s* in the pattern backtracks quadratically over a reply of blank space.
    stripped = _THOUGHT.sub("", content.lstrip(), count=1).strip()
    fenced = _FENCED.match(stripped)
    return fenced.group(1).strip() if fenced else stripped


def observation_text(fields: dict[str, Any], *, include_instruction: bool = False) -> str:
    """The observation as the text a model reads: ``text`` first, then the family's extras."""
    lines: list[str] = []
    if include_instruction and fields.get("instruction"):
        lines.append(f"Task:\n{fields['instruction']}\n")
    lines.append(str(fields.get("text", "")))
    for key, value in fields.items():
        if key in ("instruction", "text"):
            continue
        rendered = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        lines.append(f"[{key}] {rendered}")
    return "\n".join(lines)
