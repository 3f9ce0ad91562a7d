"""Running the env server: in the foreground (``agentenvs serve``) or on a thread (tests, notebooks)."""

from __future__ import annotations

import ipaddress
import secrets
import threading
import time
from types import TracebackType

import uvicorn

from agentenvs.serve.app import create_app
from agentenvs.serve.sessions import EnvFactory, SessionManager, make_registered_env


def new_token() -> str:
    return secrets.token_urlsafe(24)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _config(
    host: str, port: int, token: str, max_sessions: int, idle_timeout: float, make_env: EnvFactory
) -> uvicorn.Config:
    manager = SessionManager(max_sessions=max_sessions, idle_timeout=idle_timeout, make_env=make_env)
    app = create_app(token, manager)
    return uvicorn.Config(app, host=host, port=port, ws="websockets-sansio", log_level="warning", ws_max_size=64 << 20)


def serve_forever(
    host: str = "127.0.0.1",
    port: int = 8765,
    *,
    token: str,
    max_sessions: int = 16,
    idle_timeout: float = 600.0,
) -> None:
    """Serve until interrupted; every session is closed on the way out."""
    uvicorn.Server(_config(host, port, token, max_sessions, idle_timeout, make_registered_env)).run()


class BackgroundServer:
    """The env server on a thread of this process, on a free loopback port: ``with BackgroundServer() as s:``.

    ``s.url`` and ``s.token`` are what ``agentenvs.remote`` takes; ``s.manager`` is the live sessions.
    """

    def __init__(
        self,
        *,
        token: str | None = None,
        max_sessions: int = 16,
        idle_timeout: float = 600.0,
        make_env: EnvFactory = make_registered_env,
        host: str = "127.0.0.1",
        port: int = 0,
    ):
        self.token = token or new_token()
        config = _config(host, port, self.token, max_sessions, idle_timeout, make_env)
        self.manager: SessionManager = config.app.state.manager
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="agentenvs-serve", daemon=True)
        self.url = ""

    def start(self, timeout: float = 30.0) -> BackgroundServer:
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the env server did not start (is the port free?)")
            time.sleep(0.01)
        host, port = self._server.servers[0].sockets[0].getsockname()[:2]
        self.url = f"http://{host}:{port}"
        return self

    def stop(self, timeout: float = 60.0) -> None:
        self._server.should_exit = True
        self._thread.join(timeout)

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
