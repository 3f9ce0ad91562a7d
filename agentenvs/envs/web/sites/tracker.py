"""Tracker: projects with issues, labels, assignees and milestones; filters, pagination, a close dialog."""

from __future__ import annotations

import random
import sqlite3

from agentenvs.envs.web.sites.framework import App, HTTPError, Request, Response, password_hash, redirect
from agentenvs.envs.web.sites.people import FIRST_NAMES, PERSONAS, sentence

PAGE_SIZE = 20
PROJECTS = {"WEB": "Website", "API": "Public API", "MOB": "Mobile app", "OPS": "Infrastructure"}
LABELS = ["bug", "feature", "docs", "urgent", "good first issue", "performance", "security", "ux"]
PRIORITIES = ["low", "medium", "high", "critical"]
CLOSE_REASONS = ["completed", "won't fix", "duplicate"]
VERBS = ["Fix", "Add", "Improve", "Remove", "Refactor", "Document", "Investigate", "Speed up"]
THINGS = [
    "login redirect",
    "search filters",
    "export to CSV",
    "dark mode",
    "rate limiting",
    "password reset email",
    "image upload",
    "pagination",
    "error messages",
    "cache invalidation",
    "date picker",
    "audit log",
    "onboarding flow",
    "push notifications",
    "backup job",
    "TLS renewal",
    "billing page",
    "sitemap",
]

SCHEMA = """
CREATE TABLE users (id INTEGER PRIMARY KEY, username TEXT UNIQUE, password_hash TEXT, full_name TEXT);
CREATE TABLE sessions (id TEXT PRIMARY KEY, user_id INTEGER);
CREATE TABLE projects (id INTEGER PRIMARY KEY, key TEXT UNIQUE, name TEXT);
CREATE TABLE milestones (id INTEGER PRIMARY KEY, project_id INTEGER, title TEXT, due TEXT);
CREATE TABLE labels (id INTEGER PRIMARY KEY, name TEXT UNIQUE);
CREATE TABLE issues (id INTEGER PRIMARY KEY, project_id INTEGER, number INTEGER, title TEXT, body TEXT,
  status TEXT, close_reason TEXT, priority TEXT, assignee_id INTEGER, milestone_id INTEGER, author_id INTEGER,
  created TEXT, UNIQUE (project_id, number));
CREATE TABLE issue_labels (issue_id INTEGER, label_id INTEGER, PRIMARY KEY (issue_id, label_id));
CREATE TABLE comments (id INTEGER PRIMARY KEY, issue_id INTEGER, user_id INTEGER, body TEXT, created TEXT);
"""


def generate(db: sqlite3.Connection, seed: int) -> None:
    """Fill the tracker: 4 projects, 3 milestones each, ~480 issues with labels and comments, from ``seed``."""
    rng = random.Random(seed)
    db.executescript(SCHEMA)
    people = list(PERSONAS) + [(n.lower(), f"{n} {rng.choice('ABCDEFGHJKLMNPRST')}.") for n in FIRST_NAMES[:12]]
    for uid, (username, full_name) in enumerate(people, start=1):
        db.execute(
            "INSERT INTO users VALUES (?, ?, ?, ?)", (uid, username, password_hash(f"{username}-pass"), full_name)
        )
    for lid, name in enumerate(LABELS, start=1):
        db.execute("INSERT INTO labels VALUES (?, ?)", (lid, name))
    for pid, (key, name) in enumerate(PROJECTS.items(), start=1):
        db.execute("INSERT INTO projects VALUES (?, ?, ?)", (pid, key, name))
        for k, (title, due) in enumerate([("v1.0", "2026-09-30"), ("v1.1", "2026-12-15"), ("v2.0", "2027-03-31")]):
            db.execute("INSERT INTO milestones VALUES (?, ?, ?, ?)", (pid * 10 + k, pid, title, due))
        for number in range(1, 121):
            status = "closed" if rng.random() < 0.35 else "open"
            cur = db.execute(
                "INSERT INTO issues (project_id, number, title, body, status, close_reason, priority, assignee_id,"
                " milestone_id, author_id, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    pid,
                    number,
                    f"{rng.choice(VERBS)} {rng.choice(THINGS)}",
                    " ".join(sentence(rng, 12) for _ in range(2)),
                    status,
                    rng.choice(CLOSE_REASONS) if status == "closed" else None,
                    rng.choice(PRIORITIES),
                    rng.choice([None, *range(1, len(people) + 1)]),
                    pid * 10 + rng.randint(0, 2),
                    rng.randint(1, len(people)),
                    f"2026-{rng.randint(1, 10):02d}-{rng.randint(1, 28):02d}",
                ),
            )
            for lid in rng.sample(range(1, len(LABELS) + 1), rng.randint(0, 3)):
                db.execute("INSERT INTO issue_labels VALUES (?, ?)", (cur.lastrowid, lid))
            for _ in range(rng.randint(0, 4)):
                db.execute(
                    "INSERT INTO comments (issue_id, user_id, body, created) VALUES (?, ?, ?, '2026-10-30')",
                    (cur.lastrowid, rng.randint(1, len(people)), sentence(rng, 10)),
                )
    db.commit()


app = App("tracker", "Tracker", [("/", "Projects"), ("/mine", "Assigned to me")])


def _project(request: Request) -> sqlite3.Row:
    row = request.db.execute("SELECT * FROM projects WHERE key = ?", (request.params["key"],)).fetchone()
    if row is None:
        raise HTTPError(404, "No such project")
    return row


LIST = (
    "SELECT i.*, p.key, u.username assignee, m.title milestone, (SELECT GROUP_CONCAT(l.name, ', ') FROM issue_labels il"
    " JOIN labels l ON l.id = il.label_id WHERE il.issue_id = i.id) label_names FROM issues i JOIN projects p ON"
    " p.id = i.project_id LEFT JOIN users u ON u.id = i.assignee_id LEFT JOIN milestones m ON m.id = i.milestone_id"
)


@app.route("GET", "/")
def projects(request: Request) -> Response:
    rows = request.db.execute(
        "SELECT p.*, (SELECT COUNT(*) FROM issues i WHERE i.project_id = p.id AND i.status = 'open')"
        " open FROM projects p ORDER BY p.key"
    ).fetchall()
    return app.render(request, "projects.html", projects=rows)


@app.route("GET", "/p/<key>/issues")
def issues(request: Request) -> Response:
    project = _project(request)
    where, params = ["i.project_id = ?"], [project["id"]]
    filters = {k: request.arg(k) for k in ("state", "label", "assignee", "milestone", "q")}
    if filters["state"] in ("open", "closed"):
        where.append("i.status = ?")
        params.append(filters["state"])
    if filters["label"]:
        where.append(
            "EXISTS (SELECT 1 FROM issue_labels il JOIN labels l ON l.id = il.label_id WHERE il.issue_id = i.id"
            " AND l.name = ?)"
        )
        params.append(filters["label"])
    if filters["assignee"]:
        where.append("u.username = ?")
        params.append(filters["assignee"])
    if filters["milestone"]:
        where.append("m.title = ?")
        params.append(filters["milestone"])
    for word in filters["q"].split()[:8]:
        where.append("(i.title LIKE ? OR i.body LIKE ?)")
        params += [f"%{word}%", f"%{word}%"]
    clause = " AND ".join(where)
    total = request.db.execute(f"SELECT COUNT(*) FROM ({LIST} WHERE {clause})", params).fetchone()[0]
    page = request.page()
    rows = request.db.execute(
        f"{LIST} WHERE {clause} ORDER BY i.number DESC LIMIT ? OFFSET ?", [*params, PAGE_SIZE, (page - 1) * PAGE_SIZE]
    ).fetchall()
    return app.render(
        request,
        "issues.html",
        project=project,
        issues=rows,
        filters=filters,
        total=total,
        page=page,
        pages=max(1, -(-total // PAGE_SIZE)),
        **_choices(request, project),
    )


def _choices(request: Request, project: sqlite3.Row) -> dict[str, list[sqlite3.Row]]:
    return {
        "labels": request.db.execute("SELECT * FROM labels ORDER BY name").fetchall(),
        "users": request.db.execute("SELECT * FROM users ORDER BY username").fetchall(),
        "milestones": request.db.execute(
            "SELECT * FROM milestones WHERE project_id = ? ORDER BY id", (project["id"],)
        ).fetchall(),
    }


def _issue(request: Request) -> sqlite3.Row:
    project = _project(request)
    row = request.db.execute(
        f"{LIST} WHERE i.project_id = ? AND i.number = ?", (project["id"], request.params["number"])
    ).fetchone()
    if row is None:
        raise HTTPError(404, "No such issue")
    return row


@app.route("GET", "/p/<key>/issues/<number>")
def issue(request: Request) -> Response:
    row = _issue(request)
    comments = request.db.execute(
        "SELECT c.*, u.username FROM comments c JOIN users u ON u.id = c.user_id WHERE c.issue_id = ? ORDER BY c.id",
        (row["id"],),
    ).fetchall()
    mine = {r[0] for r in request.db.execute("SELECT label_id FROM issue_labels WHERE issue_id = ?", (row["id"],))}
    return app.render(
        request,
        "issue.html",
        issue=row,
        comments=comments,
        mine=mine,
        reasons=CLOSE_REASONS,
        priorities=PRIORITIES,
        **_choices(request, _project(request)),
    )


def _apply_fields(request: Request, issue_id: int, project_id: int) -> None:
    """Assignee, milestone, priority and labels from the sidebar form, each validated."""
    assignee, milestone, priority = request.field("assignee"), request.field("milestone"), request.field("priority")
    user = request.db.execute("SELECT id FROM users WHERE username = ?", (assignee,)).fetchone() if assignee else None
    if assignee and user is None:
        raise HTTPError(400, f"No user {assignee}")
    stone = (
        request.db.execute(
            "SELECT id FROM milestones WHERE id = ? AND project_id = ?", (milestone, project_id)
        ).fetchone()
        if milestone
        else None
    )
    if priority not in PRIORITIES:
        raise HTTPError(400, "Pick a priority.")
    request.db.execute(
        "UPDATE issues SET assignee_id = ?, milestone_id = ?, priority = ? WHERE id = ?",
        (user[0] if user else None, stone[0] if stone else None, priority, issue_id),
    )
    request.db.execute("DELETE FROM issue_labels WHERE issue_id = ?", (issue_id,))
    for label in request.form.get("labels", []):
        row = request.db.execute("SELECT id FROM labels WHERE id = ?", (label,)).fetchone()
        if row is not None:
            request.db.execute("INSERT OR IGNORE INTO issue_labels VALUES (?, ?)", (issue_id, row[0]))


@app.route("POST", "/p/<key>/issues/<number>/update", login=True)
def update(request: Request) -> Response:
    row = _issue(request)
    _apply_fields(request, row["id"], row["project_id"])
    return redirect(f"/p/{row['key']}/issues/{row['number']}")


@app.route("POST", "/p/<key>/issues/<number>/state", login=True)
def state(request: Request) -> Response:
    row = _issue(request)
    if row["status"] == "open":
        reason = request.field("reason")
        if reason not in CLOSE_REASONS:
            raise HTTPError(400, "Closing needs a reason.")
        request.db.execute("UPDATE issues SET status = 'closed', close_reason = ? WHERE id = ?", (reason, row["id"]))
    else:
        request.db.execute("UPDATE issues SET status = 'open', close_reason = NULL WHERE id = ?", (row["id"],))
    return redirect(f"/p/{row['key']}/issues/{row['number']}")


@app.route("POST", "/p/<key>/issues/<number>/comment", login=True)
def comment(request: Request) -> Response:
    row = _issue(request)
    if not request.field("body"):
        raise HTTPError(400, "A comment needs text.")
    request.db.execute(
        "INSERT INTO comments (issue_id, user_id, body, created) VALUES (?, ?, ?, '2026-11-01')",
        (row["id"], request.user["id"], request.field("body")),
    )
    return redirect(f"/p/{row['key']}/issues/{row['number']}")


@app.route("GET", "/p/<key>/new", login=True)
def new_form(request: Request) -> Response:
    project = _project(request)
    return app.render(request, "new.html", project=project, priorities=PRIORITIES, **_choices(request, project))


@app.route("POST", "/p/<key>/new", login=True)
def new(request: Request) -> Response:
    project = _project(request)
    title = request.field("title")
    if not title:
        raise HTTPError(400, "An issue needs a title.")
    number = request.db.execute(
        "SELECT COALESCE(MAX(number), 0) + 1 FROM issues WHERE project_id = ?", (project["id"],)
    ).fetchone()[0]
    cur = request.db.execute(
        "INSERT INTO issues (project_id, number, title, body, status, priority, author_id, created)"
        " VALUES (?, ?, ?, ?, 'open', 'medium', ?, '2026-11-01')",
        (project["id"], number, title, request.field("body"), request.user["id"]),
    )
    _apply_fields(request, cur.lastrowid, project["id"])
    return redirect(f"/p/{project['key']}/issues/{number}")


@app.route("GET", "/mine", login=True)
def mine(request: Request) -> Response:
    rows = request.db.execute(
        f"{LIST} WHERE i.assignee_id = ? AND i.status = 'open' ORDER BY p.key, i.number", (request.user["id"],)
    ).fetchall()
    return app.render(request, "mine.html", issues=rows)
