"""What a submission may not change: anything that decides how the tests are collected or run.

The grader asks git which paths a patch changed (:mod:`.landing`) and asks
:func:`refusals` about them; every path with a rule is put back as it was at
the base commit before the hidden tests run, and the result names the path
and the rule. A legitimate fix never needs one of these:

- test files (a ``test``/``tests``/``testing`` directory, ``test_*.py``,
  ``*_test.py``) and ``conftest.py`` anywhere;
- files pytest reads its configuration from (``pytest.ini``, ``.pytest.ini``,
  ``pyproject.toml``, ``tox.ini``, ``setup.cfg``), anywhere: the tests run with
  the base commit's versions;
- startup hooks and import-path files (``sitecustomize``, ``usercustomize``,
  ``*.pth``) and compiled bytecode (``*.pyc``, ``__pycache__``), which would
  run code the diff does not show;
- a new module or package that could be imported under the name of the test
  runner (pytest and what it imports), the standard library, or anything
  installed in the test environment: one in a directory that may be on
  ``sys.path`` (the repository root, or any directory that is not a package in
  both the base and the patched tree, such as ``src``). Editing an existing
  module, or adding ``mypkg/types.py`` inside a package, is fine.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

TEST_DIR_NAMES = frozenset({"test", "tests", "testing"})
CONFIG_FILES = frozenset({"pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"})
STARTUP_HOOKS = frozenset({"sitecustomize", "usercustomize"})
#: pytest, what it imports at start-up (any version we may meet), and its usual plugins.
RUNNER_MODULES = frozenset(
    {
        "pytest",
        "_pytest",
        "pluggy",
        "py",
        "iniconfig",
        "packaging",
        "exceptiongroup",
        "tomli",
        "attr",
        "attrs",
        "more_itertools",
        "atomicwrites",
        "colorama",
        "pygments",
        "six",
        "typing_extensions",
        "xdist",
        "execnet",
        "coverage",
        "pytest_cov",
        "hypothesis",
        "mock",
    }
)
MODULE_SUFFIXES = (".py", ".pyc", ".pyo", ".pyw", ".so", ".pyd")
BYTECODE_SUFFIXES = (".pyc", ".pyo")


@dataclass(frozen=True)
class Refusal:
    """A path the patch changed that was put back, and why."""

    path: str
    rule: str
    why: str

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "rule": self.rule, "why": self.why}

    def __str__(self) -> str:
        return f"{self.path} ({self.why})"


def is_test_path(path: str) -> bool:
    """Whether ``path`` is a test file by the usual conventions (conftest.py included)."""
    parts = path.split("/")
    name = parts[-1]
    if name == "conftest.py" or any(part in TEST_DIR_NAMES for part in parts[:-1]):
        return True
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def module_name(filename: str) -> str | None:
    """The import name of a module file (``json.py``, ``_x.cpython-311-x86_64-linux-gnu.so``), else None."""
    if filename.endswith(MODULE_SUFFIXES):
        return filename.split(".", 1)[0] or None
    return None


def path_rule(path: str) -> tuple[str, str] | None:
    """The rule a changed ``path`` breaks on its name alone: ``(rule, why)``, or None."""
    parts = path.split("/")
    name = parts[-1]
    if name == "conftest.py":
        return "conftest", "conftest.py changes how pytest collects and reports tests"
    if is_test_path(path):
        return "test-file", "test files stay as at the base commit"
    if name in CONFIG_FILES:
        return "pytest-config", f"{name} can configure pytest; the tests run with the base commit's version"
    if name.endswith(".pth"):
        return "pth-file", ".pth files run code at interpreter start-up"
    if module_name(name) in STARTUP_HOOKS or any(part in STARTUP_HOOKS for part in parts[:-1]):
        return "startup-hook", "sitecustomize/usercustomize run code at interpreter start-up"
    if name.endswith(BYTECODE_SUFFIXES) or "__pycache__" in parts[:-1]:
        return "bytecode", "compiled bytecode runs code the diff does not show"
    return None


class Trees:
    """The base and patched file lists, to tell packages from directories that may be on ``sys.path``."""

    def __init__(self, base: Iterable[str], patched: Iterable[str]):
        self.base = frozenset(base)
        self.patched = frozenset(patched)
        self._base_dirs = _dirs(self.base)

    def is_package(self, directory: str) -> bool:
        """A directory is a package only if it has ``__init__.py`` before and after the patch."""
        if not directory:
            return False  # the repository root is always on sys.path
        init = f"{directory}/__init__.py"
        return init in self.base and init in self.patched

    def existed(self, location: str) -> bool:
        return location in self.base or location in self._base_dirs


def _dirs(files: frozenset[str]) -> frozenset[str]:
    out = set()
    for f in files:
        parts = f.split("/")[:-1]
        out.update("/".join(parts[: i + 1]) for i in range(len(parts)))
    return frozenset(out)


def top_level_names(path: str, trees: Trees) -> Iterator[tuple[str, str]]:
    """``(name, location)`` for every top-level import name ``path`` could provide.

    A file provides one wherever its parent chain reaches a directory that is
    not a package: ``src/json.py`` provides ``json``; ``src/json/x.py`` provides
    the package ``json``; ``src/calcy/types.py`` inside package ``calcy`` provides
    only ``calcy``.
    """
    parts = path.split("/")
    if module_name(parts[-1]) is None:
        return
    for i, part in enumerate(parts):
        parent = "/".join(parts[:i])
        if trees.is_package(parent):
            continue
        name = module_name(part) if i == len(parts) - 1 else part
        if name and name.isidentifier():
            yield name, "/".join(parts[: i + 1])


def refusals(changed: Iterable[tuple[str, str]], trees: Trees, importable: frozenset[str]) -> list[Refusal]:
    """The changes to put back. ``changed`` is ``(status, path)`` from git (A, M, D, T);
    ``importable`` is every top-level name the test environment can import."""
    protected = RUNNER_MODULES | STARTUP_HOOKS | frozenset(sys.stdlib_module_names) | importable
    out: dict[str, Refusal] = {}
    for status, path in changed:
        rule = path_rule(path)
        if rule is not None:
            out[path] = Refusal(path, *rule)
            continue
        if status == "D" or path not in trees.patched:
            continue
        for name, location in top_level_names(path, trees):
            if name in protected and not trees.existed(location):
                what = "the test runner" if name in RUNNER_MODULES else "an installed or standard-library module"
                out[path] = Refusal(path, "shadow-module", f"a new top-level {name!r} would shadow {what}")
                break
    return sorted(out.values(), key=lambda r: r.path)
