"""Task templates on the project tracker (see ``templates_shop`` for the shape)."""

from __future__ import annotations

import random
import sqlite3
from typing import Any

from agentenvs.envs.web.sites.people import PERSONAS

NOT_INFEASIBLE = {"check": "web.infeasible", "args": {"expected": False}}
KEYS = ["WEB", "API", "MOB", "OPS"]
ISSUE = "SELECT {} FROM issues i JOIN projects p ON p.id = i.project_id WHERE p.key = ? AND i.number = ?"


def _sql(sql: str, expect: Any, params: list[Any] | None = None, op: str = "==") -> dict[str, Any]:
    return {
        "check": "web.sql",
        "args": {"site": "tracker", "sql": sql, "expect": expect, "params": params or [], "op": op},
    }


def _issue(rng: random.Random, db: sqlite3.Connection, where: str = "1=1") -> sqlite3.Row:
    rows = db.execute(
        "SELECT i.*, p.key, u.username assignee, a.username author FROM issues i JOIN projects p ON p.id = i.project_id"
        f" LEFT JOIN users u ON u.id = i.assignee_id JOIN users a ON a.id = i.author_id WHERE {where} ORDER BY i.id"
    ).fetchall()
    return rng.choice(rows)


def open_count(rng: random.Random, db: sqlite3.Connection) -> dict[str, Any]:
    key, label = rng.choice(KEYS), rng.choice(["bug", "feature", "docs", "security", "performance"])
    count = (
        "SELECT COUNT(*) FROM issues i JOIN projects p ON p.id = i.project_id JOIN issue_labels il ON il.issue_id ="
        " i.id JOIN labels l ON l.id = il.label_id WHERE p.key = ? AND l.name = ?"
    )
    n = db.execute(count + " AND i.status = 'open'", (key, label)).fetchone()[0]
    everything = db.execute(count, (key, label)).fetchone()[0]
    return {
        "instruction": f'How many open issues labelled "{label}" does the {key} project have? Reply with the number only.',
        "persona": None,
        "start": "tracker:/",
        "tags": ["information-seeking", "filters"],
        "difficulty": "easy",
        "evaluator": [{"check": "web.answer", "args": {"expected": n, "match": "number"}}, NOT_INFEASIBLE],
        "oracle": [["goto", f"tracker:/p/{key}/issues?state=open&label={label}"], ["msg", str(n)]],
        "wrong": [
            ["goto", f"tracker:/p/{key}/issues?label={label}"],
            ["msg", str(everything if everything != n else n + 1)],
        ],
    }


def assignee(rng: random.Random, db: sqlite3.Connection) -> dict[str, Any]:
    i = _issue(rng, db, "i.assignee_id IS NOT NULL AND i.assignee_id != i.author_id")
    return {
        "instruction": f"Who is assigned to issue {i['key']}-{i['number']}? Reply with their username only.",
        "persona": None,
        "start": "tracker:/",
        "tags": ["information-seeking"],
        "difficulty": "easy",
        "evaluator": [{"check": "web.answer", "args": {"expected": i["assignee"]}}, NOT_INFEASIBLE],
        "oracle": [["goto", f"tracker:/p/{i['key']}/issues/{i['number']}"], ["msg", i["assignee"]]],
        "wrong": [["goto", f"tracker:/p/{i['key']}/issues/{i['number']}"], ["msg", i["author"]]],
    }


def create_issue(rng: random.Random, db: sqlite3.Connection) -> dict[str, Any]:
    key, username = rng.choice(KEYS), rng.choice(PERSONAS)[0]
    title = f"{rng.choice(['Crash when', 'Typo when', 'Timeout when'])} {rng.choice(['saving drafts', 'opening settings', 'exporting reports'])}"
    label, owner, priority = (
        rng.choice(["bug", "urgent", "ux"]),
        rng.choice(["olivia", "noah", "grace"]),
        rng.choice(["high", "critical"]),
    )
    made = ISSUE.format("COUNT(*)").replace("i.number = ?", "i.title = ?")
    exact = (
        made + " AND i.priority = ? AND i.assignee_id = (SELECT id FROM users WHERE username = ?) AND EXISTS (SELECT 1"
        " FROM issue_labels il JOIN labels l ON l.id = il.label_id WHERE il.issue_id = i.id AND l.name = ?)"
    )
    plan = [
        ["goto", f"tracker:/p/{key}/new"],
        ["fill", "#title", title],
        ["select", "#priority", priority],
        ["select", "#assignee", owner],
    ]
    create = ["click", "#new-issue button[type=submit]"]
    return {
        "instruction": f'File a new {priority}-priority issue in {key} titled "{title}", assigned to {owner}, labelled {label}.',
        "persona": username,
        "start": "tracker:/",
        "tags": ["content-creation", "forms"],
        "difficulty": "medium",
        "checkpoints": [{"name": "issue-filed", **_sql(made, 1, [key, title], ">=")}],
        "evaluator": [
            _sql(exact, 1, [key, title, priority, owner, label]),
            _sql(made, 1, [key, title]),
            NOT_INFEASIBLE,
        ],
        "oracle": [*plan, ["check", f"#label-{label}"], create],
        "wrong": [*plan, create],
    }


def close_issue(rng: random.Random, db: sqlite3.Connection) -> dict[str, Any]:
    i, reason = _issue(rng, db, "i.status = 'open'"), rng.choice(["duplicate", "won't fix"])
    dialog = [["goto", f"tracker:/p/{i['key']}/issues/{i['number']}"], ["click", '[data-dialog="state-dialog"]']]
    return {
        "instruction": f'Close issue {i["key"]}-{i["number"]} with the reason "{reason}".',
        "persona": rng.choice(PERSONAS)[0],
        "start": "tracker:/",
        "tags": ["transaction", "modal"],
        "difficulty": "easy",
        "evaluator": [
            _sql(ISSUE.format("i.status || ':' || i.close_reason"), f"closed:{reason}", [i["key"], i["number"]]),
            NOT_INFEASIBLE,
        ],
        "oracle": [*dialog, ["select", "#reason", reason], ["click", "#state-dialog button[type=submit]"]],
        "wrong": [*dialog, ["click", "#state-dialog button[type=submit]"]],
    }


def triage(rng: random.Random, db: sqlite3.Connection) -> dict[str, Any]:
    i = _issue(rng, db, "i.status = 'open' AND i.priority != 'high' AND i.milestone_id % 10 != 1")
    owner = rng.choice([u for u in ("liam", "olivia", "noah", "ava") if u != i["assignee"]])
    milestone = db.execute(
        "SELECT id, title FROM milestones WHERE project_id = ? AND title = 'v1.1'", (i["project_id"],)
    ).fetchone()
    where = [i["key"], i["number"]]
    plan = [
        ["goto", f"tracker:/p/{i['key']}/issues/{i['number']}"],
        ["select", "#assignee", owner],
        ["select", "#priority", "high"],
    ]
    return {
        "instruction": (
            f"Triage issue {i['key']}-{i['number']}: assign it to {owner}, set its priority to high and "
            "put it in milestone v1.1."
        ),
        "persona": rng.choice(PERSONAS)[0],
        "start": "tracker:/",
        "tags": ["transaction", "multi-step"],
        "difficulty": "medium",
        "checkpoints": [
            {
                "name": "assigned",
                **_sql(ISSUE.format("(SELECT username FROM users WHERE id = i.assignee_id)"), owner, where),
            },
            {"name": "priority", **_sql(ISSUE.format("i.priority"), "high", where)},
            {"name": "milestone", **_sql(ISSUE.format("i.milestone_id"), milestone["id"], where)},
        ],
        "evaluator": [
            _sql(
                ISSUE.format(
                    "(SELECT username FROM users WHERE id = i.assignee_id) || ':' || i.priority || ':' ||"
                    " i.milestone_id"
                ),
                f"{owner}:high:{milestone['id']}",
                where,
            ),
            _sql(ISSUE.format("i.status"), "open", where),
            NOT_INFEASIBLE,
        ],
        "oracle": [*plan, ["select", "#milestone", "v1.1"], ["click", "#fields button[type=submit]"]],
        "wrong": [*plan, ["select", "#milestone", "v2.0"], ["click", "#fields button[type=submit]"]],
    }


def move_issue(rng: random.Random, db: sqlite3.Connection) -> dict[str, Any]:
    i = _issue(rng, db, "i.status = 'open'")
    target = rng.choice([k for k in KEYS if k != i["key"]])
    page = [["goto", f"tracker:/p/{i['key']}/issues/{i['number']}"]]
    return {
        "instruction": f"Move issue {i['key']}-{i['number']} into the {target} project, keeping its history.",
        "persona": rng.choice(PERSONAS)[0],
        "start": "tracker:/",
        "tags": ["infeasible"],
        "difficulty": "medium",
        "infeasible": True,
        "evaluator": [
            {"check": "web.infeasible", "args": {"expected": True}},
            _sql(ISSUE.format("i.status"), "open", [i["key"], i["number"]]),
        ],
        "oracle": [*page, ["infeasible", "The tracker has no way to move an issue between projects."]],
        "wrong": [*page, ["fill", "#comment", f"Moved to {target}."], ["click", "#comment-form button"]],
    }


TEMPLATES = {
    "tracker-open-count": open_count,
    "tracker-assignee": assignee,
    "tracker-create-issue": create_issue,
    "tracker-close-issue": close_issue,
    "tracker-triage": triage,
    "tracker-move-issue": move_issue,
}
