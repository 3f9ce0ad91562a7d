"""A small server-rendered web framework on the standard library, for our sites.

Each site is a process of its own with two loopback listeners: the app the
agent's browser uses, and a control plane only the env talks to (a random
token, a port the browser's allow-list never includes). The app opens the
episode's SQLite file per request, so the control plane resets an episode
by copying the snapshot over it, forks one with SQLite's backup API, and
answers checkers' queries on a read-only connection.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import json
import re
import secrets
import shutil
import sqlite3
import threading
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jinja2

from agentenvs.envs.web.sites import session_cookie

TEMPLATES = Path(__file__).parent / "templates"
MAX_BODY = 1 << 20


def password_hash(password: str) -> str:
    return hashlib.sha256(("agentenvs:" + password).encode()).hexdigest()


@dataclass
class Request:
    """What a handler sees: the parsed request, the episode's database and the logged-in user."""

    method: str
    path: str
    query: dict[str, str]
    form: dict[str, list[str]]
    cookies: dict[str, str]
    db: sqlite3.Connection
    user: sqlite3.Row | None = None
    params: dict[str, str] = field(default_factory=dict)

    def arg(self, name: str, default: str = "") -> str:
        return self.query.get(name, default)

    def field(self, name: str, default: str = "") -> str:
        values = self.form.get(name)
        return values[0].strip() if values else default

    def page(self) -> int:
        text = self.arg("page", "1")
        return max(1, int(text)) if text.isdigit() and len(text) < 6 else 1


@dataclass
class Response:
    body: str = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


def redirect(location: str) -> Response:
    return Response(status=303, headers={"Location": location})


Handler = Callable[[Request], Response]


class HTTPError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class App:
    """Routes, templates and sessions of one site."""

    def __init__(self, name: str, title: str, nav: list[tuple[str, str]]):
        self.name = name
        self.title = title
        self.nav = nav
        self.routes: list[tuple[str, re.Pattern[str], Handler, bool]] = []
        #: Cookies ignore ports: each site's session cookie has its own name, so sites on one host never clash.
        self.cookie = session_cookie(name)
        self.jinja = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True)
        self.route("GET", "/login")(self._login_form)
        self.route("POST", "/login")(self._login)
        self.route("POST", "/logout")(self._logout)

    def _login_form(self, request: Request) -> Response:
        return self.render(request, "login.html", next=request.arg("next", "/"), error="")

    def _login(self, request: Request) -> Response:
        sid = self.login_user(request.db, request.field("username"), request.field("password"))
        target = request.field("next", "/")
        # Only this site's own paths: browsers read "/\\host" (and tabs or newlines in it) as "//host".
        if not target.startswith("/") or target.startswith("//") or any(c in target for c in "\\\t\r\n"):
            target = "/"
        if sid is None:
            response = self.render(request, "login.html", next=target, error="Wrong username or password.")
            response.status = 401
            return response
        return Response(
            status=303, headers={"Location": target, "Set-Cookie": f"{self.cookie}={sid}; Path=/; HttpOnly"}
        )

    def _logout(self, request: Request) -> Response:
        if request.cookies.get(self.cookie):
            request.db.execute("DELETE FROM sessions WHERE id = ?", (request.cookies[self.cookie],))
        return Response(status=303, headers={"Location": "/", "Set-Cookie": f"{self.cookie}=; Path=/; Max-Age=0"})

    def route(self, method: str, pattern: str, *, login: bool = False) -> Callable[[Handler], Handler]:
        """Register a handler; ``<name>`` in the pattern matches one path segment."""
        regex = re.compile("^" + re.sub(r"<(\w+)>", r"(?P<\1>[^/]+)", pattern) + "$")

        def register(fn: Handler) -> Handler:
            self.routes.append((method, regex, fn, login))
            # Literal paths win over patterns (``/mail/compose`` before ``/mail/<folder>``).
            self.routes.sort(key=lambda r: r[1].groups)
            return fn

        return register

    def render(self, request: Request, template: str, **context: Any) -> Response:
        name = template if template in ("login.html",) else f"{self.name}/{template}"
        page = self.jinja.get_template(name)
        return Response(page.render(app=self, user=request.user, request=request, **context))

    def login_user(self, db: sqlite3.Connection, username: str, password: str) -> str | None:
        """A new session id when the credentials match a user, else None."""
        row = db.execute("SELECT id, password_hash FROM users WHERE username = ?", (username,)).fetchone()
        if row is None or not hmac.compare_digest(row["password_hash"], password_hash(password)):
            return None
        return new_session(db, row["id"])

    def handle(self, request: Request) -> Response:
        sid = request.cookies.get(self.cookie)
        if sid:
            request.user = request.db.execute(
                "SELECT u.* FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.id = ?", (sid,)
            ).fetchone()
        for method, regex, fn, login in self.routes:
            match = regex.match(request.path)
            if match and method == request.method:
                if login and request.user is None:
                    return redirect("/login?next=" + urllib.parse.quote(request.path))
                request.params = match.groupdict()
                return fn(request)
        raise HTTPError(404, f"No page at {request.path}")


def new_session(db: sqlite3.Connection, user_id: int) -> str:
    sid = secrets.token_hex(16)
    db.execute("INSERT INTO sessions (id, user_id) VALUES (?, ?)", (sid, user_id))
    db.commit()
    return sid


def connect(path: Path, readonly: bool = False) -> sqlite3.Connection:
    uri = f"file:{path}?mode=ro" if readonly else f"file:{path}"
    db = sqlite3.connect(uri, uri=True, timeout=10, check_same_thread=False)
    db.row_factory = sqlite3.Row
    if readonly:
        db.execute("PRAGMA query_only = ON")
    return db


class SiteState:
    """The episode database behind one site process; writes are serialised by a lock."""

    def __init__(self, app: App, snapshot: Path, db_path: Path):
        self.app = app
        self.snapshot = snapshot
        self.db_path = db_path
        self.lock = threading.RLock()
        self.reset()

    def reset(self) -> None:
        with self.lock:
            for suffix in ("-wal", "-shm", "-journal"):
                Path(f"{self.db_path}{suffix}").unlink(missing_ok=True)
            shutil.copyfile(self.snapshot, self.db_path)

    def fork(self, dest: Path) -> None:
        with self.lock:
            src, dst = connect(self.db_path, readonly=True), sqlite3.connect(dest)
            try:
                src.backup(dst)
            finally:
                src.close()
                dst.close()

    def adopt(self, source: Path) -> None:
        """Make ``source`` (a fork) this site's episode state."""
        with self.lock:
            shutil.copyfile(source, self.db_path)

    def query(self, sql: str, params: list[Any]) -> list[list[Any]]:
        db = connect(self.db_path, readonly=True)
        try:
            return [list(row) for row in db.execute(sql, params).fetchmany(10_000)]
        finally:
            db.close()


def _error_page(status: int, message: str) -> str:
    text = html.escape(message)
    return f"<!doctype html><title>Error {status}</title><h1>Error {status}</h1><p>{text}</p><a href='/'>Home</a>"


def app_handler(state: SiteState) -> type[BaseHTTPRequestHandler]:
    class AppHandler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
            pass

        def _serve(self) -> None:
            parts = urllib.parse.urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(min(length, MAX_BODY)) if length else b""
            form = urllib.parse.parse_qs(raw.decode("utf-8", "replace"), keep_blank_values=True)
            cookies = {k: m.value for k, m in SimpleCookie(self.headers.get("Cookie", "")).items()}
            query = {k: v[0] for k, v in urllib.parse.parse_qs(parts.query, keep_blank_values=True).items()}
            with state.lock:
                db = connect(state.db_path)
                try:
                    request = Request(self.command, parts.path or "/", query, form, cookies, db)
                    response = state.app.handle(request)
                    db.commit()
                except HTTPError as exc:
                    response = Response(_error_page(exc.status, str(exc)), status=exc.status)
                finally:
                    db.close()
            body = response.body.encode()
            self.send_response(response.status)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            for key, value in response.headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _serve

    return AppHandler


def control_handler(state: SiteState, token: str) -> type[BaseHTTPRequestHandler]:
    """The env's side: reset, fork, adopt, query, session; every call needs the token."""

    class ControlHandler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

        def _reply(self, status: int, payload: Any) -> None:
            body = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            if not hmac.compare_digest(self.headers.get("X-Control-Token", ""), token):
                return self._reply(403, {"error": "bad token"})
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(min(length, MAX_BODY)) or b"{}")
                result = self._dispatch(self.path, body)
            except (sqlite3.Error, OSError, ValueError, KeyError) as exc:
                return self._reply(400, {"error": f"{type(exc).__name__}: {exc}"})
            self._reply(200, result)

        def _dispatch(self, path: str, body: dict[str, Any]) -> Any:
            if path == "/health":
                return {"ok": True, "site": state.app.name}
            if path == "/reset":
                state.reset()
                return {"ok": True}
            if path == "/fork":
                state.fork(Path(body["dest"]))
                return {"ok": True}
            if path == "/adopt":
                state.adopt(Path(body["source"]))
                return {"ok": True}
            if path == "/query":
                return {"rows": state.query(str(body["sql"]), list(body.get("params", [])))}
            if path == "/session":
                with state.lock:
                    db = connect(state.db_path)
                    try:
                        row = db.execute("SELECT id FROM users WHERE username = ?", (body["user"],)).fetchone()
                        if row is None:
                            raise KeyError(f"no user {body['user']!r}")
                        return {"sid": new_session(db, row["id"])}
                    finally:
                        db.close()
            raise KeyError(f"no control endpoint {path}")

    return ControlHandler


def serve(app: App, snapshot: Path, db_path: Path, token: str) -> tuple[ThreadingHTTPServer, ThreadingHTTPServer]:
    """Start the app and control listeners on ephemeral loopback ports (in threads)."""
    state = SiteState(app, snapshot, db_path)
    servers = (
        ThreadingHTTPServer(("127.0.0.1", 0), app_handler(state)),
        ThreadingHTTPServer(("127.0.0.1", 0), control_handler(state, token)),
    )
    for server in servers:
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
    return servers
