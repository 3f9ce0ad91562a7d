"""What the server's tests share: the tasks they serve, and waiting for what a server does on its own threads."""

from __future__ import annotations

import time
from collections.abc import Callable

TEXT_TASK = "textgame/maze-hard-2000001"
TERMINAL_TASK = "terminal/log-error-summary"


def wait_for(predicate: Callable[[], bool], timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()
