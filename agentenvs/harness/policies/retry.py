"""Retries with exponential backoff and jitter, for calls to policy servers.

Only transient failures are retried (408, 409, 429, 5xx, timeouts,
unreachable servers, garbage answers), as OpenAI's own client decides, the
server's ``x-should-retry`` first; when they persist the caller gets
``PolicyUnavailable``. Anything else propagates at once.
"""

from __future__ import annotations

import asyncio
import email.utils
import math
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from agentenvs.harness.policies.base import PolicyRequestError, PolicyUnavailable

T = TypeVar("T")


class Transient(Exception):
    """A failure worth retrying. ``retry_after`` is the server's hint in seconds, if any."""

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


#: Statuses that say "not now" rather than "never": a request timeout, a lock conflict, a rate limit.
TRANSIENT_STATUSES = frozenset({408, 409, 429})


def retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """The server's wait hint in seconds: ``retry-after-ms`` (OpenAI, Azure), else ``retry-after`` in
    seconds or as an HTTP date; None when absent or unreadable (then the backoff decides)."""
    milliseconds = _finite(headers.get("retry-after-ms"))
    if milliseconds is not None:
        return milliseconds / 1000
    value = headers.get("retry-after")
    seconds = _finite(value)
    if seconds is not None or not value:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _finite(value: str | None) -> float | None:
    try:
        number = float(value) if value is not None else None
    except ValueError:
        return None
    return number if number is not None and math.isfinite(number) and number >= 0 else None


def refusal(status: int, headers: Mapping[str, str], message: str) -> Exception:
    """What an HTTP error answer means for the episode: ``Transient`` to try again, ``PolicyUnavailable``
    for a server failure it said not to retry, ``PolicyRequestError`` for a request it will never take."""
    should = (headers.get("x-should-retry") or "").strip().lower()
    transient = status in TRANSIENT_STATUSES or status >= 500
    if should == "true" or (transient and should != "false"):
        return Transient(message, retry_after(headers))
    if transient:
        return PolicyUnavailable(f"{message} (the server said not to retry)")
    return PolicyRequestError(message)


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 5
    base_delay: float = 0.5
    max_delay: float = 20.0

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.max_delay)
        backoff = min(self.max_delay, self.base_delay * (2**attempt))
        return backoff * (0.5 + random.random() / 2)


async def call_with_retries(call: Callable[[], Awaitable[T]], retry: RetryPolicy, what: str) -> tuple[T, int]:
    """``(result, retries used)``; ``call`` raises ``Transient`` for what deserves another try."""
    last: Transient | None = None
    for attempt in range(retry.max_retries + 1):
        try:
            return await call(), attempt
        except Transient as exc:
            last = exc
            if attempt < retry.max_retries:
                await asyncio.sleep(retry.delay(attempt, exc.retry_after))
    raise PolicyUnavailable(f"{what} failed after {retry.max_retries + 1} attempts: {last}")
