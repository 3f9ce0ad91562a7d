"""What a trajectory keeps of a policy's oversized output: a bounded prefix and the size, never the whole.

A policy may answer with a 5 MB action (refused: it is never sent) or a 5 MB
message; a run directory must stay readable and small all the same.
"""

from __future__ import annotations

import reprlib
from typing import Any

#: What a trajectory keeps of a refused action, and of a policy's message.
REFUSED_PREFIX_CHARS = 1000
MESSAGE_CHARS = 100_000


_SHORT_REPR = reprlib.Repr()  # bounded in depth and width: safe on a cyclic or 10,000-deep action
_SHORT_REPR.maxlevel, _SHORT_REPR.maxstring, _SHORT_REPR.maxother = 6, 200, 200
_SHORT_REPR.maxdict = _SHORT_REPR.maxlist = _SHORT_REPR.maxtuple = 20


def refused_record(action: Any, problem: str) -> dict[str, Any]:
    """A bounded account of an action too large or too deep to keep whole (never walked unbounded)."""
    record: dict[str, Any] = {"why": problem, "type": type(action).__name__}
    if isinstance(action, (str, bytes, bytearray)):
        record["chars"] = len(action)
        head = action[:REFUSED_PREFIX_CHARS]
        record["prefix"] = head if isinstance(head, str) else bytes(head).decode("utf-8", "replace")
    else:
        record["prefix"] = _SHORT_REPR.repr(action)[:REFUSED_PREFIX_CHARS]
    return record


def bounded_message(message: str | None) -> dict[str, Any]:
    """The policy's message for the trajectory: whole up to ``MESSAGE_CHARS``, else its start and size."""
    if message is None or len(message) <= MESSAGE_CHARS:
        return {"message": message}
    return {"message": message[:MESSAGE_CHARS], "message_chars": len(message)}
