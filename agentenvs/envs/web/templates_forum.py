"""Task templates on the forum (filled in below once the forum site exists)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

TEMPLATES: dict[str, Callable[..., dict[str, Any]]] = {}
