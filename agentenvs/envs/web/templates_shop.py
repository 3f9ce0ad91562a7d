"""Task templates on the shop: each ``build(rng, db)`` yields one seeded instance.

``db`` is the shop's snapshot (read-only): a template picks real records,
and writes its expected answer and the SQL its checkers run. Plans are the
oracle's and the plausible wrong solution's steps (see ``plans.py``).
"""

from __future__ import annotations

import random
import sqlite3
import urllib.parse
from typing import Any

from agentenvs.envs.web.sites.people import PERSONAS

ADD_BUTTON = 'form[action="/cart/add"] button'
NOT_INFEASIBLE = {"check": "web.infeasible", "args": {"expected": False}}


def _pick_product(rng: random.Random, db: sqlite3.Connection, in_stock: bool = True) -> sqlite3.Row:
    rows = db.execute(f"SELECT * FROM products WHERE stock {'>= 6' if in_stock else '= 0'} ORDER BY id").fetchall()
    return rng.choice(rows)


def _sql(sql: str, expect: Any, params: list[Any] | None = None, op: str = "==") -> dict[str, Any]:
    return {
        "check": "web.sql",
        "args": {"site": "shop", "sql": sql, "expect": expect, "params": params or [], "op": op},
    }


def _max_order(db: sqlite3.Connection) -> int:
    return int(db.execute("SELECT MAX(id) FROM orders").fetchone()[0])


def price(rng: random.Random, db: sqlite3.Connection) -> dict[str, Any]:
    p = _pick_product(rng, db)
    other = db.execute(
        "SELECT price FROM products WHERE id != ? AND category = ? ORDER BY id", (p["id"], p["category"])
    ).fetchone()
    return {
        "instruction": f'What is the price, in dollars, of "{p["name"]}" in the shop? Reply with the number only.',
        "persona": None,
        "start": "shop:/",
        "tags": ["information-seeking"],
        "difficulty": "easy",
        "evaluator": [{"check": "web.answer", "args": {"expected": p["price"], "match": "number"}}, NOT_INFEASIBLE],
        "oracle": [
            ["goto", f"shop:/search?q={urllib.parse.quote(p['name'])}"],
            ["goto", f"shop:/product/{p['id']}"],
            ["msg", f"{p['price']:.2f}"],
        ],
        "wrong": [["goto", f"shop:/search?q={urllib.parse.quote(p['name'])}"], ["msg", f"{other['price']:.2f}"]],
    }


def cheapest(rng: random.Random, db: sqlite3.Connection) -> dict[str, Any]:
    category = rng.choice([r[0] for r in db.execute("SELECT DISTINCT category FROM products ORDER BY category")])
    rows = db.execute("SELECT name, price FROM products WHERE category = ? ORDER BY price, id", (category,)).fetchall()
    return {
        "instruction": f"Which product in the {category} category of the shop is the cheapest? Reply with its exact name.",
        "persona": None,
        "start": "shop:/",
        "tags": ["information-seeking"],
        "difficulty": "easy",
        "evaluator": [{"check": "web.answer", "args": {"expected": rows[0]["name"]}}, NOT_INFEASIBLE],
        "oracle": [["goto", f"shop:/search?category={category}&sort=price_asc"], ["msg", rows[0]["name"]]],
        "wrong": [["goto", f"shop:/search?category={category}"], ["msg", rows[-1]["name"]]],
    }


def order_count(rng: random.Random, db: sqlite3.Connection) -> dict[str, Any]:
    username = rng.choice(PERSONAS)[0]
    uid = db.execute("SELECT id FROM users WHERE username = ?", (username,)).fetchone()[0]
    n = db.execute("SELECT COUNT(*) FROM orders WHERE user_id = ? AND status = 'delivered'", (uid,)).fetchone()[0]
    total = db.execute("SELECT COUNT(*) FROM orders WHERE user_id = ?", (uid,)).fetchone()[0]
    return {
        "instruction": "How many of your orders in the shop have been delivered? Reply with the number only.",
        "persona": username,
        "start": "shop:/",
        "tags": ["information-seeking", "login"],
        "difficulty": "easy",
        "evaluator": [{"check": "web.answer", "args": {"expected": n, "match": "number"}}, NOT_INFEASIBLE],
        "oracle": [["goto", "shop:/orders"], ["msg", str(n)]],
        "wrong": [["goto", "shop:/orders"], ["msg", str(total if total != n else n + 1)]],
    }


def add_to_cart(rng: random.Random, db: sqlite3.Connection) -> dict[str, Any]:
    p, qty, username = _pick_product(rng, db), rng.randint(2, 5), rng.choice(PERSONAS)[0]
    in_cart = "SELECT qty FROM cart_items c JOIN users u ON u.id = c.user_id WHERE u.username = ? AND c.product_id = ?"
    return {
        "instruction": f'Add {qty} units of "{p["name"]}" to your shopping cart (do not place an order).',
        "persona": username,
        "start": "shop:/",
        "tags": ["transaction"],
        "difficulty": "easy",
        "checkpoints": [{"name": "in-cart", "weight": 1.0, **_sql(in_cart, 1, [username, p["id"]], ">=")}],
        "evaluator": [
            _sql(in_cart, qty, [username, p["id"]]),
            _sql("SELECT COUNT(*) FROM orders WHERE id > ?", 0, [_max_order(db)]),
            NOT_INFEASIBLE,
        ],
        "oracle": [["goto", f"shop:/product/{p['id']}"], ["fill", "#qty", str(qty)], ["click", ADD_BUTTON]],
        "wrong": [["goto", f"shop:/product/{p['id']}"], ["click", ADD_BUTTON]],
    }


def buy(rng: random.Random, db: sqlite3.Connection) -> dict[str, Any]:
    p, qty, username = _pick_product(rng, db), rng.randint(1, 3), rng.choice(PERSONAS)[0]
    street = f"{rng.randint(1, 300)} {rng.choice(['Birch', 'Cedar', 'Willow', 'Aspen'])} Way"
    city, zipcode = rng.choice(["Portsmouth", "Eastbrook", "Millford", "Westhaven"]), f"{rng.randint(10000, 99999)}"
    base = _max_order(db)
    new_order = (
        "SELECT COUNT(*) FROM orders o JOIN order_items i ON i.order_id = o.id WHERE o.id > ? AND i.product_id = ?"
        " AND i.qty = ?"
    )
    exact = new_order + " AND o.street = ? AND o.city = ? AND o.zip = ? AND o.shipping = 'express'"
    in_cart = (
        "SELECT (SELECT COUNT(*) FROM cart_items c JOIN users u ON u.id = c.user_id WHERE u.username = ?"
        " AND c.product_id = ?) + (" + new_order.replace(" AND i.qty = ?", "") + ")"
    )
    plan = [
        ["goto", f"shop:/product/{p['id']}"],
        ["fill", "#qty", str(qty)],
        ["click", ADD_BUTTON],
        ["goto", "shop:/checkout"],
        ["fill", "#street", street],
        ["fill", "#city", city],
        ["fill", "#zip", zipcode],
    ]
    return {
        "instruction": (
            f'Buy {qty} of "{p["name"]}" with express shipping, delivered to {street}, {city} {zipcode} '
            "(keep your own name on the order)."
        ),
        "persona": username,
        "start": "shop:/",
        "tags": ["transaction", "multi-step"],
        "difficulty": "medium",
        "checkpoints": [
            {"name": "in-cart", **_sql(in_cart, 1, [username, p["id"], base, p["id"]], ">=")},
            {"name": "order-placed", **_sql(new_order, 1, [base, p["id"], qty], ">=")},
            {"name": "right-address", **_sql(exact, 1, [base, p["id"], qty, street, city, zipcode], ">=")},
        ],
        "evaluator": [
            _sql(exact, 1, [base, p["id"], qty, street, city, zipcode]),
            _sql("SELECT COUNT(*) FROM orders WHERE id > ?", 1, [base]),
            NOT_INFEASIBLE,
        ],
        "oracle": [*plan, ["select", "#shipping", "express"], ["click", "#checkout button"]],
        "wrong": [*plan, ["click", "#checkout button"]],
    }


def review(rng: random.Random, db: sqlite3.Connection) -> dict[str, Any]:
    p, rating, username = _pick_product(rng, db), rng.randint(1, 4), rng.choice(PERSONAS)[0]
    title = rng.choice(
        ["Not what I hoped", "Decent for the price", "Solid but heavy", "Does the job", "Mixed feelings"]
    )
    body = rng.choice(
        [
            "The handle broke after a week.",
            "Shipping was fast, the finish is rough.",
            "Works fine, a bit noisy.",
            "Smaller than the photos suggest.",
        ]
    )
    mine = "SELECT {} FROM reviews r JOIN users u ON u.id = r.user_id WHERE u.username = ? AND r.product_id = ?"
    plan = [["goto", f"shop:/product/{p['id']}"], ["click", '[data-dialog="review-dialog"]']]
    fill = [["fill", "#title", title], ["fill", "#body", body], ["click", "#review-dialog button[type=submit]"]]
    return {
        "instruction": f'Post a {rating}-star review of "{p["name"]}" titled "{title}" with the text "{body}"',
        "persona": username,
        "start": "shop:/",
        "tags": ["content-creation", "modal"],
        "difficulty": "medium",
        "checkpoints": [{"name": "review-posted", **_sql(mine.format("COUNT(*)"), 1, [username, p["id"]], ">=")}],
        "evaluator": [
            _sql(
                mine.format("COUNT(*)") + " AND r.rating = ? AND r.title = ? AND r.body = ?",
                1,
                [username, p["id"], rating, title, body],
            ),
            _sql(mine.format("COUNT(*)"), 1, [username, p["id"]]),
            NOT_INFEASIBLE,
        ],
        "oracle": [*plan, ["select", "#rating", f"{rating} stars"], *fill],
        "wrong": [*plan, *fill],
    }


def cancel_order(rng: random.Random, db: sqlite3.Connection) -> dict[str, Any]:
    rows = db.execute(
        "SELECT u.username, MAX(o.id) id FROM orders o JOIN users u ON u.id = o.user_id WHERE o.status = 'processing'"
        " AND u.id <= ? GROUP BY u.id ORDER BY u.id",
        (len(PERSONAS),),
    ).fetchall()
    username, order_id = rng.choice(rows)
    latest = db.execute(
        "SELECT o.id FROM orders o JOIN users u ON u.id = o.user_id WHERE u.username = ? AND "
        "o.status = 'processing' ORDER BY o.created DESC, o.id DESC",
        (username,),
    ).fetchone()[0]
    open_dialog = [["goto", f"shop:/orders/{latest}"], ["click", '[data-dialog="cancel-dialog"]']]
    return {
        "instruction": "Cancel your most recently placed order that is still processing.",
        "persona": username,
        "start": "shop:/",
        "tags": ["transaction", "modal"],
        "difficulty": "medium",
        "evaluator": [
            _sql("SELECT status FROM orders WHERE id = ?", "cancelled", [latest]),
            _sql("SELECT COUNT(*) FROM orders WHERE status = 'cancelled'", 1),
            NOT_INFEASIBLE,
        ],
        "oracle": [*open_dialog, ["click", "#cancel-dialog button[type=submit]"]],
        "wrong": [*open_dialog, ["click", "#cancel-dialog [data-close]"]],
    }


def buy_out_of_stock(rng: random.Random, db: sqlite3.Connection) -> dict[str, Any]:
    p, username = _pick_product(rng, db, in_stock=False), rng.choice(PERSONAS)[0]
    return {
        "instruction": f'Buy one "{p["name"]}" with standard shipping to your own address.',
        "persona": username,
        "start": "shop:/",
        "tags": ["infeasible"],
        "difficulty": "easy",
        "infeasible": True,
        "evaluator": [
            {"check": "web.infeasible", "args": {"expected": True}},
            _sql("SELECT COUNT(*) FROM orders WHERE id > ?", 0, [_max_order(db)]),
        ],
        "oracle": [["goto", f"shop:/product/{p['id']}"], ["infeasible", f"{p['name']} is out of stock."]],
        "wrong": [["goto", f"shop:/product/{p['id']}"], ["msg", "It is out of stock, so I could not buy it."]],
    }


def browse_sorted(rng: random.Random, db: sqlite3.Connection) -> dict[str, Any]:
    category = rng.choice([r[0] for r in db.execute("SELECT DISTINCT category FROM products ORDER BY category")])
    direction = rng.choice([("high to low", "price_desc"), ("low to high", "price_asc")])
    other = "price_asc" if direction[1] == "price_desc" else "price_desc"
    plan = [["goto", "shop:/search"], ["select", "#category", category.capitalize()]]
    return {
        "instruction": f"Open the catalogue page that lists only {category} products, sorted by price from {direction[0]}.",
        "persona": None,
        "start": "shop:/",
        "tags": ["navigation"],
        "difficulty": "easy",
        "evaluator": [
            {
                "check": "web.url",
                "args": {
                    "site": "shop",
                    "pattern": rf"/search\?(?=.*\bcategory={category}\b)(?=.*\bsort={direction[1]}\b).*",
                },
            },
            NOT_INFEASIBLE,
        ],
        "oracle": [*plan, ["select", "#sort", direction[1].replace("_", " ")], ["click", "form[role=search] button"]],
        "wrong": [*plan, ["select", "#sort", other.replace("_", " ")], ["click", "form[role=search] button"]],
    }


TEMPLATES = {
    "shop-price": price,
    "shop-cheapest": cheapest,
    "shop-order-count": order_count,
    "shop-add-to-cart": add_to_cart,
    "shop-buy": buy,
    "shop-review": review,
    "shop-cancel-order": cancel_order,
    "shop-buy-out-of-stock": buy_out_of_stock,
    "shop-browse-sorted": browse_sorted,
}
