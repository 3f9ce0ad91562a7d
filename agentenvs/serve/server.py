"""Running the env server: in the foreground (``agentenvs serve``) or on a thread (tests, notebooks).

The server is the standard library's threading HTTP server: one thread per
connection, so a WebSocket's messages are read, dispatched and answered on
the thread that owns the socket, and a step on a session that connection
owns crosses no thread at all (it was three: an event loop, the session's
thread, and back through the loop).
"""

from __future__ import annotations

import ipaddress
import secrets
import signal
import socket
import sys
import threading
import time
from http.server import ThreadingHTTPServer
from types import TracebackType
from typing import Any

from agentenvs.serve.app import Dispatcher, RequestHandler
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


class EnvServer(ThreadingHTTPServer):
    """The HTTP and WebSocket server over one ``SessionManager``.

    Connections are bounded (``max_connections``; past it a connection gets
    503 and is closed), and ``stop`` ends every live one and every session.
    Reading a request is bounded in time (``head_timeout``, ``body_rate``): a
    watchdog thread stops reading a connection whose request is late, which
    its handler then answers 408, so no client holds a connection by sending
    its request a byte at a time.
    """

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(
        self,
        address: tuple[str, int],
        token: str,
        manager: SessionManager,
        max_connections: int,
        head_timeout: float = 20.0,
    ):
        if not token:
            raise ValueError("the env server needs a token")
        self.token = token
        self.manager = manager
        self.dispatch = Dispatcher(manager)
        self.max_connections = max_connections
        #: Seconds a request's head (request line and headers) may take to arrive, from its first byte.
        self.head_timeout = head_timeout
        #: The slowest a body may arrive, in bytes a second (beyond ``head_timeout``).
        self.body_rate = 256 << 10
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        self._deadlines: dict[socket.socket, float] = {}
        self._late: set[socket.socket] = set()
        self._stopping = threading.Event()
        super().__init__(address, RequestHandler)

    def set_deadline(self, connection: socket.socket, seconds: float) -> None:
        """Stop reading ``connection`` if what it is reading has not arrived ``seconds`` from now."""
        with self._connections_lock:
            self._deadlines[connection] = time.monotonic() + seconds

    def clear_deadline(self, connection: socket.socket) -> bool:
        """Whether the deadline passed (and the connection was cut off); either way it is gone."""
        with self._connections_lock:
            self._deadlines.pop(connection, None)
            late = connection in self._late
            self._late.discard(connection)
        return late

    def is_late(self, connection: socket.socket) -> bool:
        return connection in self._late

    def _watch(self) -> None:
        """Every quarter second, end the reading of each connection past its deadline."""
        while not self._stopping.wait(0.25):
            now = time.monotonic()
            with self._connections_lock:
                late = [connection for connection, deadline in self._deadlines.items() if deadline < now]
                for connection in late:
                    del self._deadlines[connection]
                    self._late.add(connection)
            for connection in late:
                try:
                    connection.shutdown(socket.SHUT_RD)  # the handler's read ends; it can still answer 408
                except OSError:
                    pass

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            full = len(self._connections) >= self.max_connections
            if not full:
                self._connections.add(request)
        if full:
            body = b'{"status": 503, "error": "the server has too many open connections: retry", "type": "ServeError"}'
            head = f"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: {len(body)}"
            try:
                request.sendall(head.encode() + b"\r\nConnection: close\r\n\r\n" + body)
            except OSError:
                pass
            self.shutdown_request(request)
            return
        request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().process_request(request, client_address)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away mid-reply is no error of the server's: nothing to print."""
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._connections_lock:
            self._connections.discard(request)
            self._deadlines.pop(request, None)
            self._late.discard(request)
        super().shutdown_request(request)

    def serve(self) -> None:
        """Serve until ``stop`` (or an interrupt); every session is closed on the way out."""
        self.manager.start_reaper()
        threading.Thread(target=self._watch, name="agentenvs-serve-watchdog", daemon=True).start()
        try:
            self.serve_forever(poll_interval=0.2)
        finally:
            self._end()

    def stop(self) -> None:
        """Stop accepting, end every connection (their sessions close with them) and every session."""
        self.shutdown()

    def _end(self) -> None:
        self._stopping.set()
        with self._connections_lock:
            live = list(self._connections)
        for connection in live:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.manager.close_all()
        self.server_close()


def _server(
    host: str,
    port: int,
    token: str,
    max_sessions: int,
    idle_timeout: float,
    make_env: EnvFactory,
    head_timeout: float = 20.0,
) -> EnvServer:
    manager = SessionManager(max_sessions=max_sessions, idle_timeout=idle_timeout, make_env=make_env)
    return EnvServer((host, port), token, manager, max_connections=4 * max_sessions + 16, head_timeout=head_timeout)


def serve_forever(
    host: str = "127.0.0.1",
    port: int = 8765,
    *,
    token: str,
    max_sessions: int = 16,
    idle_timeout: float = 600.0,
) -> None:
    """Serve until interrupted (Ctrl-C or SIGTERM); every session is closed on the way out."""
    server = _server(host, port, token, max_sessions, idle_timeout, make_registered_env)

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)
    try:
        server.serve()
    except KeyboardInterrupt:
        pass


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
        head_timeout: float = 20.0,
    ):
        self.token = token or new_token()
        self._server = _server(host, port, self.token, max_sessions, idle_timeout, make_env, head_timeout)
        self.manager: SessionManager = self._server.manager
        self._thread = threading.Thread(target=self._server.serve, name="agentenvs-serve", daemon=True)
        host, port = self._server.server_address[:2]
        self.url = f"http://{host}:{port}"

    def start(self) -> BackgroundServer:
        """Serve on the thread; the socket listens already, so a client may connect at once."""
        self._thread.start()
        return self

    def stop(self, timeout: float = 60.0) -> None:
        self._server.stop()
        self._thread.join(timeout)

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
