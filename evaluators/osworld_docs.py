"""OSWorld's Writer metrics over DOCX files: ``compare_docx_files`` with its options, line spacing, tables.

Paragraphs are the body's own (``w:body/w:p``, not those inside tables), as
python-docx's ``Document.paragraphs`` that OSWorld uses; a paragraph's text
counts tabs and breaks. ``fuzzy_match`` and ``content_only`` score with a
similarity ratio in [0, 1] as OSWorld's ``fuzz.ratio / 100``.
``fuzzy_place_math`` counts words, so it reads paragraphs exactly as
python-docx does and scores with the exact ratio (``indel_ratio``).
``compare_docx_images`` compares the images' pixels as Pillow decodes them
(``png``).
"""

from __future__ import annotations

import posixpath
import re
from typing import Any
from xml.etree import ElementTree as ET

from evaluators import png
from evaluators._budget import COMPARE_WEIGHT, sequence_ratio, spend
from evaluators.office import _PKG_REL, _W, OfficeError, _open, _xml, member
from evaluators.osworld import metric


def _body(data: bytes) -> ET.Element:
    with _open(data) as archive:
        root = _xml(archive, "word/document.xml")
    body = root.find(f"{_W}body")
    if body is None:
        raise OfficeError("a document without a body")
    return body


def paragraph_text(p: ET.Element) -> str:
    """The text of the paragraph's runs, tabs and breaks included (not its properties: ``w:tabs`` holds ``w:tab`` too)."""
    out = []
    nodes = (node for child in p if child.tag != f"{_W}pPr" for node in child.iter())
    for node in nodes:
        if node.tag == f"{_W}t":
            out.append(node.text or "")
        elif node.tag == f"{_W}tab":
            out.append("\t")
        elif node.tag in (f"{_W}br", f"{_W}cr"):
            out.append("\n")
    return "".join(out)


def _ratio(a: str, b: str) -> float:
    return sequence_ratio(a, b, autojunk=False)


def _read(data: Any) -> ET.Element | None:
    if not data:
        return None
    try:
        return _body(data)
    except (OfficeError, KeyError, ET.ParseError):
        return None


def _read_both(result: Any, expected: Any) -> tuple[ET.Element, ET.Element] | None:
    """Both documents' bodies, or None when either is missing or unreadable (the metric's 0)."""
    a, b = _read(result), _read(expected)
    return (a, b) if a is not None and b is not None else None


_ODF_TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"


def read_odt(data: Any) -> ET.Element | None:
    """An ODT's ``content.xml`` root, or None when the data is not an OpenDocument text."""
    if not data:
        return None
    try:
        with _open(data) as archive:
            if archive.read("mimetype").strip() != b"application/vnd.oasis.opendocument.text":
                return None
            return _xml(archive, "content.xml")
    except (OfficeError, KeyError, ET.ParseError):
        return None


def _odt_paragraph(p: ET.Element) -> str:
    """odfpy's reading in OSWorld: the paragraph's own text and its spans' own text, nothing deeper."""
    parts = [p.text or ""]
    for child in p:
        if child.tag == f"{_ODF_TEXT}span":
            parts += [child.text or "", *(grandchild.tail or "" for grandchild in child)]
        parts.append(child.tail or "")
    return "".join(parts)


def _texts(data: Any) -> tuple[str, list[str]] | None:
    """("docx", body paragraphs) or ("odt", every ``text:p``), as OSWorld reads each kind."""
    body = _read(data)
    if body is not None:
        return "docx", [paragraph_text(p) for p in body.findall(f"{_W}p")]
    odt = read_odt(data)
    return ("odt", [_odt_paragraph(p) for p in odt.iter(f"{_ODF_TEXT}p")]) if odt is not None else None


@metric
def compare_docx_files(result: Any, expected: Any, **options: Any) -> float:
    """OSWorld's options: ``ignore_blanks`` (default on), ``ignore_case``, ``ignore_order``, ``content_only``, ``fuzzy_match``, ``delete_empty_lines``.

    Both DOCX or both ODT (upstream's two readers); a mix scores 0.
    """
    a, b = _texts(result), _texts(expected)
    if a is None or b is None or a[0] != b[0]:
        return 0.0
    one, two = a[1], b[1]
    if options.get("ignore_order"):
        one, two = sorted(one), sorted(two)
    if options.get("delete_empty_lines"):
        one, two = [p for p in one if p.strip()], [p for p in two if p.strip()]
    ignore_case = options.get("ignore_case", False)
    if options.get("content_only") or options.get("ignore_blanks", True):
        text1 = re.sub(r"\s+", " ", "\n".join(one)).strip()
        text2 = re.sub(r"\s+", " ", "\n".join(two)).strip()
        if ignore_case:
            text1, text2 = text1.lower(), text2.lower()
        if options.get("content_only") or options.get("fuzzy_match"):
            return _ratio(text1, text2)
        return float(text1 == text2)
    if len(one) != len(two):
        return 0.0
    if ignore_case:
        one, two = [p.lower() for p in one], [p.lower() for p in two]
    if options.get("fuzzy_match"):
        return sum(_ratio(x, y) for x, y in zip(one, two)) / len(one) if one else 1.0
    return float(one == two)


def _spacing(p: ET.Element) -> tuple[str, float] | None:
    """python-docx's ``line_spacing``: a multiple (``auto`` rule, line/240) or a length in twips; None unset."""
    spacing = p.find(f"{_W}pPr/{_W}spacing")
    line = spacing.get(f"{_W}line") if spacing is not None else None
    if line is None:
        return None
    rule = spacing.get(f"{_W}lineRule", "auto")  # type: ignore[union-attr]
    return ("multiple", float(line) / 240) if rule == "auto" else ("length", float(line))


@metric
def compare_line_spacing(result: Any, expected: Any, **options: Any) -> float:
    """Same text (``compare_docx_files`` defaults), then each body paragraph's line spacing equal."""
    pair = _read_both(result, expected)
    if pair is None or not compare_docx_files(result, expected):
        return 0.0
    one, two = pair[0].findall(f"{_W}p"), pair[1].findall(f"{_W}p")
    return float(len(one) == len(two) and all(_spacing(x) == _spacing(y) for x, y in zip(one, two)))


def table_grid(table: ET.Element) -> list[list[str]]:
    """A table as rows of cell texts over its grid: a span repeats its cell, a vertical merge the cell above."""
    width = len(table.findall(f"{_W}tblGrid/{_W}gridCol"))
    rows: list[list[str]] = []
    for tr in table.findall(f"{_W}tr"):
        row: list[str] = []
        for tc in tr.findall(f"{_W}tc"):
            span = tc.find(f"{_W}tcPr/{_W}gridSpan")
            merge = tc.find(f"{_W}tcPr/{_W}vMerge")
            text = "\n".join(paragraph_text(p) for p in tc.findall(f"{_W}p"))
            col = len(row)
            if merge is not None and merge.get(f"{_W}val", "continue") == "continue" and rows and col < len(rows[-1]):
                text = rows[-1][col]
            row += [text] * int(span.get(f"{_W}val", "1") if span is not None else 1)
        rows.append(row + [""] * (max(width, len(row)) - len(row)))
    return rows


@metric
def compare_docx_tables(result: Any, expected: Any, **options: Any) -> float:
    """The same number of body tables, each with the same shape and the same stripped cell texts."""
    pair = _read_both(result, expected)
    if pair is None:
        return 0.0
    a, b = pair
    one, two = a.findall(f"{_W}tbl"), b.findall(f"{_W}tbl")
    if len(one) != len(two):
        return 0.0
    for x, y in zip(one, two):
        gx, gy = table_grid(x), table_grid(y)
        if [len(r) for r in gx] != [len(r) for r in gy]:
            return 0.0
        if [[c.strip() for c in r] for r in gx] != [[c.strip() for c in r] for r in gy]:
            return 0.0
    return 1.0


def _run_text(run: ET.Element) -> str:
    """python-docx's ``Run.text``: its own ``w:t``, tabs, carriage returns, line (not page) breaks, hard hyphens."""
    out = []
    for node in run:
        if node.tag == f"{_W}t":
            out.append(node.text or "")
        elif node.tag in (f"{_W}tab", f"{_W}ptab"):
            out.append("\t")
        elif node.tag == f"{_W}cr" or node.tag == f"{_W}br" and node.get(f"{_W}type", "textWrapping") == "textWrapping":
            out.append("\n")
        elif node.tag == f"{_W}noBreakHyphen":
            out.append("-")
    return "".join(out)


def python_docx_text(p: ET.Element) -> str:
    """python-docx 1.x's ``Paragraph.text``: the paragraph's own runs and its hyperlinks' runs, nothing deeper.

    Stricter than ``paragraph_text``: a metric that counts words must split where upstream does
    (a page break joins words there; runs in tracked insertions or content controls are not read).
    """
    out = []
    for child in p:
        if child.tag == f"{_W}r":
            out.append(_run_text(child))
        elif child.tag == f"{_W}hyperlink":
            out += [_run_text(r) for r in child if r.tag == f"{_W}r"]
    return "".join(out)


def indel_ratio(a: str, b: str) -> float:
    """rapidfuzz's ``fuzz.ratio`` / 100 exactly: 2 * LCS / (len a + len b), 1 for two empty strings.

    ``difflib`` (``_ratio``) only approximates it; the LCS here is Hyyrö's bit-parallel one, the
    shorter string as the bit vector.
    """
    if not a and not b:
        return 1.0
    spend(COMPARE_WEIGHT * (len(a) + len(b)), "text compared")
    if len(a) < len(b):
        a, b = b, a
    masks: dict[str, int] = {}
    for i, ch in enumerate(b):
        masks[ch] = masks.get(ch, 0) | 1 << i
    full = (1 << len(b)) - 1
    v = full
    for ch in a:
        u = v & masks.get(ch, 0)
        v = ((v + u) | (v - u)) & full
    lcs = len(b) - bin(v).count("1")
    return 2 * lcs / (len(a) + len(b))


@metric
def fuzzy_place_math(result: Any, rules: dict[str, Any]) -> float:
    """Exactly three whitespace-separated words in the body's paragraphs, each scored by its best
    ``fuzz.ratio`` against the expected addresses; the mean of the three (upstream's, word count included)."""
    body = _read(result)
    if body is None:
        return 0.0
    words = [w for p in body.findall(f"{_W}p") for w in python_docx_text(p).split()]
    if len(words) != 3:
        return 0.0
    return sum(max((indel_ratio(w, ans) for ans in rules["expected"]), default=0.0) for w in words) / 3


def _images(data: Any) -> list[bytes] | None:
    """The document part's image relationships' targets, in the ``.rels`` order python-docx keeps; None unreadable."""
    if not data:
        return None
    try:
        with _open(data) as archive:
            images = []
            for rel in _xml(archive, "word/_rels/document.xml.rels").iter(f"{_PKG_REL}Relationship"):
                if "image" not in rel.get("Type", ""):
                    continue
                if rel.get("TargetMode") == "External":
                    return None  # python-docx has no part to read there: upstream's metric fails
                target = rel.get("Target", "")
                name = target.lstrip("/") if target.startswith("/") else posixpath.normpath(f"word/{target}")
                images.append(member(archive, name))
            return images
    except (OfficeError, KeyError, ET.ParseError):
        return None


def _same_pixels(a: bytes, b: bytes) -> bool:
    """Pillow's ``tobytes()`` of both are equal: the same file, or two PNGs decoding to the same bytes."""
    if a == b:
        return True
    try:
        return png.decode(a)[3] == png.decode(b)[3]
    except png.PngError:
        return False  # two different files of a format only Pillow decodes


@metric
def compare_docx_images(result: Any, expected: Any) -> float:
    """As many images in both documents, pairwise in relationship order of the same pixel bytes (not size or mode,
    as upstream compares ``tobytes()`` only)."""
    a, b = _images(result), _images(expected)
    if a is None or b is None or len(a) != len(b):
        return 0.0
    return float(all(_same_pixels(x, y) for x, y in zip(a, b)))
