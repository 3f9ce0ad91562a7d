"""Which tests matter for a mutated module: the scope of ``PASS_TO_PASS``, and the tests' own source.

A synthesized task's ``PASS_TO_PASS`` holds the tests of the files that
matter for the bug (those holding a ``FAIL_TO_PASS`` test and those that
import the mutated module), not the whole suite: grading runs fewer files,
and the list says what the fix must not break nearby. Everything here reads
the test files' text with :mod:`ast`; nothing of the repository runs.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

from agentenvs.core.pyparse import parse_module


def module_name(path: str) -> str:
    """``src/pkg/sub/mod.py`` -> ``pkg.sub.mod``; a package's ``__init__.py`` is the package."""
    parts = list(Path(path).with_suffix("").parts)
    if parts and parts[0] in ("src", "lib"):
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imported_modules(text: str) -> set[str]:
    """Every absolute module a file imports, ``from pkg import mod`` counted as ``pkg.mod`` too."""
    try:
        tree = parse_module(text)
    except SyntaxError:
        return set()
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def imports_module(text: str, module: str) -> bool:
    """Whether a file imports ``module`` itself (or something inside it)."""
    return any(name == module or name.startswith(module + ".") for name in imported_modules(text))


class RelevantTests:
    """The repository's test files, read once, and the scope of each mutated module."""

    def __init__(self, root: Path, test_files: list[str]):
        self.root = root
        self.test_files = sorted(test_files)

    @lru_cache(maxsize=None)  # noqa: B019 - one scope per synthesis, kept for its life
    def text(self, path: str) -> str:
        try:
            return (self.root / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return ""

    @lru_cache(maxsize=None)  # noqa: B019
    def importers(self, mutated_path: str) -> frozenset[str]:
        module = module_name(mutated_path)
        return frozenset(f for f in self.test_files if module and imports_module(self.text(f), module))

    def files(self, mutated_path: str, fail_to_pass: list[str]) -> set[str]:
        """The test files that matter: those holding a failing test, and those importing the module."""
        return {t.partition("::")[0] for t in fail_to_pass} | self.importers(mutated_path)

    def pass_to_pass(self, mutated_path: str, fail_to_pass: list[str], passed: set[str]) -> list[str]:
        files = self.files(mutated_path, fail_to_pass)
        return sorted(t for t in passed if t.partition("::")[0] in files)

    def function(self, test_id: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The test function a node id names (``file::Class::name``), parsed from its file."""
        path, _, rest = test_id.partition("::")
        names = rest.split("[")[0].split("::")
        try:
            scope: list[ast.stmt] = parse_module(self.text(path)).body
        except SyntaxError:
            return None
        for i, name in enumerate(names):
            last = i == len(names) - 1
            wanted = (ast.FunctionDef, ast.AsyncFunctionDef) if last else (ast.ClassDef,)
            node = next((n for n in scope if isinstance(n, wanted) and n.name == name), None)
            if node is None:
                return None
            if last:
                return node  # type: ignore[return-value]
            scope = node.body  # type: ignore[attr-defined]
        return None
