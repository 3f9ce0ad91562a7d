"""Problem statements that read like an issue a user files, and a difficulty estimate.

A user reports a symptom: the call they made, what they expected and what
they got. The reproduction is taken from a failing test: its imports, the
statements before its first failing assertion, and that assertion's call
printed. A probe script built from the same statements runs in the
sandbox on the mutated tree and reports the first assertion that does not
hold (its actual and expected values) or the exception raised; only what
was observed goes into the issue. The statement never names a test, a line
number or the gold patch.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass

from agentenvs.core.pyparse import parse_literal, parse_module

PROBE_MARK = "@@agentenvs-probe@@"
MAX_VALUE = 800
ASSERT_EQUAL = {
    "assertEqual",
    "assertEquals",
    "assertListEqual",
    "assertTupleEqual",
    "assertDictEqual",
    "assertSetEqual",
    "assertSequenceEqual",
    "assertMultiLineEqual",
    "assertIs",
}
HARNESS_ERRORS = ("NameError", "ImportError", "ModuleNotFoundError", "UnboundLocalError", "AssertionError")


@dataclass(frozen=True)
class Check:
    """A test statement that asserts: the expression under test and what it should give."""

    actual: ast.expr
    expected: ast.expr | None  # None: a truth test (``truthy``) or an exception (``raises``)
    truthy: bool = True
    raises: ast.expr | None = None


def _check(stmt: ast.stmt) -> Check | None:
    if isinstance(stmt, ast.Assert):
        test = stmt.test
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.Is)):
            return Check(test.left, test.comparators[0])
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return Check(test.operand, None, truthy=False)
        return Check(test, None)
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        func = call.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            args = call.args
            if func.attr in ASSERT_EQUAL and len(args) >= 2:
                return Check(args[0], args[1])
            if func.attr in ("assertTrue", "assertFalse") and args:
                return Check(args[0], None, truthy=func.attr == "assertTrue")
            if func.attr == "assertIsNone" and args:
                return Check(args[0], ast.Constant(None))
    if isinstance(stmt, ast.With) and len(stmt.items) == 1 and len(stmt.body) == 1:
        ctx = stmt.items[0].context_expr
        body = stmt.body[0]
        if (
            isinstance(ctx, ast.Call)
            and ctx.args
            and ast.unparse(ctx.func) in ("pytest.raises", "self.assertRaises", "raises")
            and isinstance(body, (ast.Expr, ast.Assign))
        ):
            return Check(body.value, None, raises=ctx.args[0])
    return None


@dataclass(frozen=True)
class Probe:
    """A failing test turned into a script: its imports and its statements, each with its check."""

    imports: list[ast.stmt]
    steps: list[tuple[ast.stmt, Check | None]]

    def script(self) -> str:
        """Run in the sandbox: reports the first failing step as JSON after ``PROBE_MARK``."""
        out = [
            "import json as __json, sys as __sys",
            "def __report(**kw):",
            f"    print({PROBE_MARK!r} + __json.dumps(kw), flush=True)",
            "    __sys.exit(0)",
            "try:",
            *([_indent(ast.unparse(i)) for i in self.imports] or ["    pass"]),
            "except BaseException as __exc:",
            "    __report(unusable='imports')",
        ]
        for k, (stmt, check) in enumerate(self.steps):
            out += _step(k, stmt, check)
        out.append("__report(unusable='no failure')")
        return "\n".join(out) + "\n"


def _indent(code: str, by: str = "    ") -> str:
    return "\n".join(by + line for line in code.splitlines())


def _error(k: int) -> list[str]:
    return [
        "except BaseException as __exc:",
        f"    __report(step={k}, error=type(__exc).__name__ + ': ' + str(__exc))",
    ]


def _step(k: int, stmt: ast.stmt, check: Check | None) -> list[str]:
    if check is None:
        return ["try:", _indent(ast.unparse(stmt)), *_error(k)]
    actual = ast.unparse(check.actual)
    if check.raises is not None:
        raises = ast.unparse(check.raises)
        return [
            "try:",
            f"    __a = {actual}",
            f"except {raises}:",
            "    pass",
            *_error(k),
            "else:",
            f"    __report(step={k}, actual='no exception; it returned ' + repr(__a), expected={raises}.__name__ + ' raised')",
        ]
    lines = []
    if check.expected is not None:
        lines += [
            "try:",
            f"    __e = {ast.unparse(check.expected)}",
            "except BaseException:",
            "    __report(unusable='expected')",
        ]
    lines += ["try:", f"    __a = {actual}", *_error(k)]
    if check.expected is not None:
        lines += ["if not (__a == __e):", f"    __report(step={k}, actual=repr(__a), expected=repr(__e))"]
    else:
        want = "True" if check.truthy else "False"
        lines += [
            f"if bool(__a) != {want}:",
            f"    __report(step={k}, actual=repr(__a), expected='something ' + ('true' if {want} else 'false'))",
        ]
    return lines


def probe_for(func: ast.FunctionDef | ast.AsyncFunctionDef, module_text: str) -> Probe | None:
    """A probe from a test function that takes no fixtures (``self`` only for its assert methods)."""
    params = [a.arg for a in (*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs)]
    if isinstance(func, ast.AsyncFunctionDef) or params not in ([], ["self"]) or func.decorator_list:
        return None
    try:
        module = parse_module(module_text)
    except SyntaxError:
        return None
    imports = [n for n in module.body if isinstance(n, ast.Import) or isinstance(n, ast.ImportFrom) and not n.level]
    body = func.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    steps = [(stmt, _check(stmt)) for stmt in body]
    if not any(check for _, check in steps):
        return None
    return Probe(imports, steps)


@dataclass(frozen=True)
class Observation:
    """What the probe saw at its first failing step."""

    step: int
    actual: str
    expected: str
    error: bool


def read_probe(output: str) -> Observation | None:
    """The probe's report, if it found a usable failure (not a harness error such as a missing name)."""
    line = next((ln for ln in reversed(output.splitlines()) if ln.startswith(PROBE_MARK)), None)
    if line is None:
        return None
    try:
        report = json.loads(line[len(PROBE_MARK) :])
    except json.JSONDecodeError:
        return None
    if "unusable" in report or "step" not in report:
        return None
    if "error" in report:
        if report["error"].split(":")[0] in HARNESS_ERRORS:
            return None
        return Observation(report["step"], report["error"], "", True)
    return Observation(report["step"], report["actual"], report["expected"], False)


def _names(nodes: list[ast.stmt]) -> set[str]:
    return {n.id for stmt in nodes for n in ast.walk(stmt) if isinstance(n, ast.Name)}


def _bound(stmt: ast.stmt) -> set[str]:
    assert isinstance(stmt, (ast.Import, ast.ImportFrom))
    return {(a.asname or a.name).split(".")[0] for a in stmt.names}


def _is_text_call(node: ast.expr) -> bool:
    """``repr(x)`` or ``str(x)``: printed as it is, not through another ``repr``."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("repr", "str")


def _unquote(text: str) -> str:
    try:
        value = parse_literal(text)
    except (ValueError, SyntaxError):
        return text
    return value if isinstance(value, str) else text


def _only(stmt: ast.stmt, used: set[str]) -> ast.stmt:
    """``from m import a, b, c`` cut down to the names the reproduction uses."""
    if isinstance(stmt, ast.ImportFrom):
        names = [a for a in stmt.names if (a.asname or a.name) in used]
        return ast.ImportFrom(stmt.module, names, stmt.level)
    return stmt


def _callee(node: ast.AST, imported: set[str]) -> str | None:
    """The first call in ``node`` into something imported (the library's function the user called)."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            root = sub.func
            while isinstance(root, (ast.Attribute, ast.Call, ast.Subscript)):
                root = root.value if not isinstance(root, ast.Call) else root.func
            if isinstance(root, ast.Name) and root.id in imported:
                return ast.unparse(sub.func)
    return None


def _clip_line(code: str) -> str:
    first = code.splitlines()[0] if code else ""
    return first if len(first) <= 60 and "\n" not in code else first[:57] + "..."


def _clip(text: str) -> str:
    return text if len(text) <= MAX_VALUE else text[:MAX_VALUE] + " ..."


def issue_from_probe(probe: Probe, seen: Observation, repo_name: str, n_failing: int) -> str:
    """The issue: title, the reproduction, expected against actual."""
    before = [stmt for stmt, check in probe.steps[: seen.step] if check is None]
    stmt, check = probe.steps[seen.step]
    actual_text, expected_text = seen.actual, seen.expected
    if check is not None and _is_text_call(check.actual):
        shown: ast.stmt = ast.Expr(ast.Call(ast.Name("print", ast.Load()), [check.actual], []))
        actual_text, expected_text = _unquote(actual_text), _unquote(expected_text)
    elif check is not None:
        shown = ast.Expr(
            ast.Call(ast.Name("print", ast.Load()), [ast.Call(ast.Name("repr", ast.Load()), [check.actual], [])], [])
        )
    else:
        shown = stmt
    code = [*before, shown]
    used = _names(code)
    imports = [_only(i, used) for i in probe.imports if _bound(i) & used]
    imported = set().union(*(_bound(i) for i in imports)) if imports else set()
    callee = _callee(check.actual if check is not None else stmt, imported)
    what = f"`{callee}`" if callee else f"`{_clip_line(ast.unparse(stmt if check is None else check.actual))}`"
    if seen.error:
        title = f"{what} raises {seen.actual.split(':')[0]}"
        expected = seen.expected or ("no exception" if check is None or check.raises is None else "")
    else:
        title = f"{what} gives a wrong result"
        expected = expected_text
    if check is not None and check.raises is not None:
        expected = f"{ast.unparse(check.raises)} raised"
        if not seen.error:
            title = f"{what} does not raise {ast.unparse(check.raises)}"
    lines = [
        f"# {title}",
        "",
        f"With {repo_name} at the current commit, this does not behave as documented:",
        "",
        "```python",
        *[ast.unparse(s) for s in (*imports, *code)],
        "```",
        "",
        "Expected:",
        "",
        "```",
        _clip(expected or "no exception"),
        "```",
        "",
        "Actual:",
        "",
        "```",
        _clip(actual_text if not seen.error else seen.actual),
        "```",
    ]
    if n_failing > 1:
        lines += ["", f"Other uses fail the same way: {n_failing} cases in the project's test suite break."]
    return "\n".join(lines) + "\n"


LOCATION = re.compile(r'(\S+\.py:\d+|File "[^"]*", line \d+)')


def fallback_issue(repo_name: str, messages: list[str], n_failing: int) -> str:
    """When no failing test could be turned into a reproduction: the failure as a user sees it."""
    message = next((m for m in messages if m.strip()), "")
    shown = "\n".join(LOCATION.sub("...", ln) for ln in message.strip().splitlines()[:12]) or "(no message)"
    cases = f"{n_failing} cases" if n_failing != 1 else "1 case"
    verb = "fail" if n_failing != 1 else "fails"
    return (
        f"# Wrong results from {repo_name}\n\n"
        f"Since the latest change, {repo_name} misbehaves: {cases} of the project's own test suite {verb}.\n\n"
        f"Expected: {'they pass' if n_failing != 1 else 'it passes'}, as before.\n\n"
        f"Actual:\n\n```\n{_clip(shown)}\n```\n"
    )


EASY_KINDS = frozenset({"compare", "binop", "off-by-one", "wrong-return"})


def difficulty(category: str, n_failing: int, function: str, failing_sources: list[str]) -> tuple[str, list[str]]:
    """easy / medium / hard from the failing count, the operator and how far the bug is from the tests."""
    points, why = 0, []
    if n_failing >= 5:
        why.append(f"{n_failing} failing tests")
    elif n_failing >= 2:
        points += 1
        why.append(f"{n_failing} failing tests")
    else:
        points += 2
        why.append("1 failing test")
    if category not in EASY_KINDS:
        points += 1
    why.append(f"operator: {category}")
    called = re.compile(rf"\b{re.escape(function)}\b")
    if any(called.search(src) for src in failing_sources):
        why.append("a failing test calls the mutated function by name")
    else:
        points += 2
        why.append("no failing test calls the mutated function by name")
    return ("easy" if points <= 1 else "medium" if points <= 3 else "hard"), why
