"""Parsing from many threads at once: CPython 3.11's parser shares its recursion counter between threads."""

from __future__ import annotations

import ast
import gc
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import agentenvs.envs.swe.synthesize
from agentenvs.core.pyparse import parse_literal, parse_module

SOURCE = Path(agentenvs.envs.swe.synthesize.__file__).read_text()


@pytest.fixture
def frequent_thread_switches() -> Iterator[None]:
    """Collections that yield the GIL, so a thread switch lands inside the AST builder."""

    def yield_gil(phase: str, info: dict) -> None:
        time.sleep(0)

    threshold, interval = gc.get_threshold(), sys.getswitchinterval()
    gc.callbacks.append(yield_gil)
    gc.set_threshold(50, 1, 1)
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        gc.callbacks.remove(yield_gil)
        gc.set_threshold(*threshold)
        sys.setswitchinterval(interval)


def _errors_from_threads(parse: Callable[[str], object]) -> list[BaseException]:
    errors: list[BaseException] = []

    def work() -> None:
        for _ in range(40):
            try:
                parse(SOURCE)
            except SystemError as exc:
                errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


@pytest.mark.usefixtures("frequent_thread_switches")
def test_parsing_from_four_threads_at_once_never_fails():
    # The harness must catch the interpreter's own race first, or the assertion below proves nothing.
    if not any(_errors_from_threads(ast.parse) for _ in range(3)):
        pytest.skip(f"Python {sys.version.split()[0]}'s parser does not race here: the lock guards nothing")
    assert _errors_from_threads(parse_module) == []


def test_parse_module_and_parse_literal_answer_as_the_standard_library_does():
    assert ast.dump(parse_module(SOURCE)) == ast.dump(ast.parse(SOURCE))
    assert parse_literal("  'a quoted string'") == "a quoted string"
    assert parse_literal("[1, (2, 3), {'k': None}]") == [1, (2, 3), {"k": None}]
    with pytest.raises(ValueError):
        parse_literal("open('x')")
    with pytest.raises(SyntaxError):
        parse_module("def (:")
