"""OSWorld's single-task Impress metrics (transitions, orientation, colours) and LibreOffice settings checks.

The settings metrics read the user profile's ``registrymodifications.xcu``
(a ``vm_file`` getter), where LibreOffice keeps every changed option as an
``item`` with an ``oor:path`` and ``prop`` values.
"""

from __future__ import annotations

import math
import re
from typing import Any
from xml.etree import ElementTree as ET

from evaluators.office import _A, _REL, OfficeError, _open, _xml, member
from evaluators.osworld import _text, metric
from evaluators.osworld_slides import _P, _Deck, _geometry, _shapes
from evaluators.xlsx import _rels

_OOR = "{http://openoffice.org/2001/registry}"


@metric
def check_transition(result: Any, rules: dict[str, Any]) -> float:
    """Slide ``slide_idx`` (from 0, by file name as upstream) has a transition of ``transition_type``."""
    try:
        with _open(result) as archive:
            slide = _xml(archive, f"ppt/slides/slide{int(rules['slide_idx']) + 1}.xml")
    except (OfficeError, TypeError):
        return 0.0
    transition = next((t for t in slide.iter(f"{_P}transition")), None)
    return float(transition is not None and transition.find(f".//{_P}{rules['transition_type']}") is not None)


@metric
def check_slide_orientation_Portrait(result: Any) -> float:  # noqa: N802 - OSWorld's name
    try:
        with _open(result) as archive:
            size = _xml(archive, "ppt/presentation.xml").find(f"{_P}sldSz")
    except (OfficeError, TypeError):
        return 0.0
    return float(size is not None and int(size.get("cx", 0)) < int(size.get("cy", 0)))


def _is_color(name: str, rgb: tuple[int, int, int], margin: int = 50) -> bool:
    r, g, b = rgb
    return {
        "red": r > g + margin and r > b + margin,
        "blue": b > g + margin and b > r + margin,
        "green": g > r + margin and g > b + margin,
        "black": r < margin and g < margin and b < margin,
    }.get(name, True)


@metric
def check_page_number_colors(result: Any, rules: dict[str, Any]) -> float:
    """The first slide master's last non-black run colour (else its last fill colour) is ``color``.

    Upstream first looks for a colour inside the slide-number placeholder's
    ``p:ph`` element, which has no children, so in effect it reads this.
    """
    try:
        with _open(result) as archive:
            master = _xml(archive, "ppt/slideMasters/slideMaster1.xml")
    except (OfficeError, TypeError):
        return 0.0
    runs = [c.get("val") for rpr in master.iter(f"{_A}rPr") for f in rpr.iter(f"{_A}solidFill") for c in f.iter(f"{_A}srgbClr")]  # fmt: skip
    value = next((v for v in reversed(runs) if v and v != "000000"), None)
    if value is None:
        every = [c.get("val") for fill in master.iter(f"{_A}solidFill") for c in fill.iter(f"{_A}srgbClr")]
        value = next((v for v in reversed(every) if v and v != "000000"), every[-1] if every else None)
    if not value or not re.fullmatch(r"#?[0-9A-Fa-f]{6}", value):
        return 0.0
    value = value.lstrip("#")
    return float(_is_color(rules["color"], (int(value[:2], 16), int(value[2:4], 16), int(value[4:], 16))))


@metric
def evaluate_presentation_fill_to_rgb_distance(result: Any, rules: dict[str, Any]) -> float:
    """1 less the mean distance of each slide's solid background (own or master's) to ``rgb``; ``original_rgb`` counts as 1."""
    try:
        deck = _Deck(result)
        colors = [deck.background(slide) for slide in deck.slides]
    except (OfficeError, TypeError):
        return 0.0
    if not colors:
        return 0.0
    target, original = rules["rgb"], rules.get("original_rgb")
    total = 0.0
    for hexed in colors:
        if hexed is None:
            total += 1
            continue
        rgb = [int(hexed[i : i + 2], 16) for i in (0, 2, 4)]
        if original is not None and rgb == list(original):
            total += 1
            continue
        total += math.dist(rgb, target) / math.dist((0, 0, 0), (255, 255, 255))
    return 1 - total / len(colors)


def _setting(data: Any, path: str, name: str) -> str | None:
    """A LibreOffice option's value in ``registrymodifications.xcu``, or None."""
    try:
        root = ET.fromstring(_text(data))
    except ET.ParseError:
        return None
    for item in root.iter("item"):
        if item.get(f"{_OOR}path") == path:
            for prop in item.iter("prop"):
                if prop.get(f"{_OOR}name") == name:
                    value = prop.find("value")
                    return value.text if value is not None else None
    return None


@metric
def check_presenter_console_disable(result: Any) -> float:
    value = _setting(result, "/org.openoffice.Office.Impress/Misc/Start", "EnablePresenterScreen")
    return float(value is not None and value.lower() == "false")


@metric
def check_auto_saving_time(result: Any, rules: dict[str, Any]) -> float:
    value = _setting(result, "/org.openoffice.Office.Common/Save/Document", "AutoSaveTimeIntervall")
    return float(value is not None and value.strip().isdigit() and int(value) == rules["minutes"])


@metric
def find_default_font(result: Any, rules: dict[str, Any]) -> float:
    """Writer's default (Standard) font is ``font_name``."""
    return float(_setting(result, "/org.openoffice.Office.Writer/DefaultFont", "Standard") == rules["font_name"])


#: python-pptx's ``Inches(0.5)`` in EMU
_HALF_INCH = 457200


def _first_slide_pictures(deck: _Deck) -> list[tuple[ET.Element, str | None]]:
    """python-pptx's PICTURE shapes of the first slide (own ``p:pic``, not placeholders or movies), each with
    its image part's path (None when the picture embeds none)."""
    slide = deck.slides[0]
    rels = _rels(deck.archive, slide)
    found = []
    for shape in _shapes(_xml(deck.archive, slide)):
        nvpr = shape.find(f"{_P}nvPicPr/{_P}nvPr")
        if shape.tag != f"{_P}pic" or nvpr is not None and (nvpr.find(f"{_P}ph") is not None or nvpr.find(f"{_A}videoFile") is not None):  # fmt: skip
            continue
        blip = shape.find(f"{_P}blipFill/{_A}blip")
        found.append((shape, rels.get(blip.get(f"{_REL}embed", "")) if blip is not None else None))
    return found


@metric
def check_image_stretch_and_center(result: Any, expected: Any) -> float:
    """The original's first picture on the first slide (the last with the same image bytes, as upstream) now
    fills the original's slide size and is centred, each within half an inch."""
    try:
        original, modified = _Deck(expected), _Deck(result)
        size = _xml(original.archive, "ppt/presentation.xml").find(f"{_P}sldSz")
        width, height = int(size.get("cx", "")), int(size.get("cy", ""))  # type: ignore[union-attr]
        wanted = _first_slide_pictures(original)
        if not wanted:
            return 0.0
        if wanted[0][1] is None:
            return 0.0  # python-pptx cannot read the image: upstream's metric fails
        blob = member(original.archive, wanted[0][1])
        match = None
        for shape, part in _first_slide_pictures(modified):
            if part is None:
                return 0.0
            if member(modified.archive, part) == blob:
                match = shape
        geometry = _geometry(match) if match is not None else None
    except (OfficeError, KeyError, ValueError, IndexError, AttributeError, ET.ParseError):
        return 0.0
    if geometry is None:
        return 0.0
    left, top, w, h = geometry
    far = abs(w - width) > _HALF_INCH or abs(h - height) > _HALF_INCH
    return float(not (far or abs(left - (width - w) / 2) > _HALF_INCH or abs(top - (height - h) / 2) > _HALF_INCH))
