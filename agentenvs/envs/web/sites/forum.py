"""Forum: boards with paginated, sortable post lists, posts with comments and votes, editing and moderation."""

from __future__ import annotations

import random
import sqlite3

from agentenvs.envs.web.sites.framework import App, HTTPError, Request, Response, password_hash, redirect
from agentenvs.envs.web.sites.people import FIRST_NAMES, LAST_NAMES, PERSONAS, sentence

PAGE_SIZE = 15
FORUMS = {
    "cooking": ("Cooking", ["sourdough", "cast iron", "knife skills", "spice blends", "meal prep", "fermentation"]),
    "cycling": ("Cycling", ["gravel bikes", "chain wear", "tubeless tyres", "winter riding", "bike fit", "saddles"]),
    "gardening": ("Gardening", ["tomatoes", "compost", "raised beds", "pruning roses", "slugs", "seed starting"]),
    "photography": ("Photography", ["prime lenses", "night shots", "film cameras", "editing", "tripods", "lighting"]),
    "programming": ("Programming", ["type hints", "unit tests", "SQLite", "code review", "debugging", "Rust"]),
    "travel": ("Travel", ["night trains", "packing light", "hostels", "visa queues", "travel insurance", "ferries"]),
    "books": ("Books", ["sci-fi classics", "audiobooks", "book clubs", "poetry", "libraries", "translations"]),
    "diy": ("DIY", ["drywall", "power drills", "tiling", "wiring a switch", "paint finishes", "shelving"]),
}
OPENERS = [
    "Question about",
    "Tips for",
    "My experience with",
    "Beginner help:",
    "Thoughts on",
    "Best advice on",
    "Unpopular opinion:",
    "Weekly thread:",
    "Help! Trouble with",
    "A guide to",
]

SCHEMA = """
CREATE TABLE users (id INTEGER PRIMARY KEY, username TEXT UNIQUE, password_hash TEXT, full_name TEXT,
  role TEXT DEFAULT 'member', joined TEXT);
CREATE TABLE sessions (id TEXT PRIMARY KEY, user_id INTEGER);
CREATE TABLE forums (id INTEGER PRIMARY KEY, slug TEXT UNIQUE, name TEXT, description TEXT);
CREATE TABLE posts (id INTEGER PRIMARY KEY, forum_id INTEGER, user_id INTEGER, title TEXT, body TEXT, created TEXT,
  score INTEGER DEFAULT 0, locked INTEGER DEFAULT 0, deleted INTEGER DEFAULT 0);
CREATE TABLE comments (id INTEGER PRIMARY KEY, post_id INTEGER, user_id INTEGER, body TEXT, created TEXT);
CREATE TABLE votes (user_id INTEGER, post_id INTEGER, value INTEGER, PRIMARY KEY (user_id, post_id));
"""


def generate(db: sqlite3.Connection, seed: int) -> None:
    """Fill the forum: 8 boards, ~400 posts with distinct titles, ~1,500 comments, 60 members, from ``seed``."""
    rng = random.Random(seed)
    db.executescript(SCHEMA)
    for i, (username, full_name) in enumerate(PERSONAS):
        role = "moderator" if username == "emma" else "member"
        db.execute(
            "INSERT INTO users VALUES (?, ?, ?, ?, ?, '2025-01-15')",
            (i + 1, username, password_hash(f"{username}-pass"), full_name, role),
        )
    for i in range(len(PERSONAS), 60):
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        db.execute(
            "INSERT INTO users VALUES (?, ?, ?, ?, 'member', ?)",
            (
                i + 1,
                f"{first.lower()}_{last.lower()}{i}",
                password_hash(f"u{i}"),
                f"{first} {last}",
                f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            ),
        )
    titles: set[str] = set()
    for fid, (slug, (name, topics)) in enumerate(FORUMS.items(), start=1):
        db.execute("INSERT INTO forums VALUES (?, ?, ?, ?)", (fid, slug, name, f"Everything about {name.lower()}."))
        for _ in range(50):
            title = f"{rng.choice(OPENERS)} {rng.choice(topics)} ({rng.randint(2, 999)})"
            if title in titles:
                continue
            titles.add(title)
            created = f"2026-{rng.randint(1, 10):02d}-{rng.randint(1, 28):02d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"
            cur = db.execute(
                "INSERT INTO posts (forum_id, user_id, title, body, created, score) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    fid,
                    rng.randint(1, 60),
                    title,
                    " ".join(sentence(rng, 12) for _ in range(3)),
                    created,
                    rng.randint(-5, 250),
                ),
            )
            for _ in range(rng.randint(0, 7)):
                db.execute(
                    "INSERT INTO comments (post_id, user_id, body, created) VALUES (?, ?, ?, ?)",
                    (cur.lastrowid, rng.randint(1, 60), sentence(rng, 10), created),
                )
    db.commit()


app = App("forum", "Commons Forum", [("/", "Boards"), ("/search", "Search")])
SORTS = {"new": "p.created DESC, p.id DESC", "top": "p.score DESC, p.id", "comments": "ncomments DESC, p.id"}
LISTING = (
    "SELECT p.*, u.username, f.slug, (SELECT COUNT(*) FROM comments c WHERE c.post_id = p.id) ncomments"
    " FROM posts p JOIN users u ON u.id = p.user_id JOIN forums f ON f.id = p.forum_id WHERE p.deleted = 0"
)


def _listing(request: Request, where: str, params: list[object]) -> dict[str, object]:
    sort = request.arg("sort", "new") if request.arg("sort", "new") in SORTS else "new"
    total = request.db.execute(f"SELECT COUNT(*) FROM ({LISTING} AND {where})", params).fetchone()[0]
    page = request.page()
    rows = request.db.execute(
        f"{LISTING} AND {where} ORDER BY {SORTS[sort]} LIMIT ? OFFSET ?", [*params, PAGE_SIZE, (page - 1) * PAGE_SIZE]
    ).fetchall()
    return {"posts": rows, "sort": sort, "page": page, "pages": max(1, -(-total // PAGE_SIZE)), "total": total}


@app.route("GET", "/")
def boards(request: Request) -> Response:
    rows = request.db.execute(
        "SELECT f.*, (SELECT COUNT(*) FROM posts p WHERE p.forum_id = f.id AND p.deleted = 0) n FROM forums f ORDER BY f.name"
    ).fetchall()
    return app.render(request, "boards.html", forums=rows)


def _forum(request: Request) -> sqlite3.Row:
    row = request.db.execute("SELECT * FROM forums WHERE slug = ?", (request.params["slug"],)).fetchone()
    if row is None:
        raise HTTPError(404, "No such board")
    return row


@app.route("GET", "/f/<slug>")
def board(request: Request) -> Response:
    forum = _forum(request)
    return app.render(request, "board.html", forum=forum, **_listing(request, "p.forum_id = ?", [forum["id"]]))


@app.route("GET", "/search")
def search(request: Request) -> Response:
    q = request.arg("q")
    words = q.split()[:8]
    where = " AND ".join(["(p.title LIKE ? OR p.body LIKE ?)"] * len(words)) or "1=1"
    params: list[object] = [w for word in words for w in (f"%{word}%", f"%{word}%")]
    return app.render(request, "search.html", q=q, **_listing(request, where, params))


def _post(request: Request) -> sqlite3.Row:
    row = request.db.execute(f"{LISTING} AND p.id = ?", (request.params["id"],)).fetchone()
    if row is None:
        raise HTTPError(404, "No such post (it may have been deleted)")
    return row


@app.route("GET", "/post/<id>")
def post(request: Request) -> Response:
    row = _post(request)
    comments = request.db.execute(
        "SELECT c.*, u.username FROM comments c JOIN users u ON u.id = c.user_id WHERE c.post_id = ? ORDER BY c.id",
        (row["id"],),
    ).fetchall()
    vote = None
    if request.user is not None:
        found = request.db.execute(
            "SELECT value FROM votes WHERE user_id = ? AND post_id = ?", (request.user["id"], row["id"])
        ).fetchone()
        vote = found[0] if found else None
    return app.render(request, "post.html", post=row, comments=comments, vote=vote)


@app.route("POST", "/post/<id>/vote", login=True)
def vote(request: Request) -> Response:
    row = _post(request)
    value = {"up": 1, "down": -1}.get(request.field("direction"))
    if value is None:
        raise HTTPError(400, "Vote up or down.")
    old = request.db.execute(
        "SELECT value FROM votes WHERE user_id = ? AND post_id = ?", (request.user["id"], row["id"])
    ).fetchone()
    delta = value - (old[0] if old else 0)
    request.db.execute("INSERT OR REPLACE INTO votes VALUES (?, ?, ?)", (request.user["id"], row["id"], value))
    request.db.execute("UPDATE posts SET score = score + ? WHERE id = ?", (delta, row["id"]))
    return redirect(f"/post/{row['id']}")


@app.route("POST", "/post/<id>/comment", login=True)
def comment(request: Request) -> Response:
    row = _post(request)
    body = request.field("body")
    if row["locked"]:
        raise HTTPError(403, "This post is locked; no new comments.")
    if not body:
        raise HTTPError(400, "A comment needs some text.")
    request.db.execute(
        "INSERT INTO comments (post_id, user_id, body, created) VALUES (?, ?, ?, '2026-11-01 12:00')",
        (row["id"], request.user["id"], body),
    )
    return redirect(f"/post/{row['id']}#comments")


@app.route("GET", "/f/<slug>/submit", login=True)
def submit_form(request: Request) -> Response:
    return app.render(request, "submit.html", forum=_forum(request), post=None)


@app.route("POST", "/f/<slug>/submit", login=True)
def submit(request: Request) -> Response:
    forum = _forum(request)
    title, body = request.field("title"), request.field("body")
    if not title or not body:
        raise HTTPError(400, "A post needs a title and a body.")
    cur = request.db.execute(
        "INSERT INTO posts (forum_id, user_id, title, body, created, score) VALUES (?, ?, ?, ?, '2026-11-01 12:00', 1)",
        (forum["id"], request.user["id"], title, body),
    )
    return redirect(f"/post/{cur.lastrowid}")


def _own(request: Request) -> sqlite3.Row:
    row = _post(request)
    if row["user_id"] != request.user["id"]:
        raise HTTPError(403, "Only the author can edit this post.")
    return row


@app.route("GET", "/post/<id>/edit", login=True)
def edit_form(request: Request) -> Response:
    row = _own(request)
    forum = request.db.execute("SELECT * FROM forums WHERE id = ?", (row["forum_id"],)).fetchone()
    return app.render(request, "submit.html", forum=forum, post=row)


@app.route("POST", "/post/<id>/edit", login=True)
def edit(request: Request) -> Response:
    row = _own(request)
    title, body = request.field("title"), request.field("body")
    if not title or not body:
        raise HTTPError(400, "A post needs a title and a body.")
    request.db.execute("UPDATE posts SET title = ?, body = ? WHERE id = ?", (title, body, row["id"]))
    return redirect(f"/post/{row['id']}")


@app.route("POST", "/post/<id>/delete", login=True)
def delete(request: Request) -> Response:
    row = _post(request)
    if row["user_id"] != request.user["id"] and request.user["role"] != "moderator":
        raise HTTPError(403, "Only the author or a moderator can delete this post.")
    request.db.execute("UPDATE posts SET deleted = 1 WHERE id = ?", (row["id"],))
    return redirect(f"/f/{row['slug']}")


@app.route("POST", "/post/<id>/lock", login=True)
def lock(request: Request) -> Response:
    row = _post(request)
    if request.user["role"] != "moderator":
        raise HTTPError(403, "Only moderators can lock posts.")
    request.db.execute("UPDATE posts SET locked = 1 - locked WHERE id = ?", (row["id"],))
    return redirect(f"/post/{row['id']}")


@app.route("GET", "/u/<username>")
def profile(request: Request) -> Response:
    row = request.db.execute("SELECT * FROM users WHERE username = ?", (request.params["username"],)).fetchone()
    if row is None:
        raise HTTPError(404, "No such user")
    return app.render(request, "profile.html", person=row, **_listing(request, "p.user_id = ?", [row["id"]]))
