"""Task templates on Postbox, the mail and calendar client (see ``templates_shop`` for the shape)."""

from __future__ import annotations

import random
import sqlite3
from typing import Any

from agentenvs.envs.web.sites.people import PERSONAS

NOT_INFEASIBLE = {"check": "web.infeasible", "args": {"expected": False}}


def _sql(sql: str, expect: Any, params: list[Any] | None = None, op: str = "==") -> dict[str, Any]:
    return {
        "check": "web.sql",
        "args": {"site": "mail", "sql": sql, "expect": expect, "params": params or [], "op": op},
    }


def _persona(rng: random.Random, db: sqlite3.Connection) -> tuple[str, int]:
    username = rng.choice(PERSONAS)[0]
    return username, db.execute("SELECT id FROM users WHERE username = ?", (username,)).fetchone()[0]


def latest_subject(rng: random.Random, db: sqlite3.Connection) -> dict[str, Any]:
    username, uid = _persona(rng, db)
    senders = db.execute(
        "SELECT sender_name FROM messages WHERE owner_id = ? AND folder = 'inbox' GROUP BY sender_name"
        " HAVING COUNT(*) >= 2 ORDER BY sender_name",
        (uid,),
    ).fetchall()
    name = rng.choice(senders)[0]
    rows = db.execute(
        "SELECT subject FROM messages WHERE owner_id = ? AND folder = 'inbox' AND sender_name = ?"
        " ORDER BY sent_at DESC, id DESC",
        (uid, name),
    ).fetchall()
    wrong = next((r[0] for r in rows[1:] if r[0] != rows[0][0]), rows[0][0] + " (older)")
    return {
        "instruction": f"What is the subject of the most recent email in your inbox from {name}? Reply with the subject only.",
        "persona": username,
        "start": "mail:/mail/inbox",
        "tags": ["information-seeking", "search"],
        "difficulty": "easy",
        "evaluator": [{"check": "web.answer", "args": {"expected": rows[0][0]}}, NOT_INFEASIBLE],
        "oracle": [["goto", f"mail:/mail/inbox?q={name.replace(' ', '+')}"], ["msg", rows[0][0]]],
        "wrong": [["goto", f"mail:/mail/inbox?q={name.replace(' ', '+')}"], ["msg", wrong]],
    }


def event_location(rng: random.Random, db: sqlite3.Connection) -> dict[str, Any]:
    username, uid = _persona(rng, db)
    rows = db.execute(
        "SELECT e.* FROM events e WHERE owner_id = ? AND (SELECT COUNT(*) FROM events x WHERE x.owner_id ="
        " e.owner_id AND x.day = e.day AND x.title = e.title) = 1 ORDER BY id",
        (uid,),
    ).fetchall()
    e = rng.choice(rows)
    other = db.execute(
        "SELECT location FROM events WHERE owner_id = ? AND location != ? ORDER BY id", (uid, e["location"])
    ).fetchone()
    return {
        "instruction": f'Where is your "{e["title"]}" on {e["day"]} taking place? Reply with the location only.',
        "persona": username,
        "start": "mail:/calendar",
        "tags": ["information-seeking", "calendar"],
        "difficulty": "easy",
        "evaluator": [{"check": "web.answer", "args": {"expected": e["location"]}}, NOT_INFEASIBLE],
        "oracle": [
            ["goto", f"mail:/calendar?month={e['day'][:7]}"],
            ["goto", f"mail:/calendar/event/{e['id']}"],
            ["msg", e["location"]],
        ],
        "wrong": [["goto", f"mail:/calendar?month={e['day'][:7]}"], ["msg", other[0]]],
    }


def send(rng: random.Random, db: sqlite3.Connection) -> dict[str, Any]:
    username, _ = _persona(rng, db)
    to = rng.choice(["ines.berg@example.org", "omar.adams@example.org", "tara.costa@example.org"])
    subject = (
        f"{rng.choice(['Slides', 'Agenda', 'Notes', 'Photos'])} for {rng.choice(['Monday', 'the offsite', 'the demo'])}"
    )
    body = rng.choice(["Please find them attached.", "Let me know what you think.", "See you there."])
    sent = (
        "SELECT COUNT(*) FROM messages m JOIN users u ON u.id = m.owner_id WHERE u.username = ? AND m.folder = 'sent'"
        " AND m.subject = ?"
    )
    fill = [["goto", "mail:/mail/compose"], ["fill", "#subject", subject], ["fill", "#body", body]]
    return {
        "instruction": f'Email {to} with the subject "{subject}" and the text "{body}"',
        "persona": username,
        "start": "mail:/mail/inbox",
        "tags": ["content-creation"],
        "difficulty": "easy",
        "checkpoints": [{"name": "sent", **_sql(sent, 1, [username, subject], ">=")}],
        "evaluator": [
            _sql(sent + " AND m.recipient = ? AND m.body = ?", 1, [username, subject, to, body]),
            _sql(sent, 1, [username, subject]),
            NOT_INFEASIBLE,
        ],
        "oracle": [*fill, ["fill", "#to", to], ["click", "#compose button"]],
        "wrong": [*fill, ["fill", "#to", to.replace(".org", ".com")], ["click", "#compose button"]],
    }


def reply(rng: random.Random, db: sqlite3.Connection) -> dict[str, Any]:
    username, uid = _persona(rng, db)
    m = rng.choice(
        db.execute(
            "SELECT * FROM messages WHERE owner_id = ? AND folder = 'inbox' AND subject NOT LIKE 'Re:%' ORDER BY id",
            (uid,),
        ).fetchall()
    )
    text = rng.choice(["Thanks, that works for me.", "I will get back to you tomorrow.", "Sounds good, count me in."])
    sent = (
        "SELECT COUNT(*) FROM messages m JOIN users u ON u.id = m.owner_id WHERE u.username = ? AND m.folder = 'sent'"
        " AND m.body = ?"
    )
    return {
        "instruction": (
            f'Reply to the email from {m["sender_name"]} with the subject "{m["subject"]}" (sent {m["sent_at"]})'
            f' saying "{text}"'
        ),
        "persona": username,
        "start": "mail:/mail/inbox",
        "tags": ["content-creation", "multi-step"],
        "difficulty": "medium",
        "checkpoints": [{"name": "replied", **_sql(sent, 1, [username, text], ">=")}],
        "evaluator": [
            _sql(
                sent + " AND m.recipient = ? AND m.subject = ?", 1, [username, text, m["sender"], f"Re: {m['subject']}"]
            ),
            NOT_INFEASIBLE,
        ],
        "oracle": [
            ["goto", f"mail:/mail/compose?reply_to={m['id']}"],
            ["fill", "#body", text],
            ["click", "#compose button"],
        ],
        "wrong": [
            ["goto", "mail:/mail/compose"],
            ["fill", "#to", m["sender"]],
            ["fill", "#subject", m["subject"]],
            ["fill", "#body", text],
            ["click", "#compose button"],
        ],
    }


def archive_sender(rng: random.Random, db: sqlite3.Connection) -> dict[str, Any]:
    username, uid = _persona(rng, db)
    senders = db.execute(
        "SELECT sender_name, GROUP_CONCAT(id) FROM messages WHERE owner_id = ? AND folder = 'inbox'"
        " GROUP BY sender_name HAVING COUNT(*) BETWEEN 2 AND 3 ORDER BY sender_name",
        (uid,),
    ).fetchall()
    name, ids = rng.choice(senders)
    ids = sorted(int(i) for i in ids.split(","))
    plan = [s for i in ids for s in (["goto", f"mail:/mail/message/{i}"], ["click", "#archive-form button"])]
    inbox = "SELECT COUNT(*) FROM messages WHERE owner_id = ? AND folder = 'inbox' AND sender_name = ?"
    return {
        "instruction": f"Archive every email from {name} that is in your inbox (and nothing else).",
        "persona": username,
        "start": "mail:/mail/inbox",
        "tags": ["transaction", "multi-step"],
        "difficulty": "medium",
        "checkpoints": [
            {"name": f"archived-{k + 1}", **_sql("SELECT folder FROM messages WHERE id = ?", "archive", [i])}
            for k, i in enumerate(ids)
        ],
        "evaluator": [
            _sql(inbox, 0, [uid, name]),
            _sql("SELECT COUNT(*) FROM messages WHERE owner_id = ? AND folder = 'archive'", len(ids), [uid], ">="),
            _sql(
                "SELECT COUNT(*) FROM messages WHERE owner_id = ? AND folder = 'inbox'",
                db.execute("SELECT COUNT(*) FROM messages WHERE owner_id = ? AND folder = 'inbox'", (uid,)).fetchone()[
                    0
                ]
                - len(ids),
                [uid],
            ),
            NOT_INFEASIBLE,
        ],
        "oracle": plan,
        "wrong": plan[:-2],
    }


def create_event(rng: random.Random, db: sqlite3.Connection) -> dict[str, Any]:
    username, _ = _persona(rng, db)
    title = rng.choice(["Piano lesson", "Car service", "Team lunch", "Parent evening", "Tax advisor"])
    day, hour = f"2026-12-{rng.randint(2, 27):02d}", rng.randint(9, 16)
    place = rng.choice(["Music school", "Garage on Mill Lane", "Cafe Lumen", "Room 4B"])
    start, end = f"{hour:02d}:00", f"{hour + 1:02d}:30"
    mine = "SELECT COUNT(*) FROM events e JOIN users u ON u.id = e.owner_id WHERE u.username = ? AND e.title = ?"
    fill = [["goto", "mail:/calendar/new"], ["fill", "#title", title], ["fill", "#day", day], ["fill", "#start", start]]
    return {
        "instruction": f'Add "{title}" to your calendar on {day} from {start} to {end} at {place}.',
        "persona": username,
        "start": "mail:/calendar",
        "tags": ["content-creation", "calendar"],
        "difficulty": "medium",
        "checkpoints": [{"name": "event-added", **_sql(mine, 1, [username, title], ">=")}],
        "evaluator": [
            _sql(
                mine + " AND e.day = ? AND e.start = ? AND e.end = ? AND e.location = ?",
                1,
                [username, title, day, start, end, place],
            ),
            _sql(mine, 1, [username, title]),
            NOT_INFEASIBLE,
        ],
        "oracle": [*fill, ["fill", "#end", end], ["fill", "#location", place], ["click", "#event-form button"]],
        "wrong": [
            *fill,
            ["fill", "#end", f"{hour + 1:02d}:00"],
            ["fill", "#location", place],
            ["click", "#event-form button"],
        ],
    }


def unsend(rng: random.Random, db: sqlite3.Connection) -> dict[str, Any]:
    username, uid = _persona(rng, db)
    m = rng.choice(
        db.execute("SELECT * FROM messages WHERE owner_id = ? AND folder = 'sent' ORDER BY id", (uid,)).fetchall()
    )
    return {
        "instruction": f'Recall (unsend) the email "{m["subject"]}" you sent to {m["recipient"]}, so they never receive it.',
        "persona": username,
        "start": "mail:/mail/sent",
        "tags": ["infeasible"],
        "difficulty": "easy",
        "infeasible": True,
        "evaluator": [
            {"check": "web.infeasible", "args": {"expected": True}},
            _sql("SELECT folder FROM messages WHERE id = ?", "sent", [m["id"]]),
        ],
        "oracle": [["goto", f"mail:/mail/message/{m['id']}"], ["infeasible", "Postbox cannot recall a sent email."]],
        "wrong": [
            ["goto", f"mail:/mail/message/{m['id']}"],
            ["click", '[data-dialog="trash-dialog"]'],
            ["click", "#trash-dialog button[type=submit]"],
        ],
    }


TEMPLATES = {
    "mail-latest-subject": latest_subject,
    "mail-event-location": event_location,
    "mail-send": send,
    "mail-reply": reply,
    "mail-archive-sender": archive_sender,
    "mail-create-event": create_event,
    "mail-unsend": unsend,
}
