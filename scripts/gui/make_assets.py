"""Generate the gui tasks' assets (inputs and expected files) with the standard library.

Run from the repository root: ``python3 scripts/gui/make_assets.py``. The
XLSX writer is the smallest file LibreOffice and our reader accept: one
sheet, inline strings, numbers, and formulas without cached values.
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


def more_texts() -> None:
    """Editor, terminal and Writer tasks: each input beside its gold file, under the task's URL path."""

    def put(task: str, name: str, text: str) -> None:
        path = ROOT / task / "assets" / task / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

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


if __name__ == "__main__":
    main()
