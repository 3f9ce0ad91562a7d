"""The env server's messages, as pydantic models: one definition for HTTP, WebSocket and the schema.

Over HTTP each operation is its own route and its body is one of these models;
over a WebSocket every message is a ``WsRequest`` (the same fields plus ``id``
and ``op``) and every reply a ``WsReply``, followed by one binary frame per
image the reply refers to. ``agentenvs serve --schema`` prints the JSON schema
(docs/serve-protocol.schema.json is that output, checked by the tests).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, TypeAdapter

PROTOCOL_VERSION = 1
Op = Literal["make", "attach", "reset", "step", "snapshot", "restore", "fork", "close", "describe"]
#: Every operation a WebSocket message may name.
OPS: frozenset[str] = frozenset(Op.__args__)
#: A request's ``id``: an integer or a string (a JSON ``true`` is neither), echoed in the reply.
RequestId = StrictInt | StrictStr | None
#: Operations that act on an existing session (all but ``make``).
SESSION_OPS: frozenset[str] = frozenset({"attach", "reset", "step", "snapshot", "restore", "fork", "close", "describe"})


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MakeRequest(_Strict):
    """Start a session: the env for a registered task, built with ``kwargs``."""

    env: str = Field(
        description='"<family>/<task-id>" (agentenvs.make) or "agentenvs/<family>-v0" (gymnasium.make)',
        min_length=1,
        max_length=512,
    )
    kwargs: dict[str, Any] = Field(default_factory=dict, description="constructor arguments (JSON values)")
    image_format: Literal["png", "jpeg"] = Field("png", description="how the session's images travel")


class ResetRequest(_Strict):
    seed: int | None = None
    options: dict[str, Any] | None = Field(None, description="reset options (JSON values), e.g. {'task_id': ...}")


class StepRequest(_Strict):
    action: Any = Field(description="the action: a string, or a tool call {'name': ..., 'arguments': {...}}")


class RestoreRequest(_Strict):
    ref: str = Field(min_length=1, max_length=256, description="a ref returned by snapshot")


class WsRequest(_Strict):
    """One WebSocket message: ``op`` and that operation's fields; ``id`` is echoed in the reply."""

    id: RequestId = None
    op: Op
    session: str | None = Field(None, description="the session acted on (every op but make)")
    env: str | None = None
    kwargs: dict[str, Any] | None = None
    image_format: Literal["png", "jpeg"] | None = None
    seed: int | None = None
    options: dict[str, Any] | None = None
    action: Any = None
    ref: str | None = None


_STEP_KEYS = ({"op", "session", "action"}, {"id", "op", "session", "action"})


def plain_step(data: Any) -> bool:
    """Whether ``data`` is a step that ``WsRequest`` would take exactly as it is (a session string, an
    action, an ``id`` that is an int or a string), so the server may skip pydantic on every step."""
    return (
        type(data) is dict
        and data.keys() in _STEP_KEYS
        and data["op"] == "step"
        and type(data["session"]) is str
        and data["action"] is not None
        and type(data.get("id", 0)) in (int, str)
    )


class SessionInfo(BaseModel):
    """What ``make``, ``attach``, ``fork`` and ``describe`` answer: the session and its env's interface."""

    session: str
    env: str
    observation_space: dict[str, Any]
    action_space: dict[str, Any]
    metadata: dict[str, Any] = Field(default_factory=dict)
    family: str | None = None
    action_tools: list[dict[str, Any]] = Field(default_factory=list)
    prompt_description: str = ""
    protocol: int = PROTOCOL_VERSION


class ResetReply(BaseModel):
    observation: dict[str, Any]
    info: dict[str, Any]


class StepReply(BaseModel):
    observation: dict[str, Any]
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any]


class SnapshotReply(BaseModel):
    ref: str


class ErrorReply(BaseModel):
    """A refused or failed request: HTTP status semantics, a message that says what to do."""

    status: int
    error: str
    type: str = Field(description="the exception's class name on the server")


class CloseReply(BaseModel):
    """What ``close`` (``DELETE /v1/sessions/{id}``) answers."""

    closed: bool


class HealthReply(BaseModel):
    """What ``GET /v1/health`` answers."""

    ok: bool
    live: int = Field(description="live sessions")
    max_sessions: int


class WsReply(BaseModel):
    id: RequestId = None
    ok: bool
    result: Any = None
    error: ErrorReply | None = None
    frames: int = Field(0, description="binary frames (images) that follow this message")
    marked: list[str] | None = Field(
        None,
        description="which of the result's keys hold $ markers (only these need decoding); absent: any may",
    )


def json_schema() -> dict[str, Any]:
    """The protocol's JSON schema: every request and reply model."""
    models = {
        "MakeRequest": MakeRequest,
        "ResetRequest": ResetRequest,
        "StepRequest": StepRequest,
        "RestoreRequest": RestoreRequest,
        "WsRequest": WsRequest,
        "SessionInfo": SessionInfo,
        "ResetReply": ResetReply,
        "StepReply": StepReply,
        "SnapshotReply": SnapshotReply,
        "CloseReply": CloseReply,
        "HealthReply": HealthReply,
        "ErrorReply": ErrorReply,
        "WsReply": WsReply,
    }
    definitions: dict[str, Any] = {}
    for name, model in models.items():
        # A model's own "$defs" (WsReply's ErrorReply) joins the top level, where its "$ref" points:
        # nested, "#/$defs/ErrorReply" resolved against the whole document and found nothing.
        schema = TypeAdapter(model).json_schema(ref_template="#/definitions/{model}")
        for inner, definition in schema.pop("$defs", {}).items():
            if definitions.setdefault(inner, definition) != definition:
                raise ValueError(f"two different schemas named {inner}")
        definitions[name] = schema
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "agentenvs env server protocol",
        "version": PROTOCOL_VERSION,
        "definitions": definitions,
    }


def schema_text() -> str:
    return json.dumps(json_schema(), indent=2, sort_keys=True) + "\n"
