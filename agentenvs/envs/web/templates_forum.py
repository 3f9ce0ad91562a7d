"""Task templates on the forum: each ``build(rng, db)`` yields one seeded instance (see ``templates_shop``)."""

from __future__ import annotations

import random
import sqlite3
from typing import Any

from agentenvs.envs.web.sites.people import PERSONAS

NOT_INFEASIBLE = {"check": "web.infeasible", "args": {"expected": False}}
MEMBERS = [p[0] for p in PERSONAS if p[0] != "emma"]
COMMENTS = "SELECT COUNT(*) FROM comments c WHERE c.post_id = ?"


def _sql(sql: str, expect: Any, params: list[Any] | None = None, op: str = "==") -> dict[str, Any]:
    return {
        "check": "web.sql",
        "args": {"site": "forum", "sql": sql, "expect": expect, "params": params or [], "op": op},
    }


def _post(rng: random.Random, db: sqlite3.Connection, where: str = "1=1", params: tuple[Any, ...] = ()) -> sqlite3.Row:
    rows = db.execute(
        f"SELECT p.*, f.slug FROM posts p JOIN forums f ON f.id = p.forum_id WHERE p.deleted = 0 AND {where} ORDER BY p.id",
        params,
    ).fetchall()
    return rng.choice(rows)


def _slugs(db: sqlite3.Connection) -> list[str]:
    return [r[0] for r in db.execute("SELECT slug FROM forums ORDER BY slug")]


def top_post(rng: random.Random, db: sqlite3.Connection) -> dict[str, Any]:
    slug = rng.choice(_slugs(db))
    rows = db.execute(
        "SELECT p.title FROM posts p JOIN forums f ON f.id = p.forum_id WHERE f.slug = ? ORDER BY p.score DESC, p.id",
        (slug,),
    ).fetchall()
    newest = db.execute(
        "SELECT p.title FROM posts p JOIN forums f ON f.id = p.forum_id WHERE f.slug = ? ORDER BY p.created DESC, p.id DESC",
        (slug,),
    ).fetchone()
    wrong = newest[0] if newest[0] != rows[0][0] else rows[1][0]
    return {
        "instruction": f"What is the title of the highest-scoring post on the {slug} board? Reply with the exact title.",
        "persona": None,
        "start": "forum:/",
        "tags": ["information-seeking"],
        "difficulty": "easy",
        "evaluator": [{"check": "web.answer", "args": {"expected": rows[0][0]}}, NOT_INFEASIBLE],
        "oracle": [["goto", f"forum:/f/{slug}?sort=top"], ["msg", rows[0][0]]],
        "wrong": [["goto", f"forum:/f/{slug}"], ["msg", wrong]],
    }


def comment_count(rng: random.Random, db: sqlite3.Connection) -> dict[str, Any]:
    p = _post(rng, db, "p.score != (SELECT COUNT(*) FROM comments c WHERE c.post_id = p.id)")
    n = db.execute(COMMENTS, (p["id"],)).fetchone()[0]
    return {
        "instruction": f'How many comments does the post "{p["title"]}" have? Reply with the number only.',
        "persona": None,
        "start": "forum:/",
        "tags": ["information-seeking", "search"],
        "difficulty": "easy",
        "evaluator": [{"check": "web.answer", "args": {"expected": n, "match": "number"}}, NOT_INFEASIBLE],
        "oracle": [["goto", f"forum:/post/{p['id']}"], ["msg", str(n)]],
        "wrong": [["goto", f"forum:/post/{p['id']}"], ["msg", str(p["score"])]],
    }


def user_posts(rng: random.Random, db: sqlite3.Connection) -> dict[str, Any]:
    username = rng.choice([r[0] for r in db.execute("SELECT username FROM users WHERE id > 4 ORDER BY id")])
    n = db.execute(
        "SELECT COUNT(*) FROM posts p JOIN users u ON u.id = p.user_id WHERE u.username = ?", (username,)
    ).fetchone()[0]
    comments = db.execute(
        "SELECT COUNT(*) FROM comments c JOIN users u ON u.id = c.user_id WHERE u.username = ?", (username,)
    ).fetchone()[0]
    return {
        "instruction": f"How many posts has the user {username} written on the forum? Reply with the number only.",
        "persona": None,
        "start": "forum:/",
        "tags": ["information-seeking"],
        "difficulty": "easy",
        "evaluator": [{"check": "web.answer", "args": {"expected": n, "match": "number"}}, NOT_INFEASIBLE],
        "oracle": [["goto", f"forum:/u/{username}"], ["msg", str(n)]],
        "wrong": [["goto", f"forum:/u/{username}"], ["msg", str(comments if comments != n else n + 1)]],
    }


def create_post(rng: random.Random, db: sqlite3.Connection) -> dict[str, Any]:
    slug, other = rng.sample(_slugs(db), 2)
    username = rng.choice(MEMBERS)
    title = (
        f"{rng.choice(['Looking for advice on', 'Show and tell:', 'Anyone tried'])} {rng.choice(['a', 'my'])} "
        f"{rng.choice(['new setup', 'first project', 'weekend plan', 'budget option'])} #{rng.randint(10, 99)}"
    )
    body = rng.choice(["Any pointers are welcome.", "Photos in the comments soon.", "Happy to share what I learned."])
    mine = (
        "SELECT COUNT(*) FROM posts p JOIN users u ON u.id = p.user_id JOIN forums f ON f.id = p.forum_id"
        " WHERE u.username = ? AND p.title = ?"
    )
    steps = [["fill", "#title", title], ["fill", "#body", body], ["click", "#post-form button[type=submit]"]]
    return {
        "instruction": f'Start a new post on the {slug} board titled "{title}" with the text "{body}"',
        "persona": username,
        "start": "forum:/",
        "tags": ["content-creation"],
        "difficulty": "easy",
        "checkpoints": [{"name": "post-created", **_sql(mine, 1, [username, title], ">=")}],
        "evaluator": [
            _sql(mine + " AND p.body = ? AND f.slug = ? AND p.deleted = 0", 1, [username, title, body, slug]),
            _sql(mine, 1, [username, title]),
            NOT_INFEASIBLE,
        ],
        "oracle": [["goto", f"forum:/f/{slug}/submit"], *steps],
        "wrong": [["goto", f"forum:/f/{other}/submit"], *steps],
    }


def reply(rng: random.Random, db: sqlite3.Connection) -> dict[str, Any]:
    p = _post(rng, db, "p.locked = 0")
    other = _post(rng, db, "p.locked = 0 AND p.id != ?", (p["id"],))
    username = rng.choice(MEMBERS)
    text = rng.choice(["Thanks, this helped me a lot.", "I had the same problem last year.", "Great write-up!"])
    mine = "SELECT COUNT(*) FROM comments c JOIN users u ON u.id = c.user_id WHERE u.username = ? AND c.body = ?"
    return {
        "instruction": f'Reply to the post "{p["title"]}" with the comment "{text}"',
        "persona": username,
        "start": "forum:/",
        "tags": ["content-creation", "search"],
        "difficulty": "easy",
        "checkpoints": [{"name": "commented", **_sql(mine, 1, [username, text], ">=")}],
        "evaluator": [
            _sql(mine + " AND c.post_id = ?", 1, [username, text, p["id"]]),
            _sql(mine, 1, [username, text]),
            NOT_INFEASIBLE,
        ],
        "oracle": [
            ["goto", f"forum:/search?q={p['title'].split(' (')[0]}"],
            ["goto", f"forum:/post/{p['id']}"],
            ["fill", "#comment", text],
            ["click", "#comment-form button"],
        ],
        "wrong": [
            ["goto", f"forum:/post/{other['id']}"],
            ["fill", "#comment", text],
            ["click", "#comment-form button"],
        ],
    }


def upvote(rng: random.Random, db: sqlite3.Connection) -> dict[str, Any]:
    p, username = _post(rng, db), rng.choice(MEMBERS)
    vote = "SELECT v.value FROM votes v JOIN users u ON u.id = v.user_id WHERE u.username = ? AND v.post_id = ?"
    return {
        "instruction": f'Upvote the post "{p["title"]}" on the {p["slug"]} board.',
        "persona": username,
        "start": "forum:/",
        "tags": ["transaction"],
        "difficulty": "easy",
        "evaluator": [
            _sql(vote, 1, [username, p["id"]]),
            _sql("SELECT score FROM posts WHERE id = ?", p["score"] + 1, [p["id"]]),
            NOT_INFEASIBLE,
        ],
        "oracle": [["goto", f"forum:/post/{p['id']}"], ["click", "#vote button[value=up]"]],
        "wrong": [["goto", f"forum:/post/{p['id']}"], ["click", "#vote button[value=down]"]],
    }


def edit_title(rng: random.Random, db: sqlite3.Connection) -> dict[str, Any]:
    username = rng.choice(MEMBERS)
    p = _post(rng, db, "p.user_id = (SELECT id FROM users WHERE username = ?)", (username,))
    new = p["title"].split(" (")[0] + " [solved]"
    steps = [["goto", f"forum:/post/{p['id']}/edit"]]
    save = ["click", "#post-form button[type=submit]"]
    return {
        "instruction": f'Rename your post "{p["title"]}" to "{new}" (keep its text).',
        "persona": username,
        "start": "forum:/",
        "tags": ["content-creation", "edit"],
        "difficulty": "medium",
        "evaluator": [
            _sql("SELECT title FROM posts WHERE id = ?", new, [p["id"]]),
            _sql("SELECT body FROM posts WHERE id = ?", p["body"], [p["id"]]),
            NOT_INFEASIBLE,
        ],
        "oracle": [*steps, ["fill", "#title", new], save],
        "wrong": [*steps, ["fill", "#title", new], ["fill", "#body", new], save],
    }


def moderate_delete(rng: random.Random, db: sqlite3.Connection) -> dict[str, Any]:
    p = _post(rng, db, "p.user_id > 4")
    open_dialog = [["goto", f"forum:/post/{p['id']}"], ["click", '[data-dialog="delete-dialog"]']]
    return {
        "instruction": f'As a moderator, delete the post "{p["title"]}" on the {p["slug"]} board (it breaks the rules).',
        "persona": "emma",
        "start": "forum:/",
        "tags": ["moderation", "modal"],
        "difficulty": "medium",
        "evaluator": [
            _sql("SELECT deleted FROM posts WHERE id = ?", 1, [p["id"]]),
            _sql("SELECT COUNT(*) FROM posts WHERE deleted = 1", 1),
            NOT_INFEASIBLE,
        ],
        "oracle": [*open_dialog, ["click", "#delete-dialog button[type=submit]"]],
        "wrong": [["goto", f"forum:/post/{p['id']}"], ["click", 'form[action$="/lock"] button']],
    }


def delete_others(rng: random.Random, db: sqlite3.Connection) -> dict[str, Any]:
    username = rng.choice(MEMBERS)
    p = _post(rng, db, "p.user_id > 4")
    return {
        "instruction": f'Delete the post "{p["title"]}" on the {p["slug"]} board.',
        "persona": username,
        "start": "forum:/",
        "tags": ["infeasible", "permissions"],
        "difficulty": "medium",
        "infeasible": True,
        "evaluator": [
            {"check": "web.infeasible", "args": {"expected": True}},
            _sql("SELECT COUNT(*) FROM posts WHERE deleted = 1", 0),
        ],
        "oracle": [
            ["goto", f"forum:/post/{p['id']}"],
            ["infeasible", "Only the author or a moderator can delete this post, and I am neither."],
        ],
        "wrong": [["goto", f"forum:/post/{p['id']}"], ["click", "#vote button[value=down]"]],
    }


def browse_page(rng: random.Random, db: sqlite3.Connection) -> dict[str, Any]:
    slug, page = rng.choice(_slugs(db)), rng.randint(2, 3)
    sort = rng.choice(["top", "comments"])
    return {
        "instruction": f"Open page {page} of the {slug} board's posts sorted by {sort}.",
        "persona": None,
        "start": "forum:/",
        "tags": ["navigation", "pagination"],
        "difficulty": "easy",
        "evaluator": [
            {
                "check": "web.url",
                "args": {"site": "forum", "pattern": rf"/f/{slug}\?(?=.*\bsort={sort}\b)(?=.*\bpage={page}\b).*"},
            },
            NOT_INFEASIBLE,
        ],
        "oracle": [["goto", f"forum:/f/{slug}?sort={sort}&page={page}"]],
        "wrong": [["goto", f"forum:/f/{slug}?sort=new&page={page}"]],
    }


TEMPLATES = {
    "forum-top-post": top_post,
    "forum-comment-count": comment_count,
    "forum-user-posts": user_posts,
    "forum-create-post": create_post,
    "forum-reply": reply,
    "forum-upvote": upvote,
    "forum-edit-title": edit_title,
    "forum-moderate-delete": moderate_delete,
    "forum-delete-others": delete_others,
    "forum-browse-page": browse_page,
}
