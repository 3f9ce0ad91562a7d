"""OSWorld's ``compare_pptx_files``: slides, shapes, text and formatting, with its ``examine_*`` options.

The defaults are OSWorld's: slide count, background colour, notes, shape
count and geometry (within ``approximately_tolerance``), text, paragraph
alignment and level, run count, and each run's font name, size, bold,
italic, colour, underline and strike-through, bullets, and table cells.
The options OSWorld added for single tasks (``examine_title_bottom_position``
and the like: where one title, table or picture must have moved, which
heights may change; off by default) keep their upstream rules, hard-coded
slide numbers and EMU thresholds included.
"""

from __future__ import annotations

import re
import zipfile
from typing import Any
from xml.etree import ElementTree as ET

from evaluators.office import _A, OfficeError, _open, _slide_order, _xml
from evaluators.osworld import metric
from evaluators.xlsx import _rels

_P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
_SHAPES = {f"{_P}sp", f"{_P}pic", f"{_P}graphicFrame", f"{_P}grpSp", f"{_P}cxnSp", f"{_P}contentPart"}


class _Deck:
    def __init__(self, data: bytes):
        self.archive: zipfile.ZipFile = _open(data)
        names = [n for n in self.archive.namelist() if re.fullmatch(r"ppt/slides/slide\d+\.xml", n)]
        self.slides = _slide_order(self.archive) or sorted(names, key=lambda n: int(re.findall(r"\d+", n)[-1]))

    def background(self, slide: str) -> str | None:
        own = _xml(self.archive, slide).find(f"{_P}cSld/{_P}bg/{_P}bgPr/{_A}solidFill/{_A}srgbClr")
        if own is not None:
            return own.get("val")
        for layout in (p for p in _rels(self.archive, slide).values() if "slideLayout" in p):
            for master in (p for p in _rels(self.archive, layout).values() if "slideMaster" in p):
                color = _xml(self.archive, master).find(f"{_P}cSld/{_P}bg/{_P}bgPr/{_A}solidFill/{_A}srgbClr")
                return color.get("val") if color is not None else None
        return None

    def notes(self, slide: str) -> str:
        for part in (p for p in _rels(self.archive, slide).values() if "notesSlide" in p):
            for sp in _xml(self.archive, part).iter(f"{_P}sp"):
                ph = sp.find(f"{_P}nvSpPr/{_P}nvPr/{_P}ph")
                if ph is not None and ph.get("type") == "body":
                    return _frame_text(sp)
        return ""


def _shapes(slide: ET.Element) -> list[ET.Element]:
    tree = slide.find(f"{_P}cSld/{_P}spTree")
    return [c for c in (tree if tree is not None else []) if c.tag in _SHAPES]


def _text_shapes(shapes: list[ET.Element]) -> list[ET.Element]:
    out = []
    for shape in shapes:
        if shape.tag == f"{_P}sp":
            out.append(shape)
        elif shape.tag == f"{_P}grpSp":
            out += _text_shapes([c for c in shape if c.tag in _SHAPES])
    return out


def _geometry(shape: ET.Element) -> tuple[int, int, int, int] | None:
    xfrm = shape.find(f"{_P}xfrm") if shape.tag == f"{_P}graphicFrame" else None
    if xfrm is None:
        pr = shape.find(f"{_P}grpSpPr") if shape.tag == f"{_P}grpSp" else shape.find(f"{_P}spPr")
        xfrm = pr.find(f"{_A}xfrm") if pr is not None else None
    off = xfrm.find(f"{_A}off") if xfrm is not None else None
    ext = xfrm.find(f"{_A}ext") if xfrm is not None else None
    if off is None or ext is None:
        return None
    return int(off.get("x", 0)), int(off.get("y", 0)), int(ext.get("cx", 0)), int(ext.get("cy", 0))


def _is_table(shape: ET.Element) -> bool:
    return shape.tag == f"{_P}graphicFrame" and shape.find(f".//{_A}tbl") is not None


def _is_freeform(shape: ET.Element) -> bool:
    return shape.tag == f"{_P}sp" and shape.find(f"{_P}spPr/{_A}custGeom") is not None


def _paragraphs(shape: ET.Element) -> list[ET.Element]:
    body = shape.find(f"{_P}txBody")
    return body.findall(f"{_A}p") if body is not None else [ET.Element(f"{_A}p")]


def _para_text(p: ET.Element) -> str:
    out = []
    for node in p:
        if node.tag in (f"{_A}r", f"{_A}fld"):
            t = node.find(f"{_A}t")
            out.append(t.text or "" if t is not None else "")
        elif node.tag == f"{_A}br":
            out.append("\v")
    return "".join(out)


def _frame_text(shape: ET.Element) -> str:
    return "\n".join(_para_text(p) for p in _paragraphs(shape))


def _runs(p: ET.Element, other: ET.Element) -> tuple[list[ET.Element], list[ET.Element]]:
    """The paragraphs' runs; between two blank paragraphs only runs with text count."""
    a, b = p.findall(f"{_A}r"), other.findall(f"{_A}r")
    if not _para_text(p).strip() and not _para_text(other).strip():
        a = [r for r in a if (r.findtext(f"{_A}t") or "").strip()]
        b = [r for r in b if (r.findtext(f"{_A}t") or "").strip()]
    return a, b


def _font(run: ET.Element) -> dict[str, Any]:
    pr = run.find(f"{_A}rPr")
    attrs = pr.attrib if pr is not None else {}
    latin = pr.find(f"{_A}latin") if pr is not None else None
    rgb = pr.find(f"{_A}solidFill/{_A}srgbClr") if pr is not None else None

    def flag(name: str) -> bool | None:
        return None if name not in attrs else attrs[name] in ("1", "true")

    underline = attrs.get("u")
    return {
        "name": latin.get("typeface") if latin is not None else None,
        "size": int(attrs["sz"]) if "sz" in attrs else None,
        "bold": flag("b"),
        "italic": flag("i"),
        "underline": None
        if underline is None
        else (underline != "none" if underline in ("none", "sng") else underline),
        "rgb": rgb.get("val") if rgb is not None else None,
        "strike": attrs.get("strike", "noStrike"),
    }


def _same_flag(a: Any, b: Any) -> bool:
    return a == b or (not a and not b)


def _same_underline(a: Any, b: Any) -> bool:
    if a == b:
        return True
    if a is not None and b is not None:
        return False
    return not (a is True or b is True)


def _bullets(slide: ET.Element) -> list[tuple[Any, str, str]]:
    out = []
    for p in slide.iter(f"{_A}p"):
        pr = p.find(f"{_A}pPr")
        char = pr.find(f"{_A}buChar") if pr is not None else None
        text = "".join(t.text or "" for t in p.iter(f"{_A}t"))
        if text.strip():
            lvl = (pr.get("lvl") if pr is not None else None) or "0"
            out.append((lvl, char.get("char", "") if char is not None else "No Bullet", text))
    return out


def _same_bullets(a: list[tuple[Any, str, str]], b: list[tuple[Any, str, str]]) -> bool:
    if len(a) != len(b):
        return False
    return all(t1 == t2 and c1 == c2 and (c1 == "No Bullet" or l1 == l2) for (l1, c1, t1), (l2, c2, t2) in zip(a, b))


class _Compare:
    def __init__(self, options: dict[str, Any]):
        self.o = {
            k: options.get(k, True)
            for k in (
                "examine_number_of_slides",
                "examine_shape",
                "examine_text",
                "examine_indent",
                "examine_font_name",
                "examine_font_size",
                "examine_font_bold",
                "examine_font_italic",
                "examine_color_rgb",
                "examine_font_underline",
                "examine_strike_through",
                "examine_alignment",
                "examine_run_count",
                "examine_bullets",
                "examine_background_color",
                "examine_note",
            )
        }
        self.options = options
        self.tolerance = float(options.get("approximately_tolerance", 0.005))

    def close(self, a: tuple | None, b: tuple | None) -> bool:
        if a is None or b is None:
            return a == b
        return all(x == y or (x and y and abs(x - y) / max(abs(x), abs(y)) <= self.tolerance) for x, y in zip(a, b))

    def runs(self, r1: ET.Element, r2: ET.Element, table: bool) -> bool:
        f1, f2 = _font(r1), _font(r2)
        o = self.o
        if f1["rgb"] and f2["rgb"] and f1["rgb"] != f2["rgb"] and o["examine_color_rgb"]:
            return False
        if not _same_flag(f1["bold"], f2["bold"]) and (table or o["examine_font_bold"]):
            return False
        if not _same_flag(f1["italic"], f2["italic"]) and (table or o["examine_font_italic"]):
            return False
        if not _same_underline(f1["underline"], f2["underline"]) and (table or o["examine_font_underline"]):
            return False
        if table:
            return True
        if f1["name"] != f2["name"] and o["examine_font_name"]:
            return False
        if f1["size"] != f2["size"] and o["examine_font_size"]:
            return False
        return not (f1["strike"] != f2["strike"] and o["examine_strike_through"])

    def paragraphs(self, p1: ET.Element, p2: ET.Element, bullets: bool) -> bool:
        o = self.o
        pr1, pr2 = p1.find(f"{_A}pPr"), p2.find(f"{_A}pPr")
        align1 = (pr1.get("algn") if pr1 is not None else None) or "l"
        align2 = (pr2.get("algn") if pr2 is not None else None) or "l"
        if o["examine_alignment"] and align1 != align2:
            return False
        if _para_text(p1) != _para_text(p2) and o["examine_text"]:
            return False
        lvl1 = int((pr1.get("lvl") if pr1 is not None else None) or 0)
        lvl2 = int((pr2.get("lvl") if pr2 is not None else None) or 0)
        if lvl1 != lvl2 and o["examine_indent"] and not (lvl1 in (0, 1) and lvl2 in (0, 1)):
            return False
        runs1, runs2 = _runs(p1, p2)
        if len(runs1) != len(runs2) and o["examine_run_count"]:
            return False
        if runs1 and runs2 and o["examine_bullets"] and not bullets:
            return False
        return all(self.runs(a, b, table=False) for a, b in zip(runs1, runs2))

    def table(self, s1: ET.Element, s2: ET.Element) -> bool:
        t1, t2 = s1.find(f".//{_A}tbl"), s2.find(f".//{_A}tbl")
        if t1 is None or t2 is None:
            return t1 is None and t2 is None
        rows1, rows2 = t1.findall(f"{_A}tr"), t2.findall(f"{_A}tr")
        if len(rows1) != len(rows2) or len(t1.findall(f"{_A}tblGrid/{_A}gridCol")) != len(
            t2.findall(f"{_A}tblGrid/{_A}gridCol")
        ):
            return False
        for r1, r2 in zip(rows1, rows2):
            for c1, c2 in zip(r1.findall(f"{_A}tc"), r2.findall(f"{_A}tc")):
                ps1, ps2 = c1.findall(f"{_A}txBody/{_A}p"), c2.findall(f"{_A}txBody/{_A}p")
                if len(ps1) != len(ps2):
                    return False
                for p1, p2 in zip(ps1, ps2):
                    runs1, runs2 = _runs(p1, p2)
                    if len(runs1) != len(runs2) and self.o["examine_run_count"]:
                        return False
                    if not all(self.runs(a, b, table=True) for a, b in zip(runs1, runs2)):
                        return False
        return True

    def specific(self, index: int, s1: ET.Element, s2: ET.Element) -> bool:
        """The single-task options, as upstream runs them before the general geometry check."""
        o, g1, g2 = self.options, _geometry(s1) or (0, 0, 0, 0), _geometry(s2) or (0, 0, 0, 0)
        moved = not self.close(g1, g2)
        texty = s1.tag == f"{_P}sp" and s2.tag == f"{_P}sp"
        pictures = s1.tag == f"{_P}pic" and s2.tag == f"{_P}pic"
        if o.get("examine_title_bottom_position"):
            if texty and _frame_text(s1) == _frame_text(s2):
                if _frame_text(s1) == "Product Comparison" and (g1[1] <= g2[1] or g1[1] < 3600000):
                    return False
            elif moved:
                return False
        if o.get("examine_table_bottom_position"):
            if index == 3 and _is_table(s1) and _is_table(s2):
                if g1[1] <= g2[1] or g1[1] < 3600000:
                    return False
            elif moved:
                return False
        if o.get("examine_right_position") and index == 2 and s1.tag != f"{_P}sp" and s2.tag != f"{_P}sp":
            if g1[0] <= g2[0] or g1[0] < 4320000:
                return False
        if o.get("examine_top_position") and index == 2 and pictures and (g1[1] >= g2[1] or g1[1] > 1980000):
            return False
        if o.get("examine_shape_for_shift_size") and moved:
            if not (texty and _frame_text(s1) == _frame_text(s2) == "Elaborate on what you want to discuss."):
                return False
        if o.get("examine_image_size"):
            if pictures:
                if not self.close(g1[2:], g2[2:]):
                    return False
            elif moved:
                return False
        if o.get("examine_modify_height"):
            if (s1.tag != f"{_P}sp" and s2.tag != f"{_P}sp") or (_is_freeform(s1) and _is_freeform(s2)):
                if not self.close(g1[3:], g2[3:]):
                    return False
            elif moved:
                return False
        return True

    def slide(self, d1: _Deck, d2: _Deck, n1: str, n2: str, index: int) -> bool:
        o = self.o
        if d1.background(n1) != d2.background(n2) and o["examine_background_color"]:
            return False
        if d1.notes(n1).strip() != d2.notes(n2).strip() and o["examine_note"]:
            return False
        x1, x2 = _xml(d1.archive, n1), _xml(d2.archive, n2)
        shapes1, shapes2 = _shapes(x1), _shapes(x2)
        if len(shapes1) != len(shapes2):
            return False
        bullets = _same_bullets(_bullets(x1), _bullets(x2))
        for s1, s2 in zip(shapes1, shapes2):
            if not self.specific(index, s1, s2):
                return False
            texty = s1.tag == f"{_P}sp" and s2.tag == f"{_P}sp"
            both_empty = not (s1.tag == f"{_P}sp" and _frame_text(s1).strip()) and not (
                s2.tag == f"{_P}sp" and _frame_text(s2).strip()
            )
            if o["examine_shape"] and not both_empty and not self.close(_geometry(s1), _geometry(s2)):
                return False
            if s1.tag == f"{_P}graphicFrame" and not self.table(s1, s2):
                return False
            if not texty:
                continue
            if _frame_text(s1).strip() != _frame_text(s2).strip() and o["examine_text"]:
                return False
            ps1, ps2 = _paragraphs(s1), _paragraphs(s2)
            if len(ps1) != len(ps2):
                return False
            if not all(self.paragraphs(p1, p2, bullets) for p1, p2 in zip(ps1, ps2)):
                return False
        return len(_text_shapes(shapes1)) == len(_text_shapes(shapes2))


@metric
def compare_pptx_files(result: Any, expected: Any, **options: Any) -> float:
    if not result or not expected:
        return 0.0
    try:
        d1, d2 = _Deck(result), _Deck(expected)
        if len(d1.slides) != len(d2.slides) and options.get("examine_number_of_slides", True):
            return 0.0
        compare = _Compare(options)
        pairs = zip(d1.slides, d2.slides)
        return float(all(compare.slide(d1, d2, a, b, i) for i, (a, b) in enumerate(pairs, 1)))
    except (OfficeError, KeyError, ValueError, ET.ParseError):
        return 0.0
