"""Reading Office Open XML files (XLSX, DOCX, PPTX) with the standard library: zip plus XML.

Only what OSWorld's metrics compare: cell values and formulas per sheet,
paragraph texts of a document, texts per slide. Untrusted input: the zip is
read from bytes with a cap on each member's size, and XML entities are not
expanded (ElementTree does not resolve external ones).
"""

from __future__ import annotations

import io
import posixpath
import re
import zipfile
from xml.etree import ElementTree as ET

from evaluators._budget import BoundedZipFile

MAX_MEMBER = 64 * 1024 * 1024
_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_REL = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_PKG_REL = "{http://schemas.openxmlformats.org/package/2006/relationships}"
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"


class OfficeError(ValueError):
    """The file is not a readable Office Open XML file."""


def member(archive: zipfile.ZipFile, name: str) -> bytes:
    """A part's bytes, refused above ``MAX_MEMBER`` (the size the zip declares; zipfile checks it while reading)."""
    try:
        info = archive.getinfo(name)
    except KeyError:
        raise OfficeError(f"no {name} in the file") from None
    if info.file_size > MAX_MEMBER:
        raise OfficeError(f"{name} is too large")
    return archive.read(info)


def _xml(archive: zipfile.ZipFile, name: str) -> ET.Element:
    return ET.fromstring(member(archive, name))


def _open(data: bytes) -> zipfile.ZipFile:
    try:
        return BoundedZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise OfficeError("not a zip file (an Office Open XML file is one)") from None


def _number(text: str) -> float | int:
    value = float(text)
    return int(value) if value.is_integer() and "e" not in text.lower() and "." not in text else value


def read_xlsx(data: bytes) -> list[tuple[str, dict[str, object], dict[str, str]]]:
    """Sheets in workbook order: ``(name, {cell: value}, {cell: formula})``; empty cells are absent."""
    with _open(data) as archive:
        shared = []
        if "xl/sharedStrings.xml" in archive.namelist():
            for si in _xml(archive, "xl/sharedStrings.xml").iter(f"{_MAIN}si"):
                shared.append("".join(t.text or "" for t in si.iter(f"{_MAIN}t")))
        rels = {
            r.get("Id"): r.get("Target", "")
            for r in _xml(archive, "xl/_rels/workbook.xml.rels").iter(f"{_PKG_REL}Relationship")
        }
        sheets = []
        for sheet in _xml(archive, "xl/workbook.xml").iter(f"{_MAIN}sheet"):
            target = rels.get(sheet.get(f"{_REL}id"), "")
            path = target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join("xl", target))
            values, formulas = _cells(_xml(archive, path), shared)
            sheets.append((sheet.get("name", ""), values, formulas))
        return sheets


def _cells(root: ET.Element, shared: list[str]) -> tuple[dict[str, object], dict[str, str]]:
    values: dict[str, object] = {}
    formulas: dict[str, str] = {}
    for cell in root.iter(f"{_MAIN}c"):
        ref, kind = cell.get("r", ""), cell.get("t", "n")
        formula, raw = cell.find(f"{_MAIN}f"), cell.find(f"{_MAIN}v")
        if formula is not None and formula.text:
            formulas[ref] = "=" + formula.text
        if kind == "inlineStr":
            values[ref] = "".join(t.text or "" for t in cell.iter(f"{_MAIN}t"))
        elif raw is None or raw.text is None:
            continue
        elif kind == "s":
            values[ref] = shared[int(raw.text)]
        elif kind == "b":
            values[ref] = raw.text == "1"
        elif kind in ("str", "e"):
            values[ref] = raw.text
        else:
            values[ref] = _number(raw.text)
    return values, formulas


def read_docx(data: bytes) -> list[str]:
    """The document body's paragraph texts, in order."""
    with _open(data) as archive:
        body = _xml(archive, "word/document.xml")
    return ["".join(t.text or "" for t in p.iter(f"{_W}t")) for p in body.iter(f"{_W}p")]


def read_pptx(data: bytes) -> list[list[str]]:
    """Per slide, in presentation order, the texts of its paragraphs."""
    with _open(data) as archive:
        names = [n for n in archive.namelist() if re.fullmatch(r"ppt/slides/slide\d+\.xml", n)]
        order = _slide_order(archive) or sorted(names, key=lambda n: int(re.findall(r"\d+", n)[-1]))
        slides = []
        for name in order:
            root = _xml(archive, name)
            slides.append(["".join(t.text or "" for t in p.iter(f"{_A}t")) for p in root.iter(f"{_A}p")])
        return slides


def _slide_order(archive: zipfile.ZipFile) -> list[str]:
    try:
        pres = _xml(archive, "ppt/presentation.xml")
        rels = _xml(archive, "ppt/_rels/presentation.xml.rels")
    except OfficeError:
        return []
    targets = {r.get("Id"): r.get("Target", "") for r in rels.iter(f"{_PKG_REL}Relationship")}
    pml = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
    return [
        posixpath.normpath(posixpath.join("ppt", targets.get(s.get(f"{_REL}id"), ""))) for s in pres.iter(f"{pml}sldId")
    ]
