"""OSWorld's single-task Writer metrics over DOCX files: fonts, alignment, breaks, footers, tab stops, run formats.

Each reads direct run and paragraph formatting as python-docx reports it
(what OSWorld's versions read): ``w:rPr``/``w:pPr`` of the body's own
paragraphs, an unset property being None.
"""

from __future__ import annotations

import math
import re
from typing import Any
from xml.etree import ElementTree as ET

from evaluators.office import _W, OfficeError, _open, _xml
from evaluators.osworld import metric
from evaluators.osworld_docs import _read, _read_both, compare_docx_files, paragraph_text, read_odt
from evaluators.xlsx import _rels


def _paragraphs(body: ET.Element) -> list[ET.Element]:
    return body.findall(f"{_W}p")


def _runs(p: ET.Element) -> list[ET.Element]:
    """python-docx's ``paragraph.runs``: the paragraph's own ``w:r`` children."""
    return p.findall(f"{_W}r")


def _flag(run: ET.Element, name: str) -> bool | None:
    node = run.find(f"{_W}rPr/{_W}{name}")
    if node is None:
        return None
    return node.get(f"{_W}val", "true") not in ("false", "0", "off")


@metric
def compare_font_names(result: Any, rules: dict[str, Any]) -> float:
    """Every run of the body's paragraphs is set in ``rules["font_name"]``."""
    body = _read(result)
    if body is None:
        return 0.0
    for p in _paragraphs(body):
        for run in _runs(p):
            fonts = run.find(f"{_W}rPr/{_W}rFonts")
            if (fonts.get(f"{_W}ascii") if fonts is not None else None) != rules["font_name"]:
                return 0.0
    return 1.0


@metric
def is_first_line_centered(result: Any) -> float:
    body = _read(result)
    paragraphs = _paragraphs(body) if body is not None else []
    if not paragraphs:
        return 0.0
    jc = paragraphs[0].find(f"{_W}pPr/{_W}jc")
    return float(jc is not None and jc.get(f"{_W}val") == "center")


@metric
def contains_page_break(result: Any, rules: Any = None) -> float:
    """Some page break in the body's runs; exactly ``page_break_count`` when the rules give one."""
    body = _read(result)
    if body is None:
        return 0.0
    count = sum(
        1 for p in _paragraphs(body) for run in _runs(p) for br in run.iter(f"{_W}br") if br.get(f"{_W}type") == "page"
    )
    wanted = rules.get("page_break_count") if isinstance(rules, dict) else None
    return float(count > 0 and (wanted is None or count == wanted))


@metric
def compare_subscript_contains(result: Any, expected: Any) -> float:
    """Some pair of runs, in paired paragraphs, is subscript in both."""
    pair = _read_both(result, expected)
    if pair is None:
        return 0.0
    a, b = pair
    for p1, p2 in zip(_paragraphs(a), _paragraphs(b)):
        for r1, r2 in zip(_runs(p1), _runs(p2)):
            v1, v2 = r1.find(f"{_W}rPr/{_W}vertAlign"), r2.find(f"{_W}rPr/{_W}vertAlign")
            if all(v is not None and v.get(f"{_W}val") == "subscript" for v in (v1, v2)):
                return 1.0
    return 0.0


@metric
def has_page_numbers_in_footers(result: Any) -> float:
    """Every section's footer (its own or the one it inherits) has a digit in its first paragraph."""
    if not result:
        return 0.0
    try:
        with _open(result) as archive:
            body = _xml(archive, "word/document.xml").find(f"{_W}body")
            rels = _rels(archive, "word/document.xml")
            sections = [p.find(f"{_W}pPr/{_W}sectPr") for p in body.findall(f"{_W}p")] if body is not None else []
            sections = [s for s in sections if s is not None] + ([body.find(f"{_W}sectPr")] if body is not None else [])
            footer = None
            for section in sections:
                if section is None:
                    continue
                for ref in section.findall(f"{_W}footerReference"):
                    if ref.get(f"{_W}type", "default") == "default":
                        part = rels.get(ref.get("{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id", ""))  # fmt: skip
                        footer = _xml(archive, part) if part else None
                first = footer.find(f"{_W}p") if footer is not None else None
                if first is None or not any(ch.isdigit() for ch in paragraph_text(first)):
                    return 0.0
            return float(bool(sections))
    except (OfficeError, KeyError, ET.ParseError):
        return 0.0


def _after_same_text(result: Any, expected: Any) -> ET.Element | None:
    """OSWorld's formatting checks first require the same text (``compare_docx_files``)."""
    return _read(result) if compare_docx_files(result, expected) else None


@metric
def check_highlighted_words(result: Any, expected: Any) -> float:
    """Same text, and no span of the ODT result in an automatic style with a yellow (#ffff00) background."""
    if not compare_docx_files(result, expected):
        return 0.0
    content = read_odt(result)
    if content is None:
        return 0.0
    style_ns, fo = "{urn:oasis:names:tc:opendocument:xmlns:style:1.0}", "{urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0}"  # fmt: skip
    yellow = {
        style.get(f"{style_ns}name")
        for style in content.iter(f"{style_ns}style")
        if any(prop.get(f"{fo}background-color") == "#ffff00" for prop in style)
    }
    spans = content.iter("{urn:oasis:names:tc:opendocument:xmlns:text:1.0}span")
    return float(
        not any(span.get("{urn:oasis:names:tc:opendocument:xmlns:text:1.0}style-name") in yellow for span in spans)
    )


@metric
def check_italic_font_size_14(result: Any, expected: Any) -> float:
    """Same text, and every italic run is 14 pt."""
    body = _after_same_text(result, expected)
    if body is None:
        return 0.0
    for p in _paragraphs(body):
        for run in _runs(p):
            size = run.find(f"{_W}rPr/{_W}sz")
            if _flag(run, "i") and (size is None or size.get(f"{_W}val") != "28"):
                return 0.0
    return 1.0


@metric
def evaluate_strike_through_last_paragraph(result: Any, expected: Any) -> float:
    """Same text, and every run of the last paragraph is struck through."""
    body = _after_same_text(result, expected)
    paragraphs = _paragraphs(body) if body is not None else []
    if not paragraphs:
        return 0.0
    return float(all(_flag(run, "strike") for run in _runs(paragraphs[-1])))


@metric
def compare_docx_files_and_ignore_new_lines(result: Any, expected: Any, ignore_blanks: bool = True) -> float:
    """The non-empty paragraphs' texts: equal with runs of whitespace collapsed, or paragraph by paragraph."""
    pair = _read_both(result, expected)
    if pair is None:
        return 0.0
    a, b = pair
    one = [t for t in map(paragraph_text, _paragraphs(a)) if t != ""]
    two = [t for t in map(paragraph_text, _paragraphs(b)) if t != ""]
    if ignore_blanks:
        return float(re.sub(r"\s+", " ", "\n".join(one)).strip() == re.sub(r"\s+", " ", "\n".join(two)).strip())
    return float(one == two)


def _tabs(p: ET.Element) -> list[tuple[str, int]]:
    tabs = []
    for tab in p.findall(f"{_W}pPr/{_W}tabs/{_W}tab"):
        kind, pos = tab.get(f"{_W}val", "left"), int(float(tab.get(f"{_W}pos", "0")))
        if kind != "clear" and not (kind == "left" and pos == 0):
            tabs.append((kind, pos))
    return tabs


@metric
def check_tabstops(result: Any, expected: Any, **options: Any) -> float:
    """Non-empty paragraphs pair up with the same tab stops; each position's offset costs its share of the text width."""
    pair = _read_both(result, expected)
    if pair is None:
        return 0.0
    a, b = pair
    one = [p for p in _paragraphs(a) if paragraph_text(p).strip()]
    two = [p for p in _paragraphs(b) if paragraph_text(p).strip()]
    if len(one) != len(two) or not one:
        return 0.0
    if options.get("word_number_split_by_tabstop") is not None:
        index = options.get("index", 0)
        for p in one:
            parts = paragraph_text(p).split("\t")
            if index >= len(parts) or len(parts[index].split()) != options["word_number_split_by_tabstop"]:
                return 0.0
    section = b.find(f"{_W}sectPr")
    size = section.find(f"{_W}pgSz") if section is not None else None
    margins = section.find(f"{_W}pgMar") if section is not None else None
    if size is None or margins is None:
        return 0.0
    width = int(size.get(f"{_W}w", "0")) - int(margins.get(f"{_W}left", "0")) - int(margins.get(f"{_W}right", "0"))
    minus = 0.0
    for p1, p2 in zip(one, two):
        t1, t2 = _tabs(p1), _tabs(p2)
        if len(t1) != len(t2) or any(x[0] != y[0] for x, y in zip(t1, t2)):
            return 0.0
        minus += sum(abs(x[1] - y[1]) for x, y in zip(t1, t2)) / width
    return 1 - minus / len(one)


def _lab(rgb: tuple[int, int, int]) -> tuple[float, float, float]:
    """sRGB (0-255) to CIE L*a*b* under D65, as scikit-image's ``rgb2lab``."""
    linear = [((c / 255 + 0.055) / 1.055) ** 2.4 if c / 255 > 0.04045 else c / 255 / 12.92 for c in rgb]
    x = (0.412453 * linear[0] + 0.357580 * linear[1] + 0.180423 * linear[2]) / 0.95047
    y = 0.212671 * linear[0] + 0.715160 * linear[1] + 0.072169 * linear[2]
    z = (0.019334 * linear[0] + 0.119193 * linear[1] + 0.950227 * linear[2]) / 1.08883
    f = [t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116 for t in (x, y, z)]
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


def delta_e2000(c1: tuple[float, float, float], c2: tuple[float, float, float]) -> float:
    """CIEDE2000 colour difference of two L*a*b* colours."""
    (l1, a1, b1), (l2, a2, b2) = c1, c2
    cbar = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(cbar**7 / (cbar**7 + 25**7)))
    a1p, a2p = a1 * (1 + g), a2 * (1 + g)
    c1p, c2p = math.hypot(a1p, b1), math.hypot(a2p, b2)
    h1p, h2p = math.degrees(math.atan2(b1, a1p)) % 360, math.degrees(math.atan2(b2, a2p)) % 360
    dl, dc = l2 - l1, c2p - c1p
    dh = 0.0 if c1p * c2p == 0 else (h2p - h1p + 180) % 360 - 180
    dhh = 2 * math.sqrt(c1p * c2p) * math.sin(math.radians(dh / 2))
    lbar, cbarp = (l1 + l2) / 2, (c1p + c2p) / 2
    if c1p * c2p == 0:
        hbar = h1p + h2p
    elif abs(h1p - h2p) <= 180:
        hbar = (h1p + h2p) / 2
    else:
        hbar = (h1p + h2p + 360) / 2 if h1p + h2p < 360 else (h1p + h2p - 360) / 2
    t = (
        1
        - 0.17 * math.cos(math.radians(hbar - 30))
        + 0.24 * math.cos(math.radians(2 * hbar))
        + 0.32 * math.cos(math.radians(3 * hbar + 6))
        - 0.20 * math.cos(math.radians(4 * hbar - 63))
    )
    sl = 1 + 0.015 * (lbar - 50) ** 2 / math.sqrt(20 + (lbar - 50) ** 2)
    sc, sh = 1 + 0.045 * cbarp, 1 + 0.015 * cbarp * t
    rt = (
        -2
        * math.sqrt(cbarp**7 / (cbarp**7 + 25**7))
        * math.sin(math.radians(60 * math.exp(-(((hbar - 275) / 25) ** 2))))
    )
    return math.sqrt((dl / sl) ** 2 + (dc / sc) ** 2 + (dhh / sh) ** 2 + rt * (dc / sc) * (dhh / sh))


@metric
def evaluate_colored_words_in_tables(result: Any, expected: Any, threshold: float = 3.5) -> float:
    """Same text, and in every table a word starting with a vowel is red, any other blue (CIEDE2000 within ``threshold``)."""
    body = _after_same_text(result, expected)
    if body is None:
        return 0.0
    red, blue = _lab((255, 0, 0)), _lab((0, 0, 255))
    for cell_p in (p for tbl in body.iter(f"{_W}tbl") for p in tbl.iter(f"{_W}p")):
        for run in _runs(cell_p):
            word = "".join(t.text or "" for t in run.iter(f"{_W}t"))
            if not word:
                continue
            color = run.find(f"{_W}rPr/{_W}color")
            value = color.get(f"{_W}val", "") if color is not None else ""
            if not re.fullmatch(r"[0-9A-Fa-f]{6}", value):
                return 0.0
            lab = _lab((int(value[:2], 16), int(value[2:4], 16), int(value[4:], 16)))
            if delta_e2000(lab, red if word[0].lower() in "aeiou" else blue) > threshold:
                return 0.0
    return 1.0
