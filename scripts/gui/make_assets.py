"""Generate the gui tasks' assets (inputs and expected files) with the standard library.

Run from the repository root: ``python3 scripts/gui/make_assets.py``. The
Office files (XLSX, DOCX, PPTX) are written by ``ooxml.py`` beside it.
"""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path

from ooxml import write_docx, write_pptx, write_xlsx

ROOT = Path(__file__).resolve().parents[2] / "tasks" / "gui"


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
