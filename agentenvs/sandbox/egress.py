"""The verifier's way out: an HTTP proxy inside a sandbox's own network namespace, to an allow-list only.

A sandbox has no network: its namespace holds only loopback. To let a
verifier's ``pip install pytest`` reach PyPI and nothing else, the host
(root) opens a listening socket on 127.0.0.1 *inside* that namespace (a
short-lived thread enters it with ``setns``; the socket stays there) and
serves it from the host: ``CONNECT`` tunnels and plain ``GET``s, only to the
hosts on the list, never to the host's loopback services, link-local neighbours or
private networks. No file, process or route is added to
the sandbox, so it works the same on both backends. Every request is
recorded, so a verifier that failed because a host was refused or
unreachable is told apart from an agent's failure by what the gate saw,
which the sandbox cannot forge.
"""

from __future__ import annotations

import ctypes
import fnmatch
import ipaddress
import os
import re
import select
import socket
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentenvs.core.errors import SandboxError
from agentenvs.core.task import Task

#: The package registries a verifier may reach when its task allows network (Debian, Ubuntu, PyPI, npm,
#: Go, crates).
REGISTRIES = (
    "deb.debian.org",
    "security.debian.org",
    "archive.ubuntu.com",
    "security.ubuntu.com",
    "pypi.org",
    "files.pythonhosted.org",
    "registry.npmjs.org",
    "proxy.golang.org",
    "sum.golang.org",
    "index.crates.io",
    "static.crates.io",
)
#: Where Harbor's standard verifier (Terminal-Bench 2's test.sh) gets its test runner: uv's installer from
#: astral.sh, uv itself and the Python of ``uvx -p 3.13`` from Astral's mirror or GitHub's releases.
TOOL_HOSTS = (
    "astral.sh",
    "releases.astral.sh",
    "github.com",
    "objects.githubusercontent.com",
    "release-assets.githubusercontent.com",
)
#: What a verifier may reach when its task says nothing of the network, or allows it (our stand-in for
#: Harbor's open network; the agent's processes are gone by then).
DEFAULT_ALLOW = REGISTRIES + TOOL_HOSTS
CLONE_NEWNET = 0x40000000
_HEAD_LIMIT = 16 * 1024
_IDLE_SEC = 60.0
_CONNECT_SEC = 10.0
_MAX_CLIENTS = 32
_libc = ctypes.CDLL(None, use_errno=True)


@dataclass(frozen=True)
class Attempt:
    """One request the gate saw: where to, and what became of it."""

    host: str
    port: int
    outcome: Literal["allowed", "refused", "unreachable"]
    reason: str = ""


def _listen_inside(netns: Path) -> socket.socket:
    """A TCP socket on 127.0.0.1 (any free port) that belongs to the network namespace ``netns``."""
    made: list[socket.socket | BaseException] = []

    def enter_and_bind() -> None:  # setns changes only this thread, which ends right after
        try:
            fd = os.open(netns, os.O_RDONLY)
            try:
                if _libc.setns(fd, CLONE_NEWNET) != 0:
                    err = ctypes.get_errno()
                    raise OSError(err, f"entering {netns}: {os.strerror(err)}")
            finally:
                os.close(fd)
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listener.bind(("127.0.0.1", 0))
            listener.listen(_MAX_CLIENTS)
            made.append(listener)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            made.append(exc)

    worker = threading.Thread(target=enter_and_bind, name="agentenvs-egress-bind", daemon=True)
    worker.start()
    worker.join(10)
    if not made:
        raise SandboxError(f"opening the verifier's gate in {netns} did not finish")
    if isinstance(made[0], BaseException):
        raise SandboxError(f"opening the verifier's gate in {netns} failed: {made[0]}")
    return made[0]


#: Never reached through the gate, whatever a name resolves to: this host's loopback services, its
#: link-local neighbours, and the private networks other hosts sit on.
_NEVER = tuple(
    ipaddress.ip_network(n)
    for n in (
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
        "192.168.0.0/16", "224.0.0.0/4", "240.0.0.0/4", "::/128", "::1/128", "fc00::/7", "fe80::/10", "ff00::/8",
    )
)  # fmt: skip


def _reachable_address(host: str, port: int) -> tuple[str, int] | str:
    """An address of ``host`` the gate may connect to, or why there is none."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        return f"does not resolve ({exc.strerror})"
    for family, _, _, _, address in infos:
        if family not in (socket.AF_INET, socket.AF_INET6):
            continue
        ip = ipaddress.ip_address(address[0])
        mapped = getattr(ip, "ipv4_mapped", None) or ip
        if not any(mapped in net for net in _NEVER if net.version == mapped.version) and not _own(family, address[0]):
            return address[0], port
    return "resolves only to this host's own, loopback, link-local or private addresses"


def _own(family: int, address: str) -> bool:
    """Whether ``address`` is one of this host's (binding to it succeeds only then)."""
    probe = socket.socket(family, socket.SOCK_STREAM)
    try:
        probe.bind((address, 0))
        return True
    except OSError:
        return False
    finally:
        probe.close()


def _pump(a: socket.socket, b: socket.socket) -> None:
    """Copy bytes both ways until either side closes or both stay idle for ``_IDLE_SEC``."""
    sockets = [a, b]
    while True:
        readable, _, _ = select.select(sockets, [], [], _IDLE_SEC)
        if not readable:
            return
        for source in readable:
            data = source.recv(65536)
            if not data:
                return
            (b if source is a else a).sendall(data)


class EgressGate:
    """An allow-listed HTTP proxy on 127.0.0.1 inside one sandbox's network namespace, while open."""

    def __init__(self, netns: Path, allow: Iterable[str]):
        self.allow = tuple(allow)
        self.attempts: list[Attempt] = []
        self._lock = threading.Lock()
        self._listener = _listen_inside(netns)
        self.port = int(self._listener.getsockname()[1])
        self._clients: set[socket.socket] = set()
        self._slots = threading.BoundedSemaphore(_MAX_CLIENTS)
        self._closed = False
        self._acceptor = threading.Thread(target=self._accept, name="agentenvs-egress", daemon=True)
        self._acceptor.start()

    def env(self, peers: Iterable[str] = ()) -> dict[str, str]:
        """The proxy variables a verifier's tools (pip, apt, curl, git, npm, uv, go) read; ``peers`` (a compose
        task's services) are reached directly, as before."""
        url = f"http://127.0.0.1:{self.port}"
        names = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")
        direct = ",".join(["localhost", "127.0.0.1", "0.0.0.0", "::1", *peers])
        # uv trusts only its own bundled roots unless told otherwise, so behind a TLS-inspecting proxy
        # (whose CA our images trust) `uv run --with pytest` fails with UnknownIssuer where pip works;
        # uv 0.11 renamed the setting UV_SYSTEM_CERTS, and older ones read UV_NATIVE_TLS
        certs = {"UV_NATIVE_TLS": "1", "UV_SYSTEM_CERTS": "1"}
        return {**dict.fromkeys(names, url), "NO_PROXY": direct, "no_proxy": direct, **certs}

    def allowed(self, host: str) -> bool:
        return any(fnmatch.fnmatchcase(host.lower(), pattern.lower()) for pattern in self.allow)

    def blocked(self) -> list[Attempt]:
        """The requests that did not get through (refused by the list, or unreachable from here)."""
        with self._lock:
            return [a for a in self.attempts if a.outcome != "allowed"]

    def close(self) -> None:
        """Stop listening (a blocked ``accept`` wakes on the shutdown) and cut every open connection."""
        self._closed = True
        try:
            self._listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._listener.close()
        with self._lock:
            clients = list(self._clients)
        for client in clients:
            client.close()
        self._acceptor.join(5)

    def __enter__(self) -> EgressGate:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _record(self, attempt: Attempt) -> None:
        with self._lock:
            self.attempts.append(attempt)

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if self._closed or not self._slots.acquire(blocking=False):
                client.close()
                continue
            with self._lock:
                self._clients.add(client)
            threading.Thread(target=self._serve, args=(client,), name="agentenvs-egress-conn", daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        upstream: socket.socket | None = None
        try:
            client.settimeout(_IDLE_SEC)
            head = self._read_head(client)
            if head is None:
                return
            request_line, _, rest = head.partition(b"\r\n")
            method, target, version = (request_line.decode("latin-1").split(" ") + ["", ""])[:3]
            tunnel = method.upper() == "CONNECT"
            host, port, path = _target(target, tunnel)
            if not host:
                client.sendall(_reply(400, "a proxy request needs an absolute URL or CONNECT host:port"))
                return
            if not self.allowed(host):
                self._record(Attempt(host, port, "refused", "not on the verifier's allow-list"))
                client.sendall(_reply(403, f"agentenvs: {host} is not on the verifier's allow-list"))
                return
            address = _reachable_address(host, port)
            if isinstance(address, str):
                self._record(Attempt(host, port, "unreachable", address))
                client.sendall(_reply(502, f"agentenvs: {host} {address}"))
                return
            try:
                upstream = socket.create_connection(address, timeout=_CONNECT_SEC)
            except OSError as exc:
                self._record(Attempt(host, port, "unreachable", exc.strerror or str(exc)))
                client.sendall(_reply(502, f"agentenvs: cannot reach {host}: {exc.strerror or exc}"))
                return
            self._record(Attempt(host, port, "allowed"))
            upstream.settimeout(_IDLE_SEC)
            if tunnel:
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                headers = [
                    h for h in rest.split(b"\r\n") if h and not h.lower().startswith((b"proxy-", b"connection:"))
                ]
                origin = f"{method} {path} {version}".encode("latin-1")
                upstream.sendall(b"\r\n".join([origin, *headers, b"Connection: close", b"", b""]))
                leftover = head.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in head else b""
                if leftover:
                    upstream.sendall(leftover)
            _pump(client, upstream)
        except OSError:
            pass
        finally:
            if upstream is not None:
                upstream.close()
            client.close()
            with self._lock:
                self._clients.discard(client)
            self._slots.release()

    @staticmethod
    def _read_head(client: socket.socket) -> bytes | None:
        data = b""
        while b"\r\n\r\n" not in data:
            if len(data) > _HEAD_LIMIT:
                client.sendall(_reply(431, "request head too large"))
                return None
            chunk = client.recv(4096)
            if not chunk:
                return None
            data += chunk
        return data


def _target(target: str, tunnel: bool) -> tuple[str, int, str]:
    """(host, port, origin-form path) of a proxy request's target; an empty host if it is not one."""
    from urllib.parse import urlsplit

    if tunnel:
        host, _, port = target.rpartition(":")
        host = host.strip("[]")
        return (host, int(port), "") if host and port.isdigit() else ("", 0, "")
    parts = urlsplit(target)
    if parts.scheme != "http" or not parts.hostname:
        return "", 0, ""
    path = parts.path or "/"
    return parts.hostname, parts.port or 80, path + (f"?{parts.query}" if parts.query else "")


def _reply(status: int, message: str) -> bytes:
    reason = {400: "Bad Request", 403: "Forbidden", 431: "Request Header Fields Too Large", 502: "Bad Gateway"}
    body = (message + "\n").encode()
    head = f"HTTP/1.1 {status} {reason[status]}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    return head.encode() + body


#: Package tools whose use in a task's tests implies the registries above.
_PACKAGE_TOOL = re.compile(r"(?<![\w.-])(?:pip3?|apt-get|apt|npm|npx|uvx?|cargo|go)\s")
_TEXT_LIMIT = 1 << 20


def verifier_allow_list(task: Task) -> tuple[str, ...]:
    """Where a task's verifier may go: nowhere if the task says no network (for the verifier or the
    whole environment), its ``allowed_hosts`` if it gives a list, else ``DEFAULT_ALLOW`` (Harbor's
    default allows the network; the agent's processes are gone by then)."""
    cfg = task.config
    env = cfg.environment
    mode = cfg.verifier.requested_mode()
    env_says_no = env.network_mode == "no-network" or env.allow_internet is False or env.network is False
    if mode == "no-network" or (mode is None and env_says_no):
        return ()
    if mode == "allowlist":
        return tuple(cfg.verifier.allowed_hosts)
    if mode is None and env.requested_mode() == "allowlist":
        return tuple(env.allowed_hosts)
    return DEFAULT_ALLOW


def _tests_text(folders: Iterable[Path]) -> str:
    chunks = []
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path.stat().st_size <= _TEXT_LIMIT:
                chunks.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(chunks)


def lacking_hosts(gate: EgressGate, tests: Iterable[Path], *, task_restricts: bool = False) -> dict[str, str]:
    """The hosts the verifier could not get to that its task's own files ask for (by name, or through a
    package tool for a registry), with why. Hosts only the agent's code asked for never count: the
    agent cannot turn its failure into an environment error by asking for one. With ``task_restricts``
    (the task itself said no network, or gave its own list) a refused host is the task's doing, not
    the machine's, and does not count; a host that could not be reached still does."""
    text = _tests_text(tests)
    uses_packages = bool(_PACKAGE_TOOL.search(text))
    found: dict[str, str] = {}
    for attempt in gate.blocked():
        if task_restricts and attempt.outcome == "refused":
            continue
        if attempt.host in text or (uses_packages and attempt.host in REGISTRIES):
            found.setdefault(attempt.host, f"{attempt.outcome}: {attempt.reason}")
    return found
