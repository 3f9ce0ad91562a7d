"""Replies from policy servers, bounded in size, encoding and JSON nesting.

A policy server is part of what a run evaluates, so its replies are untrusted
input. A reply too large to hold, compressed into an unbounded size, or nested
deep enough to exhaust the parser's stack must cost the agent a step; it must
never make the harness fail, which would turn the agent's episode into an
unscored infrastructure error. Both network policies (``openai``, ``http``)
talk through ``bounded_client``, whose transport enforces the bounds on every
successful (< 400) reply by raising ``BadReply``. Error replies (4xx, 5xx) are
cut to the limit instead: their status decides what happens, not their body.
"""

from __future__ import annotations

import sys
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from agentenvs.core.actions import MAX_ACTION_DEPTH, json_too_deep

#: The largest reply body a policy may send, in bytes (an action is at most 1 MiB of text).
MAX_REPLY_BYTES = 4 << 20
#: The deepest JSON nesting of a reply: an action's own bound plus the envelope around it.
MAX_REPLY_DEPTH = MAX_ACTION_DEPTH + 16


class BadReply(Exception):
    """A successful reply that breaks a bound (too large, compressed against our request, too deeply nested)."""


@dataclass(frozen=True)
class Malformed:
    """A policy's answer that holds no usable action; the policy turns it into ``NO_ACTION``."""

    reason: str


def usage_counts(usage: Any) -> dict[str, int] | None:
    """Token counts from a reply, keeping only non-negative integers."""
    if not isinstance(usage, dict):
        return None
    counts = {
        k: v
        for k, v in usage.items()
        if isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 0
    }
    return counts or None


def http_module(client_class: type) -> ModuleType:
    """The httpx-like module a client class comes from (``httpx``, or ``httpx2`` under newer openai)."""
    for cls in client_class.__mro__:
        if cls.__name__ == "AsyncClient":
            return sys.modules[cls.__module__.partition(".")[0]]
    raise TypeError(f"{client_class!r} is not an httpx AsyncClient")


def env_proxy(url: str) -> str | None:
    """The proxy ``HTTP(S)_PROXY`` / ``ALL_PROXY`` name for ``url``, unless ``NO_PROXY`` exempts its host."""
    parts = urllib.parse.urlsplit(url)
    if urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    proxies = urllib.request.getproxies()
    return proxies.get(parts.scheme) or proxies.get("all")


def bounded_client(
    module: ModuleType, url: str, *, timeout: float, max_bytes: int = MAX_REPLY_BYTES, client_class: Any = None
) -> Any:
    """An ``AsyncClient`` of ``module`` whose every reply passes ``max_bytes``, identity encoding and depth bounds.

    The client asks for uncompressed replies and refuses compressed ones (their
    decoded size cannot be bounded up front). Proxies come from the environment
    for ``url`` as httpx would choose them, but through the bounded transport.
    """
    inner = module.AsyncHTTPTransport(proxy=env_proxy(url))
    cls = client_class or module.AsyncClient
    return cls(
        transport=_bounded_transport(module, inner, max_bytes),
        timeout=timeout,
        trust_env=False,
        headers={"Accept-Encoding": "identity"},
    )


def _bounded_transport(module: ModuleType, inner: Any, max_bytes: int) -> Any:
    class BoundedStream(module.AsyncByteStream):  # type: ignore[misc, name-defined]
        def __init__(self, stream: Any, status: int):
            self._stream = stream
            self._status = status

        async def __aiter__(self) -> AsyncIterator[bytes]:
            chunks: list[bytes] = []
            size = 0
            async for chunk in self._stream:
                if size + len(chunk) > max_bytes:
                    if self._status < 400:
                        raise BadReply(f"the reply is larger than {max_bytes} bytes")
                    chunks.append(chunk[: max_bytes - size])
                    break
                chunks.append(chunk)
                size += len(chunk)
            body = b"".join(chunks)
            if self._status < 400 and json_too_deep(body.decode("utf-8", "replace"), MAX_REPLY_DEPTH):
                raise BadReply(f"the reply nests deeper than {MAX_REPLY_DEPTH} levels")
            yield body

        async def aclose(self) -> None:
            await self._stream.aclose()

    class BoundedTransport(module.AsyncBaseTransport):  # type: ignore[misc, name-defined]
        async def handle_async_request(self, request: Any) -> Any:
            response = await inner.handle_async_request(request)
            headers = module.Headers(response.headers)
            encoding = headers.get("content-encoding", "identity").strip().lower()
            if encoding not in ("", "identity"):
                if response.status_code < 400:
                    await response.aclose()
                    raise BadReply(f"the reply is compressed ({encoding}) though an uncompressed one was asked for")
                del headers["content-encoding"]  # an error's body is only a message: keep its raw bytes
            stream = BoundedStream(response.stream, response.status_code)
            return module.Response(response.status_code, headers=headers, stream=stream, extensions=response.extensions)

        async def aclose(self) -> None:
            await inner.aclose()

    return BoundedTransport()
