"""Which changed paths the grader puts back, and why: the rules alone, no sandbox."""

from __future__ import annotations

import pytest

from agentenvs.envs.swe.protected import Trees, is_test_path, path_rule, refusals, top_level_names

BASE = [
    "pyproject.toml",
    "README.md",
    "src/mypkg/__init__.py",
    "src/mypkg/core.py",
    "src/mypkg/types.py",
    "tests/test_core.py",
    "conftest.py",
]


def _refused(changes: list[tuple[str, str]], base: list[str] = BASE, importable: frozenset[str] = frozenset()):
    patched = set(base)
    for status, path in changes:
        if status == "D":
            patched.discard(path)
        else:
            patched.add(path)
    return {r.path: r.rule for r in refusals(changes, Trees(base, patched), importable)}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("tests/test_a.py", True),
        ("src/pkg/tests/helpers.py", True),
        ("test_top.py", True),
        ("pkg/a_test.py", True),
        ("conftest.py", True),
        ("src/deep/conftest.py", True),
        ("src/pkg/core.py", False),
        ("src/pkg/testimony.py", False),
        ("README.md", False),
    ],
)
def test_test_files_are_recognised(path, expected):
    assert is_test_path(path) is expected


@pytest.mark.parametrize(
    ("path", "rule"),
    [
        ("conftest.py", "conftest"),
        ("src/mypkg/conftest.py", "conftest"),
        ("tests/test_core.py", "test-file"),
        ("pytest.ini", "pytest-config"),
        ("sub/.pytest.ini", "pytest-config"),
        ("pyproject.toml", "pytest-config"),
        ("tox.ini", "pytest-config"),
        ("setup.cfg", "pytest-config"),
        ("src/evil.pth", "pth-file"),
        ("src/mypkg/sitecustomize.py", "startup-hook"),
        ("usercustomize.so", "startup-hook"),
        ("sitecustomize/__init__.py", "startup-hook"),
        ("src/mypkg/__pycache__/core.cpython-311.pyc", "bytecode"),
        ("src/mypkg/helper.pyc", "bytecode"),
    ],
)
def test_rules_by_name(path, rule):
    assert path_rule(path)[0] == rule
    assert _refused([("A", path)]) == {path: rule}


def test_a_fix_inside_a_package_is_never_refused():
    changes = [("M", "src/mypkg/types.py"), ("M", "src/mypkg/core.py"), ("A", "src/mypkg/json.py"), ("M", "README.md")]
    assert _refused(changes, importable=frozenset({"json", "types"})) == {}


@pytest.mark.parametrize(
    "path",
    [
        "pytest.py",  # the repository root is always on sys.path
        "src/json.py",  # src is not a package, and pytest's `pythonpath = src` puts it first
        "src/_pytest/__init__.py",
        "src/pluggy/hooks.py",  # a namespace package is enough where nothing else provides the name
        "shlex.cpython-311-x86_64-linux-gnu.so",
        "lib/somelib.py",  # installed in the test environment
    ],
)
def test_new_top_level_modules_that_shadow_are_refused(path):
    assert _refused([("A", path)], importable=frozenset({"somelib"})) == {path: "shadow-module"}


def test_making_a_sys_path_directory_a_package_does_not_hide_a_shadow():
    # src/ becomes a package in the patched tree, but it was not one at the base commit: still a shadow.
    assert _refused([("A", "src/__init__.py"), ("A", "src/json.py")]) == {"src/json.py": "shadow-module"}


def test_modules_that_existed_at_the_base_commit_may_change():
    base = [*BASE, "src/token.py"]
    assert _refused([("M", "src/token.py")], base=base) == {}


def test_top_level_names_follow_packages():
    trees = Trees(BASE, BASE)
    assert list(top_level_names("src/mypkg/types.py", trees)) == [("src", "src"), ("mypkg", "src/mypkg")]
    assert list(top_level_names("src/json.py", trees)) == [("src", "src"), ("json", "src/json.py")]
    assert list(top_level_names("docs/index.md", trees)) == []
