"""Checks on JUnit XML test reports (pytest's ``--junitxml`` and any other runner's).

Graders read the structured report, never the runner's printed lines, which
the code under test can fake.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass

from evaluators import _state
from evaluators._registry import ArgumentError, Result, check, require, result


@dataclass(frozen=True)
class Case:
    classname: str
    name: str
    outcome: str  # passed | failed | error | skipped

    def ids(self) -> set[str]:
        ids = {self.name}
        if self.classname:
            ids |= {f"{self.classname}.{self.name}", f"{self.classname}::{self.name}"}
        return ids


class _BadReport(Exception):
    pass


def load_cases(path: str) -> list[Case]:
    """Every test case in a JUnit XML report; ``_BadReport`` if there is none to read."""
    require(path, str, "path")
    try:
        data = _state.read_bytes(path)
    except (FileNotFoundError, NotADirectoryError):
        raise _BadReport(f"{path}: missing (did the test run write its report?)") from None
    except OSError as exc:
        raise _BadReport(f"{path}: not a readable JUnit XML report: {_state.describe(exc)}") from None
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise _BadReport(f"{path}: not a readable JUnit XML report: {exc}") from None
    if root.tag not in ("testsuites", "testsuite"):
        raise _BadReport(f"{path}: root element <{root.tag}> is not <testsuites> or <testsuite>")
    cases = []
    for node in root.iter("testcase"):
        tags = {child.tag for child in node}
        if "error" in tags:
            outcome = "error"
        elif "failure" in tags:
            outcome = "failed"
        elif "skipped" in tags:
            outcome = "skipped"
        else:
            outcome = "passed"
        cases.append(Case(node.get("classname", ""), node.get("name", ""), outcome))
    return cases


def pytest_id(nodeid: str) -> str:
    """``tests/test_a.py::TestX::test_b[1]`` -> ``tests.test_a.TestX.test_b[1]`` (JUnit's spelling)."""
    parts = nodeid.split("::")
    module = parts[0]
    if module.endswith(".py"):
        module = module[:-3].replace("/", ".")
    return ".".join([module, *parts[1:]]) if len(parts) > 1 else module


def _grade(path: str, tests: list[str] | None, min_tests: int, allow_skipped: bool, normalise) -> Result:
    require(min_tests, int, "min_tests")
    if tests is not None:
        require(tests, list, "tests")
        if not tests or not all(isinstance(t, str) and t for t in tests):
            raise ArgumentError("tests must be a non-empty list of test names")
    try:
        cases = load_cases(path)
    except _BadReport as exc:
        return result(False, str(exc))
    ok_outcomes = {"passed", "skipped"} if allow_skipped else {"passed"}
    if tests is None:
        if len(cases) < min_tests:
            return result(False, f"{path}: {len(cases)} test(s) ran, expected at least {min_tests}")
        bad = [f"{c.classname}.{c.name} {c.outcome}" for c in cases if c.outcome not in ok_outcomes]
        passed = len(cases) - len(bad)
        score = passed / len(cases) if cases else 0.0
        detail = f"{path}: {passed}/{len(cases)} passed" + (f"; not passed: {', '.join(bad[:10])}" if bad else "")
        return result(not bad and len(cases) >= min_tests, detail, score=score)
    outcomes: dict[str, str] = {}
    for case in cases:
        for ident in case.ids():
            outcomes.setdefault(ident, case.outcome)
    problems = []
    for test in tests:
        outcome = outcomes.get(normalise(test), outcomes.get(test, "missing"))
        if outcome not in ok_outcomes:
            problems.append(f"{test} {outcome}")
    passed = len(tests) - len(problems)
    detail = f"{path}: {passed}/{len(tests)} named tests passed" + (f"; {', '.join(problems[:10])}" if problems else "")
    return result(not problems, detail, score=passed / len(tests))


@check("junit_report")
def junit_report(path: str, tests: list[str] | None = None, min_tests: int = 1, allow_skipped: bool = False) -> Result:
    """A JUnit XML report shows every test passed, or the named ones (``name`` or ``classname.name``).

    The score is the fraction passed, so partial work gets partial credit.
    """
    return _grade(path, tests, min_tests, allow_skipped, lambda t: t)


@check("pytest_report")
def pytest_report(path: str, tests: list[str] | None = None, min_tests: int = 1, allow_skipped: bool = False) -> Result:
    """Like ``junit_report`` for pytest's ``--junitxml``; ``tests`` may be pytest node ids."""
    return _grade(path, tests, min_tests, allow_skipped, pytest_id)
