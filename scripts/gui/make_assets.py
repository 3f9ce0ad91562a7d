"""Generate the gui tasks' assets (inputs and expected files) with the standard library.

Run from the repository root: ``python3 scripts/gui/make_assets.py``. The
XLSX writer is the smallest file LibreOffice and our reader accept: one
sheet, inline strings, numbers, and formulas without cached values.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from xml.sax.saxutils import escape

ROOT = Path(__file__).resolve().parents[2] / "tasks" / "gui"
_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
    '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
    "</Types>"
)
_RELS = (
    '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/>'
    "</Relationships>"
)
_WORKBOOK = (
    '<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets>'
    '<sheet name="{name}" sheetId="1" r:id="rId1"/></sheets></workbook>'
)
_WORKBOOK_RELS = (
    '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/>'
    "</Relationships>"
)


def _cell(ref: str, value: object) -> str:
    if isinstance(value, str) and value.startswith("="):
        return f'<c r="{ref}"><f>{escape(value[1:])}</f></c>'
    if isinstance(value, str):
        return f'<c r="{ref}" t="inlineStr"><is><t>{escape(value)}</t></is></c>'
    return f'<c r="{ref}"><v>{value}</v></c>'


def write_xlsx(path: Path, rows: list[list[object]], sheet: str = "Sheet1") -> None:
    body = []
    for r, row in enumerate(rows, 1):
        cells = "".join(_cell(f"{chr(65 + c)}{r}", v) for c, v in enumerate(row) if v is not None)
        body.append(f'<row r="{r}">{cells}</row>')
    xml = (
        '<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
        f"<sheetData>{''.join(body)}</sheetData></worksheet>"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in (
            ("[Content_Types].xml", _CONTENT_TYPES),
            ("_rels/.rels", _RELS),
            ("xl/workbook.xml", _WORKBOOK.format(name=sheet)),
            ("xl/_rels/workbook.xml.rels", _WORKBOOK_RELS),
            ("xl/worksheets/sheet1.xml", xml),
        ):
            z.writestr(zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0)), data)


_DOCX_TYPES = (
    '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>'
    "</Types>"
)
_DOCX_RELS = (
    '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>'
    "</Relationships>"
)


def write_docx(path: Path, paragraphs: list[str]) -> None:
    """The smallest DOCX Writer opens: one body of plain paragraphs."""
    body = "".join(f'<w:p><w:r><w:t xml:space="preserve">{escape(p)}</w:t></w:r></w:p>' for p in paragraphs)
    xml = (
        '<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
        f"<w:body>{body}</w:body></w:document>"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in (
            ("[Content_Types].xml", _DOCX_TYPES),
            ("_rels/.rels", _DOCX_RELS),
            ("word/document.xml", xml),
        ):
            z.writestr(zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0)), data)


def main() -> None:
    todo = ROOT / "mousepad-append-line" / "assets"
    todo.mkdir(parents=True, exist_ok=True)
    (todo / "todo.txt").write_text("buy milk\ncall bob\n")
    (todo / "todo_gold.txt").write_text("buy milk\ncall bob\nfix <div> & <span> tags\n")
    items = [["Item", "Cost"], ["Rent", 55], ["Food", 25], ["Bus", 12], ["Phone", 8], ["Total", None]]
    write_xlsx(ROOT / "calc-sum-total" / "assets" / "budget.xlsx", items, sheet="Budget")
    orders = [["Item", "Qty", "Price", "Total"], ["Pens", 3, 2], ["Paper", 2, 5], ["Ink", 4, 7]]
    write_xlsx(ROOT / "calc-line-totals" / "assets" / "orders.xlsx", orders, sheet="Orders")
    downloads = ROOT / "terminal-organize-downloads" / "assets"
    downloads.mkdir(parents=True, exist_ok=True)
    (downloads / "q1.csv").write_text("month,sales\njan,10\n")
    (downloads / "q2.csv").write_text("month,sales\napr,12\n")
    (downloads / "notes.txt").write_text("keep me here\n")
    listing = ROOT / "multi-terminal-editor-list" / "assets"
    listing.mkdir(parents=True, exist_ok=True)
    for name in ("a.png", "b.png", "c.txt"):
        (listing / name).write_text(f"{name}\n")
    (listing / "files_gold.txt").write_text("a.png\nb.png\nc.txt\nchecked\n")
    memo = ["Quarterly memo", "Sales grew in every region.", "Costs stayed flat."]
    write_docx(ROOT / "writer-append-paragraph" / "assets" / "memo.docx", memo)
    write_docx(ROOT / "writer-append-paragraph" / "assets" / "memo_gold.docx", [*memo, "Approved by the board."])


if __name__ == "__main__":
    main()
