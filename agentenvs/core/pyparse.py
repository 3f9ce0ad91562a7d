"""Python's parser behind one lock, because CPython 3.11's is not thread-safe.

CPython 3.11 keeps the AST builder's recursion counter in interpreter-wide
state, not per thread. Two threads parsing at once (the SWE synthesizer's
workers, a served web env's sessions) can then fail with ``SystemError: AST
constructor recursion depth mismatch`` (python/cpython#106905). Every parse
in the package goes through here.
"""

from __future__ import annotations

import ast
import threading
from typing import Any

_PARSER = threading.Lock()


def parse_module(source: str) -> ast.Module:
    """``ast.parse(source)``, one thread at a time."""
    with _PARSER:
        return ast.parse(source)


def parse_literal(source: str) -> Any:
    """``ast.literal_eval(source)`` on a string, one thread at a time."""
    with _PARSER:
        tree = ast.parse(source.lstrip(" \t"), mode="eval")
    return ast.literal_eval(tree.body)


__all__ = ["parse_literal", "parse_module"]
