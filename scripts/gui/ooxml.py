"""The gui tasks' Office files (XLSX, DOCX, PPTX), written with the standard library.

The XLSX writer is the smallest file LibreOffice and our reader accept: one
sheet, inline strings, numbers, and formulas without cached values. The
PPTX writer gives each slide a title and a body placeholder on one
"Title and Text" layout; the Impress tasks compare text and slide order only,
since what Impress writes on save differs from it in every box's geometry and
fonts. Every part has a fixed date, so that regenerating a file changes no byte.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from xml.sax.saxutils import escape

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


def _write_package(path: Path, parts: list[tuple[str, str]]) -> None:
    """The parts zipped with fixed times, so a rerun changes no byte."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in parts:
            z.writestr(zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0)), data)


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
    _write_package(
        path,
        [
            ("[Content_Types].xml", _CONTENT_TYPES),
            ("_rels/.rels", _RELS),
            ("xl/workbook.xml", _WORKBOOK.format(name=sheet)),
            ("xl/_rels/workbook.xml.rels", _WORKBOOK_RELS),
            ("xl/worksheets/sheet1.xml", xml),
        ],
    )


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
    _write_package(
        path, [("[Content_Types].xml", _DOCX_TYPES), ("_rels/.rels", _DOCX_RELS), ("word/document.xml", xml)]
    )


_PML = "http://schemas.openxmlformats.org/presentationml/2006/main"
_DML = "http://schemas.openxmlformats.org/drawingml/2006/main"
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG = "http://schemas.openxmlformats.org/package/2006/relationships"
_NS = f'xmlns:a="{_DML}" xmlns:r="{_REL}" xmlns:p="{_PML}"'
_HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
_RT = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
_CT = "application/vnd.openxmlformats-officedocument.presentationml."
# Where the two placeholders sit on a 4:3 slide (EMU): the title at the top, the body below it.
_TITLE_BOX = (457200, 274638, 8229600, 1143000)
_BODY_BOX = (457200, 1600200, 8229600, 4525963)


def _rels(*targets: tuple[str, str]) -> str:
    items = "".join(
        f'<Relationship Id="rId{i}" Type="{_RT}{kind}" Target="{target}"/>'
        for i, (kind, target) in enumerate(targets, 1)
    )
    return f'{_HEAD}<Relationships xmlns="{_PKG}">{items}</Relationships>'


def _box(box: tuple[int, int, int, int]) -> str:
    x, y, cx, cy = box
    return f'<a:xfrm><a:off x="{x}" y="{y}"/><a:ext cx="{cx}" cy="{cy}"/></a:xfrm>'


_EMPTY_PARAGRAPH = '<a:p><a:endParaRPr lang="en-US"/></a:p>'


def _placeholder(shape_id: int, name: str, ph: str, paragraphs: list[str], box: str = "") -> str:
    """A title (``ph`` 'type="title"') or body (``ph`` 'idx="1"') placeholder; no paragraphs is an empty one."""
    paras = "".join(f'<a:p><a:r><a:rPr lang="en-US"/><a:t>{escape(p)}</a:t></a:r></a:p>' for p in paragraphs)
    return (
        f'<p:sp><p:nvSpPr><p:cNvPr id="{shape_id}" name="{name}"/><p:cNvSpPr><a:spLocks noGrp="1"/></p:cNvSpPr>'
        f"<p:nvPr><p:ph {ph}/></p:nvPr></p:nvSpPr><p:spPr>{box}</p:spPr>"
        f"<p:txBody><a:bodyPr/><a:lstStyle/>{paras or _EMPTY_PARAGRAPH}</p:txBody></p:sp>"
    )


def _tree(shapes: str) -> str:
    return (
        '<p:cSld><p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr>'
        '<p:grpSpPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="0" cy="0"/><a:chOff x="0" y="0"/><a:chExt cx="0" cy="0"/>'
        f"</a:xfrm></p:grpSpPr>{shapes}</p:spTree></p:cSld>"
    )


def _two_placeholders(title: list[str], body: list[str], boxes: bool) -> str:
    return _tree(
        _placeholder(2, "Title 1", 'type="title"', title, _box(_TITLE_BOX) if boxes else "")
        + _placeholder(3, "Content 2", 'idx="1"', body, _box(_BODY_BOX) if boxes else "")
    )


_MASTER_COLORS = (
    '<p:clrMap bg1="lt1" tx1="dk1" bg2="lt2" tx2="dk2" accent1="accent1" accent2="accent2" accent3="accent3" '
    'accent4="accent4" accent5="accent5" accent6="accent6" hlink="hlink" folHlink="folHlink"/>'
)


def _theme() -> str:
    colors = "".join(
        f'<a:{name}><a:srgbClr val="{rgb}"/></a:{name}>'
        for name, rgb in (
            ("dk1", "000000"), ("lt1", "FFFFFF"), ("dk2", "1F497D"), ("lt2", "EEECE1"), ("accent1", "4F81BD"),
            ("accent2", "C0504D"), ("accent3", "9BBB59"), ("accent4", "8064A2"), ("accent5", "4BACC6"),
            ("accent6", "F79646"), ("hlink", "0000FF"), ("folHlink", "800080"),
        )
    )  # fmt: skip
    fill = '<a:solidFill><a:schemeClr val="phClr"/></a:solidFill>'
    line = f'<a:ln w="9525">{fill}</a:ln>'
    fonts = '<a:latin typeface="DejaVu Sans"/><a:ea typeface=""/><a:cs typeface=""/>'
    return (
        f'{_HEAD}<a:theme xmlns:a="{_DML}" name="Plain"><a:themeElements><a:clrScheme name="Plain">{colors}</a:clrScheme>'
        f'<a:fontScheme name="Plain"><a:majorFont>{fonts}</a:majorFont><a:minorFont>{fonts}</a:minorFont></a:fontScheme>'
        f'<a:fmtScheme name="Plain"><a:fillStyleLst>{fill * 3}</a:fillStyleLst><a:lnStyleLst>{line * 3}</a:lnStyleLst>'
        f"<a:effectStyleLst>{'<a:effectStyle><a:effectLst/></a:effectStyle>' * 3}</a:effectStyleLst>"
        f"<a:bgFillStyleLst>{fill * 3}</a:bgFillStyleLst></a:fmtScheme></a:themeElements></a:theme>"
    )


def write_pptx(path: Path, slides: list[tuple[str, list[str]]]) -> None:
    """The smallest deck Impress opens as a real presentation: one theme, one master, one
    "Title and Text" layout, and per slide a title placeholder and a body placeholder
    (its paragraphs; none leaves it empty)."""
    n = len(slides)
    types = "".join(
        f'<Override PartName="/ppt/slides/slide{i}.xml" ContentType="{_CT}slide+xml"/>' for i in range(1, n + 1)
    )
    content_types = (
        f'{_HEAD}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        f'<Override PartName="/ppt/presentation.xml" ContentType="{_CT}presentation.main+xml"/>'
        f'<Override PartName="/ppt/slideMasters/slideMaster1.xml" ContentType="{_CT}slideMaster+xml"/>'
        f'<Override PartName="/ppt/slideLayouts/slideLayout1.xml" ContentType="{_CT}slideLayout+xml"/>'
        '<Override PartName="/ppt/theme/theme1.xml" ContentType="application/vnd.openxmlformats-officedocument.theme+xml"/>'
        f"{types}</Types>"
    )
    slide_ids = "".join(f'<p:sldId id="{255 + i}" r:id="rId{i + 1}"/>' for i in range(1, n + 1))
    presentation = (
        f'{_HEAD}<p:presentation {_NS}><p:sldMasterIdLst><p:sldMasterId id="2147483648" r:id="rId1"/></p:sldMasterIdLst>'
        f'<p:sldIdLst>{slide_ids}</p:sldIdLst><p:sldSz cx="9144000" cy="6858000" type="screen4x3"/>'
        '<p:notesSz cx="6858000" cy="9144000"/></p:presentation>'
    )
    master = (
        f"{_HEAD}<p:sldMaster {_NS}>{_two_placeholders([], [], boxes=True)}{_MASTER_COLORS}"
        '<p:sldLayoutIdLst><p:sldLayoutId id="2147483649" r:id="rId1"/></p:sldLayoutIdLst></p:sldMaster>'
    )
    # "tx", not "obj": Impress reads "obj" as Title, Object, and its new slides then get an OLE box, not a text box.
    layout = (
        f'{_HEAD}<p:sldLayout {_NS} type="tx" preserve="1">{_two_placeholders([], [], boxes=False)}'
        "<p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:sldLayout>"
    )
    parts = [
        ("[Content_Types].xml", content_types),
        ("_rels/.rels", _rels(("officeDocument", "ppt/presentation.xml"))),
        ("ppt/presentation.xml", presentation),
        (
            "ppt/_rels/presentation.xml.rels",
            _rels(
                ("slideMaster", "slideMasters/slideMaster1.xml"),
                *(("slide", f"slides/slide{i}.xml") for i in range(1, n + 1)),
                ("theme", "theme/theme1.xml"),
            ),
        ),
        ("ppt/slideMasters/slideMaster1.xml", master),
        (
            "ppt/slideMasters/_rels/slideMaster1.xml.rels",
            _rels(("slideLayout", "../slideLayouts/slideLayout1.xml"), ("theme", "../theme/theme1.xml")),
        ),
        ("ppt/slideLayouts/slideLayout1.xml", layout),
        ("ppt/slideLayouts/_rels/slideLayout1.xml.rels", _rels(("slideMaster", "../slideMasters/slideMaster1.xml"))),
        ("ppt/theme/theme1.xml", _theme()),
    ]
    for i, (title, body) in enumerate(slides, 1):
        xml = (
            f"{_HEAD}<p:sld {_NS}>{_two_placeholders([title] if title else [], body, boxes=False)}"
            "<p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:sld>"
        )
        parts.append((f"ppt/slides/slide{i}.xml", xml))
        parts.append(
            (f"ppt/slides/_rels/slide{i}.xml.rels", _rels(("slideLayout", "../slideLayouts/slideLayout1.xml")))
        )
    _write_package(path, parts)
