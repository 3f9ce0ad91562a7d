"""Generate the gui tasks' assets (inputs and expected files) with the standard library.

Run from the repository root: ``python3 scripts/gui/make_assets.py``. The
XLSX writer is the smallest file LibreOffice and our reader accept: one
sheet, inline strings, numbers, and formulas without cached values. The
PPTX writer gives each slide a title and a body placeholder on one
"Title and Text" layout; the Impress tasks compare text and slide order only,
since what Impress writes on save differs from it in every box's geometry and
fonts.
"""

from __future__ import annotations

import gzip
import io
import tarfile
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
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in parts:
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
    write_xlsx(ROOT / "infeasible-calc-sap-refresh" / "assets" / "budget.xlsx", items, sheet="Budget")
    more_tables()
    more_texts()
    multi_app()
    slides()
    file_manager()


def more_tables() -> None:
    """Calc tasks: inputs only (the rules are in the tasks' evaluators)."""
    scores = [["Name", "Score"], ["Ana", 70], ["Ben", 85], ["Chen", 90], ["Dara", 55], ["Eli", 100], ["Average", None]]
    write_xlsx(ROOT / "calc-average-score" / "assets" / "scores.xlsx", scores, sheet="Scores")
    shares = [["Region", "Sales", "Share"], ["North", 50], ["South", 30], ["West", 20], ["Total", "=SUM(B2:B4)"]]
    write_xlsx(ROOT / "calc-share-column" / "assets" / "shares.xlsx", shares, sheet="Sales")
    grades = [["Name", "Score", "Result"], ["Ana", 72], ["Ben", 40], ["Chen", 50], ["Dara", 49]]
    write_xlsx(ROOT / "calc-if-pass-fail" / "assets" / "grades.xlsx", grades, sheet="Grades")
    temps = [
        ["Day", "Temp"],
        *[[d, t] for d, t in zip(("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"), (18, 25, 31, 12, 20, 22, 27))],
    ]
    write_xlsx(ROOT / "calc-max-min" / "assets" / "temps.xlsx", [*temps, ["Max", None], ["Min", None]], sheet="Week")
    answers = ("yes", "no", "yes", "yes", "no", "yes", "no", "yes")
    survey = [["Name", "Answer"], *[[f"P{i}", a] for i, a in enumerate(answers, 1)], ["Yes count", None]]
    write_xlsx(ROOT / "calc-countif-yes" / "assets" / "survey.xlsx", survey, sheet="Survey")
    people = [["First", "Last", "Full name"], ["Ada", "Lovelace"], ["Alan", "Turing"], ["Grace", "Hopper"]]
    write_xlsx(ROOT / "calc-join-names" / "assets" / "people.xlsx", people, sheet="People")
    profit = [["Product", "Revenue", "Cost", "Profit"], ["Lamp", 100, 60], ["Desk", 45, 50], ["Chair", 300, 180]]
    write_xlsx(ROOT / "calc-profit-column" / "assets" / "profit.xlsx", profit, sheet="Products")
    sales = [["Region", "Sales", "Target"], ["North", 50, 45], ["South", 30, 35], ["West", 20, 20]]
    write_xlsx(ROOT / "calc-bold-header" / "assets" / "sales.xlsx", sales, sheet="Sales")


def put(task: str, name: str, text: str) -> None:
    """A text asset under the task's URL path (``assets/<task>/<name>``)."""
    path = ROOT / task / "assets" / task / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def more_texts() -> None:
    """Editor, terminal and Writer tasks: each input beside its gold file, under the task's URL path."""

    put("mousepad-delete-line", "shopping.txt", "eggs\nDELETE ME\nbread\nmilk\n")
    put("mousepad-delete-line", "shopping_gold.txt", "eggs\nbread\nmilk\n")
    letter = "Dear Sam,\nYou will {} the parcel on Monday.\nBest, Alex\n"
    put("mousepad-fix-typo", "letter.txt", letter.format("recieve"))
    put("mousepad-fix-typo", "letter_gold.txt", letter.format("receive"))
    log = [
        f"2026-11-0{d} 0{d}:00 {level} {msg}"
        for d, (level, msg) in enumerate(
            [
                ("INFO", "service started"),
                ("ERROR", "disk full on /var"),
                ("INFO", "no error found in config"),
                ("WARN", "slow response"),
                ("ERROR", "request timed out"),
                ("INFO", "error budget reset"),
                ("ERROR", "disk full on /tmp"),
            ],
            1,
        )
    ]
    put("terminal-count-lines", "server.log", "\n".join(log) + "\n")
    put("terminal-count-lines", "count_gold.txt", f"{len(log)}\n")
    put("terminal-grep-errors", "app.log", "\n".join(log) + "\n")
    put("terminal-grep-errors", "errors_gold.txt", "".join(line + "\n" for line in log if "ERROR" in line))
    for name in ("a.jpeg", "b.jpeg", "c.png"):
        put("terminal-rename-extension", name, f"{name}\n")
    letter_doc = ["Draft letter", "Dear team,", "Thank you for the quarter's work."]
    write_docx(ROOT / "writer-replace-title" / "assets" / "writer-replace-title" / "letter.docx", letter_doc)
    write_docx(ROOT / "writer-replace-title" / "assets" / "writer-replace-title" / "letter_gold.docx",
               ["Final letter", *letter_doc[1:]])  # fmt: skip
    notes = ["Item one: the budget.", "Item two: the hiring plan."]
    write_docx(ROOT / "writer-add-title" / "assets" / "writer-add-title" / "notes.docx", notes)
    write_docx(ROOT / "writer-add-title" / "assets" / "writer-add-title" / "notes_gold.docx", ["Meeting notes", *notes])
    agenda = ["Agenda", "Budget review", "Hiring plan"]
    write_docx(ROOT / "writer-insert-paragraph" / "assets" / "writer-insert-paragraph" / "agenda.docx", agenda)
    write_docx(ROOT / "writer-insert-paragraph" / "assets" / "writer-insert-paragraph" / "agenda_gold.docx",
               [*agenda[:2], "Roadmap update", agenda[2]])  # fmt: skip
    settings = "port = 8080\nworkers = 4\n"
    put("mousepad-add-header", "settings.conf", settings)
    put("mousepad-add-header", "settings_gold.txt", "# Server settings\n" + settings)
    put("mousepad-new-file", "meeting_gold.txt", "Standup moved to 10:30\n")
    names = ["Maria", "Chen", "Ola", "Chen", "Bruno", "Maria", "Aiko"]
    put("terminal-sort-unique", "names.txt", "\n".join(names) + "\n")
    put("terminal-sort-unique", "names_gold.txt", "\n".join(sorted(set(names))) + "\n")
    cities = [("Lisbon", "Portugal", 545000), ("Osaka", "Japan", 2750000), ("Lagos", "Nigeria", 15400000)]
    put(
        "terminal-csv-column",
        "cities.csv",
        "city,country,population\n" + "".join(f"{c},{k},{n}\n" for c, k, n in cities),
    )
    put("terminal-csv-column", "cities_gold.txt", "".join(f"{c}\n" for c, _, _ in cities))
    report = ["Quarterly report", "DRAFT - remove this paragraph before sending.", "Results are good."]
    write_docx(ROOT / "writer-delete-paragraph" / "assets" / "writer-delete-paragraph" / "report.docx", report)
    write_docx(ROOT / "writer-delete-paragraph" / "assets" / "writer-delete-paragraph" / "report_gold.docx",
               [report[0], report[2]])  # fmt: skip


def write_tar_gz(path: Path, files: dict[str, bytes]) -> None:
    """A gzipped tar with fixed times and owners, so that regenerating it changes no byte."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), 1_700_000_000, 0o644
            tar.addfile(info, io.BytesIO(data))
    path.write_bytes(gzip.compress(raw.getvalue(), mtime=0))


def multi_app() -> None:
    """Tasks across the terminal and the editor."""
    script = ROOT / "multi-fix-script-run" / "assets" / "multi-fix-script-run"
    script.mkdir(parents=True, exist_ok=True)
    (script / "greet.sh").write_text('#!/bin/sh\necho "Helo, world"\n')
    (script / "greet_gold.sh").write_text('#!/bin/sh\necho "Hello, world"\n')
    (script / "out_gold.txt").write_text("Hello, world\n")
    log = ROOT / "multi-grep-annotate" / "assets" / "multi-grep-annotate"
    log.mkdir(parents=True, exist_ok=True)
    lines = ["INFO start", "WARN slow response", "INFO ok", "WARN retrying upload", "ERROR failed"]
    (log / "app.log").write_text("\n".join(lines) + "\n")
    spelling = ROOT / "mousepad-replace-all" / "assets" / "mousepad-replace-all"
    spelling.mkdir(parents=True, exist_ok=True)
    text = "The colour of the sky.\nPick a colour, any colour.\nColourful is capitalised and stays.\n"
    (spelling / "spelling.txt").write_text(text)
    (spelling / "spelling_gold.txt").write_text(text.replace("colour", "color"))
    backup = ROOT / "terminal-backup-texts" / "assets" / "terminal-backup-texts"
    backup.mkdir(parents=True, exist_ok=True)
    for name in ("a.txt", "b.txt", "c.md"):
        (backup / name).write_text(f"{name}\n")
    archive = ROOT / "terminal-extract-archive" / "assets" / "terminal-extract-archive"
    archive.mkdir(parents=True, exist_ok=True)
    write_tar_gz(
        archive / "photos.tar.gz", {"beach.png": b"beach\n", "hills.png": b"hills\n", "readme.txt": b"trip photos\n"}
    )
    minutes = ["Minutes", "Attendees: Ana, Ben.", "Next meeting: 2 December."]
    place = ROOT / "writer-fix-last-line" / "assets" / "writer-fix-last-line"
    write_docx(place / "minutes.docx", minutes)
    write_docx(place / "minutes_gold.docx", [*minutes[:2], "Next meeting: 12 December."])
    offer = ROOT / "chromium-save-page" / "assets" / "chromium-save-page"
    offer.mkdir(parents=True, exist_ok=True)
    (offer / "offer.html").write_text(
        "<!doctype html><html><head><title>Kite sale</title></head><body><h1>Spring kite sale</h1>"
        "<p>Use the coupon code <b>KITE-2026-SAVE</b> at checkout for 20% off.</p></body></html>\n"
    )
    (log / "warnings_gold.txt").write_text("# warnings\n" + "".join(x + "\n" for x in lines if "WARN" in x))


def slides() -> None:
    """Impress tasks: each input deck beside its gold deck, under the task's URL path."""

    def deck(task: str, name: str, content: list[tuple[str, list[str]]]) -> None:
        write_pptx(ROOT / task / "assets" / task / name, content)

    plan = [
        ("Project plan", ["Kick-off in March"]),
        ("Draft budget", ["Hardware: 40%", "Staff: 60%"]),
        ("Timeline", ["Alpha in June", "Launch in October"]),
    ]
    deck("impress-replace-title", "plan.pptx", plan)
    deck("impress-replace-title", "plan_gold.pptx", [plan[0], ("Final budget", plan[1][1]), plan[2]])
    talk = [("Garden club", ["Spring meeting"]), ("Agenda", ["Seed swap", "Tool library"])]
    deck("impress-add-slide", "talk.pptx", talk)
    deck("impress-add-slide", "talk_gold.pptx", [*talk, ("Questions", ["Thank you for coming"])])
    status = [("Weekly status", ["Team Orion"]), ("Build", [])]
    deck("impress-body-text", "status.pptx", status)
    deck("impress-body-text", "status_gold.pptx", [status[0], ("Build", ["All tests pass", "Release on Friday"])])
    pitch = [
        ("Pitch", ["Acme Robotics"]),
        ("Product", ["A robot arm for small labs"]),
        ("Old pricing", ["Replaced in May: do not show"]),
        ("Team", ["Four engineers"]),
    ]
    deck("impress-delete-slide", "pitch.pptx", pitch)
    deck("impress-delete-slide", "pitch_gold.pptx", [*pitch[:2], pitch[3]])
    review = [
        ("Results", ["Revenue up 8%"]),
        ("Method", ["A survey of 200 shops"]),
        ("Agenda", ["Findings first, then how we got them"]),
    ]
    deck("impress-move-slide", "review.pptx", review)
    deck("impress-move-slide", "review_gold.pptx", [review[2], *review[:2]])


def file_manager() -> None:
    """pcmanfm tasks: the files put in the folders the file manager opens; the grader compares a renamed,
    moved, copied or kept file with its input, so each input is its own gold file."""

    put("files-rename-file", "draft.txt", "Quarterly figures, draft 3.\nRevenue up 4%, costs flat.\n")
    put("files-rename-file", "lunch.txt", "Lunch order: two soups.\n")
    put("files-rename-file", "agenda.txt", "meeting at 9\n")
    notes = "Notes from the spring planning meeting.\n- hire two testers\n- move the release to May\n"
    put("files-new-folder-move", "old-notes.txt", notes)
    put("files-new-folder-move", "todo.txt", "buy printer paper\ncall the landlord\n")
    put("files-copy-to-folder", "budget.csv", "item,amount\nrent,1200\nfood,450\ntravel,180\n")
    put("files-copy-to-folder", "letter.txt", "Dear Ms Lee,\nthank you for your letter.\n")
    put("files-copy-to-folder", "readme.txt", "Copies of important files.\n")
    put("files-trash-file", "build.log", "build ok\n")
    put("files-trash-file", "sales.csv", "month,sales\njan,10\n")
    put("files-trash-file", "notes.txt", "keep me\n")


if __name__ == "__main__":
    main()
