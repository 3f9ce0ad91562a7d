"""Shop: a catalogue with search and pagination, product pages with reviews, a cart, checkout and orders."""

from __future__ import annotations

import random
import sqlite3

from agentenvs.envs.web.sites.framework import App, HTTPError, Request, Response, password_hash, redirect
from agentenvs.envs.web.sites.people import CITIES, FIRST_NAMES, LAST_NAMES, PERSONAS, STREETS, sentence

PAGE_SIZE = 12
SHIPPING = {"standard": 4.99, "express": 14.99, "pickup": 0.0}
CATEGORIES = {
    "kitchen": (
        ["Kettle", "Skillet", "Knife Set", "Cutting Board", "Blender", "Toaster", "Coffee Grinder", "Mug"],
        8,
        180,
    ),
    "outdoor": (
        ["Tent", "Sleeping Bag", "Headlamp", "Backpack", "Water Bottle", "Camp Stove", "Trekking Poles"],
        9,
        420,
    ),
    "electronics": (
        ["Headphones", "Keyboard", "Mouse", "Webcam", "USB Hub", "Speaker", "Charger", "Monitor Arm"],
        12,
        350,
    ),
    "books": (["Cookbook", "Field Guide", "Novel", "Atlas", "Poetry Collection", "Travel Journal"], 6, 45),
    "garden": (["Trowel", "Watering Can", "Pruning Shears", "Planter", "Hose Reel", "Seed Kit"], 5, 120),
    "toys": (["Puzzle", "Building Blocks", "Kite", "Board Game", "Plush Bear", "Yo-yo"], 4, 90),
}
ADJECTIVES = [
    "Classic",
    "Compact",
    "Deluxe",
    "Eco",
    "Pro",
    "Ultra",
    "Vintage",
    "Smart",
    "Rugged",
    "Nordic",
    "Urban",
    "Trail",
]
BRANDS = ["Acme", "Borealis", "Cobalt", "Driftwood", "Ember", "Fjord", "Granite", "Harbor", "Juniper", "Kestrel"]
COLORS = ["black", "white", "red", "blue", "green", "grey", "orange"]

SCHEMA = """
CREATE TABLE users (id INTEGER PRIMARY KEY, username TEXT UNIQUE, password_hash TEXT, full_name TEXT, email TEXT,
  street TEXT, city TEXT, zip TEXT);
CREATE TABLE sessions (id TEXT PRIMARY KEY, user_id INTEGER);
CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT, brand TEXT, category TEXT, price REAL, stock INTEGER,
  color TEXT, description TEXT);
CREATE TABLE reviews (id INTEGER PRIMARY KEY, product_id INTEGER, user_id INTEGER, rating INTEGER, title TEXT,
  body TEXT, created TEXT);
CREATE TABLE cart_items (user_id INTEGER, product_id INTEGER, qty INTEGER, PRIMARY KEY (user_id, product_id));
CREATE TABLE orders (id INTEGER PRIMARY KEY, user_id INTEGER, status TEXT, created TEXT, ship_name TEXT,
  street TEXT, city TEXT, zip TEXT, shipping TEXT, total REAL);
CREATE TABLE order_items (order_id INTEGER, product_id INTEGER, qty INTEGER, price REAL);
"""


def generate(db: sqlite3.Connection, seed: int) -> None:
    """Fill the shop: ~300 products, their reviews, customers and past orders, all from ``seed``."""
    rng = random.Random(seed)
    db.executescript(SCHEMA)
    users = []
    for i, (username, full_name) in enumerate(PERSONAS):
        users.append((i + 1, username, full_name))
    for i in range(len(users), 80):
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        users.append((i + 1, f"{first.lower()}{last.lower()[:3]}{i}", f"{first} {last}"))
    for uid, username, full_name in users:
        db.execute(
            "INSERT INTO users VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                uid,
                username,
                password_hash(f"{username}-pass"),
                full_name,
                f"{username}@example.com",
                f"{rng.randint(1, 999)} {rng.choice(STREETS)}",
                rng.choice(CITIES),
                f"{rng.randint(10000, 99999)}",
            ),
        )
    names: set[str] = set()
    pid = 0
    for category, (nouns, low, high) in CATEGORIES.items():
        for _ in range(50):
            name = f"{rng.choice(BRANDS)} {rng.choice(ADJECTIVES)} {rng.choice(nouns)}"
            if name in names:
                continue
            names.add(name)
            pid += 1
            price = round(rng.uniform(low, high), 2)
            stock = 0 if rng.random() < 0.08 else rng.randint(1, 40)
            color = rng.choice(COLORS)
            desc = f"A {color} {name.split(' ', 1)[1].lower()} by {name.split()[0]}. {sentence(rng, 14)}"
            db.execute(
                "INSERT INTO products VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (pid, name, name.split()[0], category, price, stock, color, desc),
            )
            for _ in range(rng.randint(0, 5)):
                db.execute(
                    "INSERT INTO reviews (product_id, user_id, rating, title, body, created) VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        pid,
                        rng.randint(len(PERSONAS) + 1, 80),
                        rng.randint(1, 5),
                        sentence(rng, 4).rstrip("."),
                        sentence(rng, 18),
                        f"2026-{rng.randint(1, 10):02d}-{rng.randint(1, 28):02d}",
                    ),
                )
    for uid in range(1, 81):
        for k in range(rng.randint(2, 5) if uid <= len(PERSONAS) else rng.randint(0, 2)):
            created = f"2026-{rng.randint(1, 10):02d}-{rng.randint(1, 28):02d}"
            # Every persona has an order still processing (something to cancel) and a history.
            status = "processing" if uid <= len(PERSONAS) and k == 0 else None
            row = db.execute("SELECT full_name, street, city, zip FROM users WHERE id = ?", (uid,)).fetchone()
            cur = db.execute(
                "INSERT INTO orders (user_id, status, created, ship_name, street, city, zip, shipping, total)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, 'standard', 0)",
                (uid, status or rng.choice(["delivered", "delivered", "shipped", "processing"]), created, *row),
            )
            total = SHIPPING["standard"]
            for product in rng.sample(range(1, pid + 1), rng.randint(1, 3)):
                qty = rng.randint(1, 3)
                price = db.execute("SELECT price FROM products WHERE id = ?", (product,)).fetchone()[0]
                db.execute("INSERT INTO order_items VALUES (?, ?, ?, ?)", (cur.lastrowid, product, qty, price))
                total += qty * price
            db.execute("UPDATE orders SET total = ? WHERE id = ?", (round(total, 2), cur.lastrowid))
    db.commit()


app = App("shop", "Northwind Shop", [("/", "Home"), ("/search", "Catalogue"), ("/cart", "Cart"), ("/orders", "Orders")])


def _product(request: Request, product_id: str) -> sqlite3.Row:
    row = request.db.execute("SELECT * FROM products WHERE id = ?", (product_id,)).fetchone()
    if row is None:
        raise HTTPError(404, "No such product")
    return row


@app.route("GET", "/")
def home(request: Request) -> Response:
    counts = request.db.execute(
        "SELECT category, COUNT(*) n FROM products GROUP BY category ORDER BY category"
    ).fetchall()
    featured = request.db.execute(
        "SELECT p.*, AVG(r.rating) avg FROM products p JOIN reviews r ON r.product_id = p.id"
        " GROUP BY p.id HAVING COUNT(r.id) >= 3 ORDER BY avg DESC, p.id LIMIT 6"
    ).fetchall()
    return app.render(request, "home.html", categories=counts, featured=featured)


SORTS = {
    "relevance": "p.id",
    "price_asc": "p.price ASC, p.id",
    "price_desc": "p.price DESC, p.id",
    "name": "p.name, p.id",
}


@app.route("GET", "/search")
def search(request: Request) -> Response:
    q, category, sort = request.arg("q"), request.arg("category"), request.arg("sort", "relevance")
    where, params = ["1=1"], []
    if q:
        for word in q.split()[:8]:
            where.append("(p.name LIKE ? OR p.description LIKE ?)")
            params += [f"%{word}%", f"%{word}%"]
    if category:
        where.append("p.category = ?")
        params.append(category)
    clause = " AND ".join(where)
    total = request.db.execute(f"SELECT COUNT(*) FROM products p WHERE {clause}", params).fetchone()[0]
    page = request.page()
    rows = request.db.execute(
        f"SELECT p.* FROM products p WHERE {clause} ORDER BY {SORTS.get(sort, 'p.id')} LIMIT ? OFFSET ?",
        [*params, PAGE_SIZE, (page - 1) * PAGE_SIZE],
    ).fetchall()
    pages = max(1, -(-total // PAGE_SIZE))
    categories = [r[0] for r in request.db.execute("SELECT DISTINCT category FROM products ORDER BY category")]
    return app.render(
        request,
        "search.html",
        products=rows,
        total=total,
        page=page,
        pages=pages,
        q=q,
        category=category,
        sort=sort,
        categories=categories,
        sorts=list(SORTS),
    )


@app.route("GET", "/product/<id>")
def product(request: Request) -> Response:
    row = _product(request, request.params["id"])
    reviews = request.db.execute(
        "SELECT r.*, u.full_name FROM reviews r JOIN users u ON u.id = r.user_id WHERE r.product_id = ?"
        " ORDER BY r.created DESC, r.id DESC",
        (row["id"],),
    ).fetchall()
    avg = sum(r["rating"] for r in reviews) / len(reviews) if reviews else None
    return app.render(request, "product.html", product=row, reviews=reviews, avg=avg)


@app.route("POST", "/product/<id>/review", login=True)
def review(request: Request) -> Response:
    row = _product(request, request.params["id"])
    rating, title, body = request.field("rating"), request.field("title"), request.field("body")
    if rating not in {"1", "2", "3", "4", "5"} or not title or not body:
        raise HTTPError(400, "A review needs a rating from 1 to 5, a title and a text.")
    request.db.execute(
        "INSERT INTO reviews (product_id, user_id, rating, title, body, created) VALUES (?, ?, ?, ?, ?, '2026-11-01')",
        (row["id"], request.user["id"], int(rating), title, body),
    )
    return redirect(f"/product/{row['id']}#reviews")


@app.route("POST", "/cart/add", login=True)
def cart_add(request: Request) -> Response:
    row = _product(request, request.field("product_id"))
    qty_text = request.field("qty", "1")
    if not qty_text.isdigit() or not 1 <= int(qty_text) <= 99:
        raise HTTPError(400, "Quantity must be a whole number from 1 to 99.")
    if row["stock"] <= 0:
        raise HTTPError(409, f"{row['name']} is out of stock.")
    request.db.execute(
        "INSERT INTO cart_items VALUES (?, ?, ?) ON CONFLICT (user_id, product_id) DO UPDATE SET qty = qty + excluded.qty",
        (request.user["id"], row["id"], int(qty_text)),
    )
    return redirect("/cart")


def _cart(request: Request) -> tuple[list[sqlite3.Row], float]:
    items = request.db.execute(
        "SELECT c.qty, p.* FROM cart_items c JOIN products p ON p.id = c.product_id WHERE c.user_id = ? ORDER BY p.name",
        (request.user["id"],),
    ).fetchall()
    return items, round(sum(i["qty"] * i["price"] for i in items), 2)


@app.route("GET", "/cart", login=True)
def cart(request: Request) -> Response:
    items, subtotal = _cart(request)
    return app.render(request, "cart.html", items=items, subtotal=subtotal)


@app.route("POST", "/cart/update", login=True)
def cart_update(request: Request) -> Response:
    product_id, qty = request.field("product_id"), request.field("qty", "0")
    if not qty.isdigit() or int(qty) > 99:
        raise HTTPError(400, "Quantity must be a whole number from 0 to 99.")
    if int(qty) == 0:
        request.db.execute(
            "DELETE FROM cart_items WHERE user_id = ? AND product_id = ?", (request.user["id"], product_id)
        )
    else:
        request.db.execute(
            "UPDATE cart_items SET qty = ? WHERE user_id = ? AND product_id = ?",
            (int(qty), request.user["id"], product_id),
        )
    return redirect("/cart")


@app.route("GET", "/checkout", login=True)
def checkout_form(request: Request) -> Response:
    items, subtotal = _cart(request)
    return app.render(request, "checkout.html", items=items, subtotal=subtotal, shipping=SHIPPING)


@app.route("POST", "/checkout", login=True)
def checkout(request: Request) -> Response:
    items, subtotal = _cart(request)
    if not items:
        raise HTTPError(400, "Your cart is empty.")
    fields = {k: request.field(k) for k in ("ship_name", "street", "city", "zip", "shipping")}
    if not all(fields.values()) or fields["shipping"] not in SHIPPING:
        raise HTTPError(400, "Fill in the name, street, city, ZIP code and a shipping method.")
    for item in items:
        if item["qty"] > item["stock"]:
            raise HTTPError(409, f"Only {item['stock']} of {item['name']} left.")
    total = round(subtotal + SHIPPING[fields["shipping"]], 2)
    cur = request.db.execute(
        "INSERT INTO orders (user_id, status, created, ship_name, street, city, zip, shipping, total)"
        " VALUES (?, 'processing', '2026-11-01', ?, ?, ?, ?, ?, ?)",
        (request.user["id"], *fields.values(), total),
    )
    for item in items:
        request.db.execute(
            "INSERT INTO order_items VALUES (?, ?, ?, ?)", (cur.lastrowid, item["id"], item["qty"], item["price"])
        )
        request.db.execute("UPDATE products SET stock = stock - ? WHERE id = ?", (item["qty"], item["id"]))
    request.db.execute("DELETE FROM cart_items WHERE user_id = ?", (request.user["id"],))
    return redirect(f"/orders/{cur.lastrowid}")


@app.route("GET", "/orders", login=True)
def orders(request: Request) -> Response:
    rows = request.db.execute(
        "SELECT * FROM orders WHERE user_id = ? ORDER BY created DESC, id DESC", (request.user["id"],)
    ).fetchall()
    return app.render(request, "orders.html", orders=rows)


def _order(request: Request) -> sqlite3.Row:
    row = request.db.execute(
        "SELECT * FROM orders WHERE id = ? AND user_id = ?", (request.params["id"], request.user["id"])
    ).fetchone()
    if row is None:
        raise HTTPError(404, "No such order")
    return row


@app.route("GET", "/orders/<id>", login=True)
def order(request: Request) -> Response:
    row = _order(request)
    items = request.db.execute(
        "SELECT i.*, p.name FROM order_items i JOIN products p ON p.id = i.product_id WHERE i.order_id = ?",
        (row["id"],),
    ).fetchall()
    return app.render(request, "order.html", order=row, items=items)


@app.route("POST", "/orders/<id>/cancel", login=True)
def cancel(request: Request) -> Response:
    row = _order(request)
    if row["status"] != "processing":
        raise HTTPError(409, f"Order {row['id']} is {row['status']} and can no longer be cancelled.")
    request.db.execute("UPDATE orders SET status = 'cancelled' WHERE id = ?", (row["id"],))
    return redirect(f"/orders/{row['id']}")
