"""Spaces and values on the wire: JSON, with images as PNG (or JPEG) bytes.

A remote env must have the same spaces as the local one and hand back the
same observations, so both travel exactly: a space as a small JSON
description, a value as JSON where ``{"$image": ...}`` stands for an image
array (its bytes either inline in base64, over HTTP, or in a binary
WebSocket frame that follows the message) and ``{"$array": ...}`` for any
other numpy array, with its dtype and shape.
"""

from __future__ import annotations

import base64
import io
import json
import math
from typing import Any, Literal

import numpy as np
import orjson
from gymnasium import spaces

from agentenvs.core.spaces import Unicode
from agentenvs.harness.observation import encode_png, is_image

ImageFormat = Literal["png", "jpeg"]
#: The most bytes one decoded ``$array`` or ``$image`` may take: a short message must not make the server
#: allocate gigabytes (a ``"U100000000"`` dtype, a PNG of a hundred million pixels).
MAX_DECODED = 256 << 20


class CodecError(ValueError):
    """A space or value that cannot travel, or a message that does not decode."""


def dumps(message: Any) -> str:
    """A message as JSON text: orjson takes a few microseconds where json takes tens, on every step.

    json takes what orjson refuses (integers past 64 bits).
    """
    try:
        return orjson.dumps(message).decode()
    except orjson.JSONEncodeError:
        return json.dumps(message)


def loads(text: str | bytes) -> Any:
    """A JSON message (orjson); json reads what orjson refuses (NaN, integers past 64 bits)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


# -- spaces ---------------------------------------------------------------------------


def _bound(values: np.ndarray) -> Any:
    """A Box bound as one number when every entry is the same, else the full list."""
    flat = np.unique(values)
    if flat.size == 1:
        return _number(flat[0])
    return values.tolist()


def _number(value: Any) -> Any:
    number = value.item() if isinstance(value, np.generic) else value
    if isinstance(number, float) and not np.isfinite(number):
        return "inf" if number > 0 else "-inf"
    return number


def space_to_json(space: spaces.Space[Any]) -> dict[str, Any]:
    """A JSON description of ``space`` that ``space_from_json`` turns back into an equal space."""
    if isinstance(space, Unicode):
        return {"type": "Unicode", "max_length": space.max_length}
    if isinstance(space, spaces.Dict):
        return {"type": "Dict", "spaces": {k: space_to_json(v) for k, v in space.spaces.items()}}
    if isinstance(space, spaces.Tuple):
        return {"type": "Tuple", "spaces": [space_to_json(s) for s in space.spaces]}
    if isinstance(space, spaces.Box):
        return {
            "type": "Box",
            "low": _bound(space.low),
            "high": _bound(space.high),
            "shape": list(space.shape),
            "dtype": str(space.dtype),
        }
    if isinstance(space, spaces.Discrete):
        return {"type": "Discrete", "n": int(space.n), "start": int(space.start)}
    if isinstance(space, spaces.MultiBinary):
        return {"type": "MultiBinary", "n": np.asarray(space.n).tolist()}
    if isinstance(space, spaces.MultiDiscrete):
        return {"type": "MultiDiscrete", "nvec": space.nvec.tolist(), "dtype": str(space.dtype)}
    if isinstance(space, spaces.Text):
        return {
            "type": "Text",
            "max_length": space.max_length,
            "min_length": space.min_length,
            "charset": "".join(space.character_set),
        }
    raise CodecError(f"a {type(space).__name__} space cannot be sent over the wire")


def _unbound(value: Any) -> Any:
    if value == "inf":
        return np.inf
    if value == "-inf":
        return -np.inf
    return np.asarray(value) if isinstance(value, list) else value


def space_from_json(data: dict[str, Any]) -> spaces.Space[Any]:
    """The space ``space_to_json`` described."""
    kind = data.get("type")
    try:
        if kind == "Unicode":
            return Unicode(data["max_length"])
        if kind == "Dict":
            return spaces.Dict({k: space_from_json(v) for k, v in data["spaces"].items()})
        if kind == "Tuple":
            return spaces.Tuple([space_from_json(s) for s in data["spaces"]])
        if kind == "Box":
            shape = tuple(data["shape"])
            return spaces.Box(_unbound(data["low"]), _unbound(data["high"]), shape=shape, dtype=np.dtype(data["dtype"]))
        if kind == "Discrete":
            return spaces.Discrete(data["n"], start=data.get("start", 0))
        if kind == "MultiBinary":
            return spaces.MultiBinary(data["n"])
        if kind == "MultiDiscrete":
            return spaces.MultiDiscrete(data["nvec"], dtype=np.dtype(data["dtype"]))
        if kind == "Text":
            return spaces.Text(data["max_length"], min_length=data["min_length"], charset=data["charset"])
    except (KeyError, TypeError, ValueError) as exc:
        raise CodecError(f"bad {kind} space description: {exc}") from exc
    raise CodecError(f"unknown space type {kind!r}")


# -- values ---------------------------------------------------------------------------


class Attachments:
    """Image bytes that travel beside a JSON message (WebSocket binary frames), in order, and a count
    of the ``$`` markers encoded with them (so a reply can say which of its values a client must
    decode, and the client skip walking the rest)."""

    def __init__(self, frames: list[bytes] | None = None):
        self.frames: list[bytes] = list(frames or [])
        self.markers = 0
        #: The keys of the last ``encode_fields`` whose values hold a marker.
        self.marked: list[str] | None = None

    def encode_fields(self, values: dict[str, Any], image_format: ImageFormat) -> dict[str, Any]:
        """Each value encoded; ``marked`` says which hold a marker."""
        encoded, self.marked = {}, []
        for key, value in values.items():
            before = self.markers
            encoded[key] = encode_value(value, self, image_format)
            if self.markers != before:
                self.marked.append(key)
        return encoded


def _encode_image(image: np.ndarray, image_format: ImageFormat) -> bytes:
    if image_format == "png":
        return encode_png(image)
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(image).convert("RGB").save(buffer, format="JPEG", quality=90)
    return buffer.getvalue()


def encode_value(value: Any, attachments: Attachments | None = None, image_format: ImageFormat = "png") -> Any:
    """``value`` as JSON. Images go to ``attachments`` when given, else inline in base64."""
    if value is None or isinstance(value, (str, int)):  # bool is an int
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        if attachments is not None:
            attachments.markers += 1
        return {"$float": repr(value)}
    if isinstance(value, np.generic):
        return encode_value(value.item(), attachments, image_format)
    if isinstance(value, (np.ndarray, bytes)) and attachments is not None:
        attachments.markers += 1
    if isinstance(value, np.ndarray):
        if is_image(value):
            data = _encode_image(value, image_format)
            image: dict[str, Any] = {"format": image_format, "shape": list(value.shape)}
            if attachments is None:
                image["data"] = base64.b64encode(data).decode("ascii")
            else:
                image["frame"] = len(attachments.frames)
                attachments.frames.append(data)
            return {"$image": image}
        return {"$array": {"dtype": str(value.dtype), "shape": list(value.shape), "data": value.tolist()}}
    if isinstance(value, dict):
        return {str(k): encode_value(v, attachments, image_format) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode_value(v, attachments, image_format) for v in value]
    if isinstance(value, bytes):
        return {"$bytes": base64.b64encode(value).decode("ascii")}
    return repr(value)


def _decode_image(image: dict[str, Any], attachments: Attachments | None) -> np.ndarray:
    from PIL import Image

    if "data" in image:
        data = base64.b64decode(image["data"], validate=True)
    else:
        frame = image.get("frame")
        if attachments is None or not isinstance(frame, int) or not 0 <= frame < len(attachments.frames):
            raise CodecError(f"image frame {frame!r} is missing from the message")
        data = attachments.frames[frame]
    opened = Image.open(io.BytesIO(data))  # reads the header only: the size is known before the pixels
    if opened.width * opened.height * 4 > MAX_DECODED:
        raise CodecError(f"an image of {opened.width}x{opened.height} pixels is over {MAX_DECODED} bytes")
    array = np.asarray(opened)
    shape = tuple(image.get("shape") or array.shape)
    if array.shape != shape:
        if len(shape) == 3 and array.ndim == 3 and shape[2] == 3:
            array = array[..., :3]
        else:
            raise CodecError(f"image decoded as {array.shape}, expected {shape}")
    return np.ascontiguousarray(array, dtype=np.uint8)


def decode_value(value: Any, attachments: Attachments | None = None) -> Any:
    """The value ``encode_value`` described."""
    if isinstance(value, list):
        return [decode_value(v, attachments) for v in value]
    if not isinstance(value, dict):
        return value
    if len(value) == 1:
        key, inner = next(iter(value.items()))
        if key in ("$image", "$array", "$float", "$bytes"):
            try:
                return _decode_marker(key, inner, attachments)
            except CodecError:
                raise
            except Exception as exc:  # noqa: BLE001 - whatever the bytes make PIL or numpy raise
                raise CodecError(f"a malformed {key} value: {type(exc).__name__}: {exc}") from exc
    return {k: decode_value(v, attachments) for k, v in value.items()}


def _decode_marker(key: str, inner: Any, attachments: Attachments | None) -> Any:
    if key == "$image":
        return _decode_image(inner, attachments)
    if key == "$array":
        dtype, shape = np.dtype(inner["dtype"]), [int(n) for n in inner["shape"]]
        if dtype.itemsize * math.prod(max(n, 1) for n in shape) > MAX_DECODED:
            raise CodecError(f"an array of {shape} {dtype} is over {MAX_DECODED} bytes")
        return np.asarray(inner["data"], dtype=dtype).reshape(shape)
    if key == "$float":
        return float(inner)
    return base64.b64decode(inner, validate=True)
