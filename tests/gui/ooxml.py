"""Office Open XML files built part by part for the metric tests: a zip of the parts the readers open."""

from __future__ import annotations

import io
import zipfile
import zlib

S = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
PR = "http://schemas.openxmlformats.org/package/2006/relationships"
W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
P = "http://schemas.openxmlformats.org/presentationml/2006/main"
C = "http://schemas.openxmlformats.org/drawingml/2006/chart"


def zipped(parts: dict[str, str | bytes]) -> bytes:
    """A zip of the parts, XML text or binary (images, media) alike."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in parts.items():
            z.writestr(name, data)
    return buf.getvalue()


def rels(targets: dict[str, str]) -> str:
    body = "".join(f'<Relationship Id="{i}" Type="x" Target="{t}"/>' for i, t in targets.items())
    return f'<Relationships xmlns="{PR}">{body}</Relationships>'


def xlsx(
    sheets: dict[str, str],
    *,
    styles: str = "",
    extra: dict[str, str] | None = None,
    sheet_rels: dict[int, str] | None = None,
) -> bytes:
    """``sheets``: name -> the worksheet's inner XML (after ``<worksheet>``); ``extra`` more parts as they are."""
    names = list(sheets)
    book = "".join(f'<sheet name="{n}" sheetId="{i + 1}" r:id="rId{i + 1}"/>' for i, n in enumerate(names))
    parts = {
        "xl/workbook.xml": f'<workbook xmlns="{S}" xmlns:r="{R}"><sheets>{book}</sheets></workbook>',
        "xl/_rels/workbook.xml.rels": rels({f"rId{i + 1}": f"worksheets/sheet{i + 1}.xml" for i in range(len(names))}),
    }
    for i, name in enumerate(names):
        parts[f"xl/worksheets/sheet{i + 1}.xml"] = f'<worksheet xmlns="{S}" xmlns:r="{R}">{sheets[name]}</worksheet>'
    for i, text in (sheet_rels or {}).items():
        parts[f"xl/worksheets/_rels/sheet{i}.xml.rels"] = text
    if styles:
        parts["xl/styles.xml"] = f'<styleSheet xmlns="{S}">{styles}</styleSheet>'
    return zipped({**parts, **(extra or {})})


def docx(body: str) -> bytes:
    return zipped({"word/document.xml": f'<w:document xmlns:w="{W}"><w:body>{body}</w:body></w:document>'})


def para(text: str, *, spacing: str = "") -> str:
    ppr = f"<w:pPr>{spacing}</w:pPr>" if spacing else ""
    return f'<w:p>{ppr}<w:r><w:t xml:space="preserve">{text}</w:t></w:r></w:p>'


def table(rows: list[list[str]]) -> str:
    grid = "".join("<w:gridCol/>" for _ in rows[0])
    body = "".join("<w:tr>" + "".join(f"<w:tc>{para(c)}</w:tc>" for c in r) + "</w:tr>" for r in rows)
    return f"<w:tbl><w:tblGrid>{grid}</w:tblGrid>{body}</w:tbl>"


def run(text: str, **attrs: str) -> str:
    rpr = " ".join(f'{k}="{v}"' for k, v in attrs.items() if k != "color")
    fill = f'<a:solidFill><a:srgbClr val="{attrs["color"]}"/></a:solidFill>' if "color" in attrs else ""
    return f"<a:r><a:rPr {rpr}>{fill}</a:rPr><a:t>{text}</a:t></a:r>"


def shape(paragraphs: list[str], *, x: int = 100, y: int = 100, cx: int = 5000, cy: int = 2000, algn: str = "") -> str:
    ppr = f'<a:pPr algn="{algn}"/>' if algn else ""
    body = "".join(f"<a:p>{ppr}{p}</a:p>" for p in paragraphs)
    xfrm = f'<a:xfrm><a:off x="{x}" y="{y}"/><a:ext cx="{cx}" cy="{cy}"/></a:xfrm>'
    return f"<p:sp><p:spPr>{xfrm}</p:spPr><p:txBody>{body}</p:txBody></p:sp>"


def pptx(slides: list[list[str]], background: str = "") -> bytes:
    """Each slide a list of shapes (``shape(...)``); ``background`` a solid colour for every slide."""
    ids = "".join(f'<p:sldId id="{256 + i}" r:id="rId{i + 1}"/>' for i in range(len(slides)))
    parts = {
        "ppt/presentation.xml": f'<p:presentation xmlns:p="{P}" xmlns:r="{R}"><p:sldIdLst>{ids}</p:sldIdLst></p:presentation>',
        "ppt/_rels/presentation.xml.rels": rels(
            {f"rId{i + 1}": f"slides/slide{i + 1}.xml" for i in range(len(slides))}
        ),
    }
    for i, shapes in enumerate(slides):
        tree = "".join(shapes)
        bg = f'<p:bg><p:bgPr><a:solidFill><a:srgbClr val="{background}"/></a:solidFill></p:bgPr></p:bg>' if background else ""  # fmt: skip
        parts[f"ppt/slides/slide{i + 1}.xml"] = (
            f'<p:sld xmlns:p="{P}" xmlns:a="{A}" xmlns:r="{R}"><p:cSld>{bg}<p:spTree>{tree}</p:spTree></p:cSld></p:sld>'
        )
    return zipped(parts)


def pdf(pages: list[list[str]]) -> bytes:
    """A PDF whose pages show lines in a font with 2-byte codes mapped back by its ToUnicode CMap (code = ord)."""
    chars = sorted({c for page in pages for line in page for c in line})
    cmap = "".join(f"<{ord(c):04X}> <{ord(c):04X}>\n" for c in chars)
    cmap_stream = f"begincmap\n1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n{len(chars)} beginbfchar\n{cmap}endbfchar\nendcmap"  # fmt: skip
    objects = {
        1: "<< /Type /Catalog /Pages 2 0 R >>",
        3: "<< /Type /Font /Subtype /Type0 /BaseFont /F /ToUnicode 4 0 R >>",
    }
    streams = {4: cmap_stream.encode()}
    kids = []
    for i, page in enumerate(pages):
        num = 10 + 2 * i
        kids.append(f"{num} 0 R")
        objects[num] = f"<< /Type /Page /Parent 2 0 R /Contents {num + 1} 0 R >>"
        shown = "".join(f"<{''.join(f'{ord(c):04X}' for c in line)}> Tj 0 -14 Td " for line in page)
        streams[num + 1] = zlib.compress(f"BT /F1 12 Tf 72 720 Td {shown}ET".encode())
    objects[2] = (
        f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(pages)} /Resources << /Font << /F1 3 0 R >> >> >>"
    )
    out = [b"%PDF-1.4\n"]
    for num in sorted({*objects, *streams}):
        if num in streams:
            data = streams[num]
            flate = " /Filter /FlateDecode" if num != 4 else ""
            out.append(
                f"{num} 0 obj\n<< /Length {len(data)}{flate} >>\nstream\n".encode() + data + b"\nendstream\nendobj\n"
            )
        else:
            out.append(f"{num} 0 obj\n{objects[num]}\nendobj\n".encode())
    out.append(b"trailer\n<< /Root 1 0 R >>\n%%EOF\n")
    return b"".join(out)
