"""Postbox: a mail client (folders, search, pagination, compose, reply, archive, trash) and a calendar."""

from __future__ import annotations

import calendar
import datetime
import random
import sqlite3

from agentenvs.envs.web.sites.framework import App, HTTPError, Request, Response, password_hash, redirect
from agentenvs.envs.web.sites.people import FIRST_NAMES, LAST_NAMES, PERSONAS, sentence

PAGE_SIZE = 20
FOLDERS = ("inbox", "sent", "archive", "trash")
SUBJECTS = [
    "Invoice {n}",
    "Meeting notes: {topic}",
    "Re: {topic} plan",
    "Question about {topic}",
    "{topic} update",
    "Lunch on Friday?",
    "Your order #{n} has shipped",
    "Reminder: {topic} review",
    "Draft for {topic}",
    "Weekly {topic} digest",
]
TOPICS = ["budget", "roadmap", "hiring", "launch", "offsite", "design", "security", "quarterly", "migration", "support"]
EVENTS = [
    "Team standup",
    "Dentist",
    "1:1 with manager",
    "Project kickoff",
    "Yoga class",
    "Budget review",
    "Call with supplier",
    "Book club",
    "Design critique",
    "Quarterly planning",
    "Coffee with Sam",
    "Gym",
]
PLACES = ["Room 4B", "Main office", "Cafe Lumen", "Online", "Room 2A", "City clinic", "Library"]

SCHEMA = """
CREATE TABLE users (id INTEGER PRIMARY KEY, username TEXT UNIQUE, password_hash TEXT, full_name TEXT, email TEXT);
CREATE TABLE sessions (id TEXT PRIMARY KEY, user_id INTEGER);
CREATE TABLE messages (id INTEGER PRIMARY KEY, owner_id INTEGER, folder TEXT, sender TEXT, sender_name TEXT,
  recipient TEXT, subject TEXT, body TEXT, sent_at TEXT, read INTEGER DEFAULT 0, starred INTEGER DEFAULT 0);
CREATE TABLE events (id INTEGER PRIMARY KEY, owner_id INTEGER, title TEXT, day TEXT, start TEXT, end TEXT,
  location TEXT, notes TEXT);
"""


def generate(db: sqlite3.Connection, seed: int) -> None:
    """Fill every persona's mailbox (~90 messages) and calendar (~45 events), from ``seed``."""
    rng = random.Random(seed)
    db.executescript(SCHEMA)
    contacts = [
        (f"{f} {ln}", f"{f.lower()}.{ln.lower()}@example.org") for f in FIRST_NAMES[:14] for ln in LAST_NAMES[:2]
    ]
    for uid, (username, full_name) in enumerate(PERSONAS, start=1):
        email = f"{username}@postbox.test"
        db.execute(
            "INSERT INTO users VALUES (?, ?, ?, ?, ?)",
            (uid, username, password_hash(f"{username}-pass"), full_name, email),
        )
        for k in range(90):
            name, address = rng.choice(contacts)
            when = datetime.datetime(2026, 10, 1) + datetime.timedelta(minutes=rng.randint(0, 60 * 24 * 60))
            subject = rng.choice(SUBJECTS).format(n=rng.randint(1000, 9999), topic=rng.choice(TOPICS))
            folder = "sent" if k % 6 == 0 else rng.choice(["inbox"] * 6 + ["archive"])
            sender, sender_name, recipient = (email, full_name, address) if folder == "sent" else (address, name, email)
            db.execute(
                "INSERT INTO messages (owner_id, folder, sender, sender_name, recipient, subject, body, sent_at, read)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    uid,
                    folder,
                    sender,
                    sender_name,
                    recipient,
                    subject,
                    " ".join(sentence(rng, 12) for _ in range(3)),
                    when.strftime("%Y-%m-%d %H:%M"),
                    int(rng.random() < 0.6),
                ),
            )
        for _ in range(45):
            day = datetime.date(2026, 11, 1) + datetime.timedelta(days=rng.randint(0, 60))
            hour = rng.randint(8, 18)
            db.execute(
                "INSERT INTO events (owner_id, title, day, start, end, location, notes) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    uid,
                    rng.choice(EVENTS),
                    day.isoformat(),
                    f"{hour:02d}:00",
                    f"{hour + 1:02d}:00",
                    rng.choice(PLACES),
                    sentence(rng, 8),
                ),
            )
    db.commit()


app = App(
    "mail",
    "Postbox",
    [
        ("/mail/inbox", "Inbox"),
        ("/mail/sent", "Sent"),
        ("/mail/archive", "Archive"),
        ("/mail/trash", "Trash"),
        ("/mail/compose", "Compose"),
        ("/calendar", "Calendar"),
    ],
)


@app.route("GET", "/", login=True)
def home(request: Request) -> Response:
    return redirect("/mail/inbox")


@app.route("GET", "/mail/<folder>", login=True)
def folder(request: Request) -> Response:
    name = request.params["folder"]
    if name not in FOLDERS:
        raise HTTPError(404, "No such folder")
    q = request.arg("q")
    where, params = "owner_id = ? AND folder = ?", [request.user["id"], name]
    for word in q.split()[:8]:
        where += " AND (subject LIKE ? OR sender_name LIKE ? OR sender LIKE ? OR body LIKE ?)"
        params += [f"%{word}%"] * 4
    total = request.db.execute(f"SELECT COUNT(*) FROM messages WHERE {where}", params).fetchone()[0]
    page = request.page()
    rows = request.db.execute(
        f"SELECT * FROM messages WHERE {where} ORDER BY sent_at DESC, id DESC LIMIT ? OFFSET ?",
        [*params, PAGE_SIZE, (page - 1) * PAGE_SIZE],
    ).fetchall()
    return app.render(
        request,
        "folder.html",
        folder=name,
        messages=rows,
        q=q,
        page=page,
        total=total,
        pages=max(1, -(-total // PAGE_SIZE)),
    )


def _message(request: Request) -> sqlite3.Row:
    row = request.db.execute(
        "SELECT * FROM messages WHERE id = ? AND owner_id = ?", (request.params["id"], request.user["id"])
    ).fetchone()
    if row is None:
        raise HTTPError(404, "No such message")
    return row


@app.route("GET", "/mail/message/<id>", login=True)
def message(request: Request) -> Response:
    row = _message(request)
    request.db.execute("UPDATE messages SET read = 1 WHERE id = ?", (row["id"],))
    return app.render(request, "message.html", message=row, folders=FOLDERS)


@app.route("POST", "/mail/message/<id>/move", login=True)
def move(request: Request) -> Response:
    row = _message(request)
    target = request.field("folder")
    if target not in ("inbox", "archive", "trash"):
        raise HTTPError(400, "Messages move to the inbox, the archive or the trash.")
    request.db.execute("UPDATE messages SET folder = ? WHERE id = ?", (target, row["id"]))
    return redirect(f"/mail/{row['folder']}")


@app.route("POST", "/mail/message/<id>/star", login=True)
def star(request: Request) -> Response:
    row = _message(request)
    request.db.execute("UPDATE messages SET starred = 1 - starred WHERE id = ?", (row["id"],))
    return redirect(f"/mail/message/{row['id']}")


@app.route("GET", "/mail/compose", login=True)
def compose(request: Request) -> Response:
    to = subject = ""
    if request.arg("reply_to").isdigit():
        request.params["id"] = request.arg("reply_to")
        original = _message(request)
        to, subject = original["sender"], original["subject"]
        subject = subject if subject.startswith("Re: ") else f"Re: {subject}"
    return app.render(request, "compose.html", to=to, subject=subject)


@app.route("POST", "/mail/send", login=True)
def send(request: Request) -> Response:
    to, subject, body = request.field("to").lower(), request.field("subject"), request.field("body")
    if "@" not in to or " " in to or not subject:
        raise HTTPError(400, "A message needs one recipient address and a subject.")
    user = request.user
    now = "2026-12-01 09:00"
    request.db.execute(
        "INSERT INTO messages (owner_id, folder, sender, sender_name, recipient, subject, body, sent_at, read)"
        " VALUES (?, 'sent', ?, ?, ?, ?, ?, ?, 1)",
        (user["id"], user["email"], user["full_name"], to, subject, body, now),
    )
    local = request.db.execute("SELECT id FROM users WHERE email = ?", (to,)).fetchone()
    if local is not None:
        request.db.execute(
            "INSERT INTO messages (owner_id, folder, sender, sender_name, recipient, subject, body, sent_at)"
            " VALUES (?, 'inbox', ?, ?, ?, ?, ?, ?)",
            (local["id"], user["email"], user["full_name"], to, subject, body, now),
        )
    return redirect("/mail/sent")


@app.route("GET", "/calendar", login=True)
def month(request: Request) -> Response:
    text = request.arg("month", "2026-11")
    try:
        first = datetime.date.fromisoformat(f"{text}-01")
    except ValueError:
        raise HTTPError(400, "Months look like 2026-11.") from None
    days = calendar.monthrange(first.year, first.month)[1]
    rows = request.db.execute(
        "SELECT * FROM events WHERE owner_id = ? AND day LIKE ? ORDER BY day, start, id",
        (request.user["id"], f"{text}-%"),
    ).fetchall()
    by_day: dict[str, list[sqlite3.Row]] = {}
    for row in rows:
        by_day.setdefault(row["day"], []).append(row)
    prev = (first - datetime.timedelta(days=1)).strftime("%Y-%m")
    nxt = (first + datetime.timedelta(days=days)).strftime("%Y-%m")
    dates = [first + datetime.timedelta(days=i) for i in range(days)]
    return app.render(request, "calendar.html", month=first, dates=dates, by_day=by_day, prev=prev, next=nxt)


def _event(request: Request) -> sqlite3.Row:
    row = request.db.execute(
        "SELECT * FROM events WHERE id = ? AND owner_id = ?", (request.params["id"], request.user["id"])
    ).fetchone()
    if row is None:
        raise HTTPError(404, "No such event")
    return row


@app.route("GET", "/calendar/event/<id>", login=True)
def event(request: Request) -> Response:
    return app.render(request, "event.html", event=_event(request))


@app.route("GET", "/calendar/new", login=True)
def new_event_form(request: Request) -> Response:
    return app.render(request, "new_event.html", day=request.arg("day"))


@app.route("POST", "/calendar/new", login=True)
def new_event(request: Request) -> Response:
    fields = {k: request.field(k) for k in ("title", "day", "start", "end", "location", "notes")}
    try:
        datetime.date.fromisoformat(fields["day"])
        datetime.time.fromisoformat(fields["start"])
        datetime.time.fromisoformat(fields["end"])
    except ValueError:
        raise HTTPError(400, "An event needs a date (YYYY-MM-DD) and start and end times (HH:MM).") from None
    if not fields["title"] or fields["end"] <= fields["start"]:
        raise HTTPError(400, "An event needs a title and must end after it starts.")
    cur = request.db.execute(
        "INSERT INTO events (owner_id, title, day, start, end, location, notes) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (request.user["id"], *fields.values()),
    )
    return redirect(f"/calendar/event/{cur.lastrowid}")


@app.route("POST", "/calendar/event/<id>/delete", login=True)
def delete_event(request: Request) -> Response:
    row = _event(request)
    request.db.execute("DELETE FROM events WHERE id = ?", (row["id"],))
    return redirect(f"/calendar?month={row['day'][:7]}")
