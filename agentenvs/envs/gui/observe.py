"""Observations from the desktop: frames as arrays, the accessibility tree as OSWorld's linearised table, set-of-marks.

OSWorld's agents read the tree as TSV rows (tag, name, text, class,
description, position, size) of nodes that are showing and have a name or
text; set-of-marks numbers the same nodes and draws their boxes on the frame.
"""

from __future__ import annotations

import re
from xml.etree import ElementTree as ET

import numpy as np

OBSERVATION_TYPES = ("screenshot", "a11y_tree", "screenshot_a11y_tree", "som")
_ST = "{https://accessibility.ubuntu.example.org/ns/state}"
_CP = "{https://accessibility.ubuntu.example.org/ns/component}"
_PAIR = re.compile(r"\((-?\d+), (-?\d+)\)")
KEEP_TAGS = {
    "push-button", "toggle-button", "check-box", "radio-button", "menu", "menu-item", "text", "entry",
    "label", "combo-box", "list-item", "table-cell", "page-tab", "link", "icon", "heading", "paragraph",
    "document-text", "document-spreadsheet", "document-presentation", "spin-button", "tool-bar", "frame",
}  # fmt: skip


def frame_to_rgb(frame: bytes, width: int, height: int) -> np.ndarray:
    """The daemon's BGRA frame as an H x W x 3 uint8 RGB array."""
    bgra = np.frombuffer(frame, dtype=np.uint8).reshape(height, width, 4)
    return np.ascontiguousarray(bgra[:, :, 2::-1])


def _pair(value: str | None) -> tuple[int, int] | None:
    match = _PAIR.fullmatch(value or "")
    return (int(match[1]), int(match[2])) if match else None


def nodes(xml: str, width: int, height: int) -> list[dict[str, object]]:
    """The tree's visible, named nodes on screen, in document order."""
    try:
        root = ET.fromstring(xml)
    except ET.ParseError:
        return []
    found = []
    for node in root.iter():
        tag = node.tag
        if tag not in KEEP_TAGS or node.get(f"{_ST}showing") != "true":
            continue
        name, text = node.get("name", ""), (node.text or "").strip()
        pos, size = _pair(node.get(f"{_CP}screencoord")), _pair(node.get(f"{_CP}size"))
        if not (name or text) or pos is None or size is None or size[0] <= 0 or size[1] <= 0:
            continue
        if pos[0] >= width or pos[1] >= height or pos[0] + size[0] <= 0 or pos[1] + size[1] <= 0:
            continue
        found.append({"tag": tag, "name": name, "text": text, "position": pos, "size": size})
    return found


def linearize(found: list[dict[str, object]], numbered: bool = False) -> str:
    head = "tag\tname\ttext\tclass\tdescription\tposition (top-left x&y)\tsize (w&h)"
    rows = [("index\t" if numbered else "") + head]
    for i, n in enumerate(found, 1):
        text = str(n["text"]).replace("\n", "\\n")[:200]
        row = f"{n['tag']}\t{n['name']}\t{text}\t\t\t{n['position']}\t{n['size']}"
        rows.append(f"{i}\t{row}" if numbered else row)
    return "\n".join(rows)


def draw_marks(image: np.ndarray, found: list[dict[str, object]]) -> np.ndarray:
    """Set-of-marks: each node's box and its number drawn on a copy of the frame."""
    from PIL import Image, ImageDraw

    canvas = Image.fromarray(image)
    draw = ImageDraw.Draw(canvas)
    for i, n in enumerate(found, 1):
        (x, y), (w, h) = n["position"], n["size"]  # type: ignore[misc]
        draw.rectangle([x, y, x + w - 1, y + h - 1], outline=(255, 0, 0), width=1)
        draw.rectangle([x, y, x + 7 * len(str(i)) + 2, y + 11], fill=(255, 0, 0))
        draw.text((x + 1, y), str(i), fill=(255, 255, 255))
    return np.asarray(canvas)
