"""Checks on structured data: JSON paths, CSV tables, SQLite queries."""

from __future__ import annotations

import io
import json
import math
import os
import re
import tempfile
import time
from typing import Any

from evaluators import _state
from evaluators._registry import ArgumentError, Result, check, require, result
from evaluators.text import _Unreadable, read_text

_TOKEN = re.compile(r"\.?([^.\[\]]+)|\[(-?\d+)\]")


def parse_json_path(path: str) -> list[str | int]:
    """``a.b[0].c`` -> ``["a", "b", 0, "c"]``; ``""`` or ``"$"`` is the document itself."""
    require(path, str, "json_path")
    text = path.strip().removeprefix("$")
    steps: list[str | int] = []
    pos = 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            raise ArgumentError(f"json_path {path!r} is not a dotted/indexed path like 'a.b[0].c'")
        steps.append(match.group(1) if match.group(1) is not None else int(match.group(2)))
        pos = match.end()
    return steps


def values_equal(actual: Any, expected: Any, tolerance: float = 0.0) -> bool:
    """Equality where numbers compare within ``tolerance`` and bools are not numbers."""
    if isinstance(actual, bool) or isinstance(expected, bool):
        return type(actual) is type(expected) and actual == expected
    if isinstance(actual, (int, float)) and isinstance(expected, (int, float)):
        return math.isclose(actual, expected, rel_tol=0.0, abs_tol=tolerance) or actual == expected
    if isinstance(actual, (list, tuple)) and isinstance(expected, (list, tuple)):
        return len(actual) == len(expected) and all(values_equal(a, e, tolerance) for a, e in zip(actual, expected))
    if isinstance(actual, dict) and isinstance(expected, dict):
        return actual.keys() == expected.keys() and all(values_equal(actual[k], expected[k], tolerance) for k in actual)
    return actual == expected


def _tolerance(tolerance: object) -> float:
    require(tolerance, (int, float), "tolerance")
    if tolerance < 0:
        raise ArgumentError("tolerance must be >= 0")
    return float(tolerance)


@check("json_path_equals")
def json_path_equals(path: str, json_path: str, expected: Any, tolerance: float = 0.0) -> Result:
    """The value at ``json_path`` (``a.b[0].c``) in a JSON file equals ``expected``."""
    steps = parse_json_path(json_path)
    tol = _tolerance(tolerance)
    try:
        doc = json.loads(read_text(path))
    except _Unreadable as exc:
        return result(False, str(exc))
    except json.JSONDecodeError as exc:
        return result(False, f"{path}: not valid JSON: {exc}")
    node: Any = doc
    for i, step in enumerate(steps):
        where = json_path if i == len(steps) - 1 else f"{json_path} (at step {step!r})"
        if isinstance(step, int):
            if not isinstance(node, list) or not -len(node) <= step < len(node):
                return result(False, f"{path}: {where}: no index {step}")
            node = node[step]
        else:
            if not isinstance(node, dict) or step not in node:
                return result(False, f"{path}: {where}: no key {step!r}")
            node = node[step]
    ok = values_equal(node, expected, tol)
    shown = json.dumps(node)[:120]
    return result(ok, f"{path}: {json_path} = {shown}" + ("" if ok else f", expected {json.dumps(expected)[:120]}"))


def _number(text: str) -> float | None:
    try:
        return float(text.strip().replace(",", "")) if text.strip() else None
    except ValueError:
        return None


_CSV_OPS = ("row_count", "header", "cell", "column_sum")


@check("csv_query")
def csv_query(
    path: str,
    op: str,
    expected: Any,
    row: int | None = None,
    column: str | int | None = None,
    tolerance: float = 0.0,
    delimiter: str = ",",
    has_header: bool = True,
) -> Result:
    """One question about a CSV file, compared with ``expected``.

    ``op`` is ``row_count`` (data rows, header excluded), ``header`` (list
    of column names), ``cell`` (``row`` is the 0-based data row, ``column``
    a name or 0-based index; numeric cells compare as numbers) or
    ``column_sum`` (sum of a numeric column, within ``tolerance``).
    """
    import csv  # here, not at the top: every check run pays start-up, few need it

    if op not in _CSV_OPS:
        raise ArgumentError(f"op must be one of {', '.join(_CSV_OPS)}, got {op!r}")
    require(delimiter, str, "delimiter")
    if len(delimiter) != 1:
        raise ArgumentError("delimiter must be one character")
    tol = _tolerance(tolerance)
    if op in ("cell", "column_sum") and column is None:
        raise ArgumentError(f"op {op} needs column (a name or a 0-based index)")
    if op == "cell" and not isinstance(row, int):
        raise ArgumentError("op cell needs row (a 0-based data row index)")
    if op == "header" and not has_header:
        raise ArgumentError("op header needs has_header=true")
    try:
        rows = list(csv.reader(io.StringIO(read_text(path)), delimiter=delimiter))
    except _Unreadable as exc:
        return result(False, str(exc))
    except csv.Error as exc:
        return result(False, f"{path}: not valid CSV: {exc}")
    rows = [r for r in rows if r]
    header = rows[0] if has_header and rows else []
    data = rows[1:] if has_header else rows
    if op == "row_count":
        ok = values_equal(len(data), expected)
        return result(ok, f"{path}: {len(data)} data rows" + ("" if ok else f", expected {expected}"))
    if op == "header":
        got = [h.strip() for h in header]
        ok = got == expected
        return result(ok, f"{path}: header {got}" + ("" if ok else f", expected {expected}"))
    names = [h.strip() for h in header]
    if isinstance(column, int) and not isinstance(column, bool):
        col = column
    elif isinstance(column, str) and column in names:
        col = names.index(column)
    elif isinstance(column, str) and column.isdigit():
        col = int(column)
    elif isinstance(column, str):
        return result(False, f"{path}: no column {column!r} in header {names}")
    else:
        raise ArgumentError(f"column must be a name or an index, got {column!r}")
    if op == "cell":
        if not -len(data) <= row < len(data):
            return result(False, f"{path}: no data row {row} ({len(data)} rows)")
        line = data[row]
        if not -len(line) <= col < len(line):
            return result(False, f"{path}: row {row} has no column {column!r}")
        cell = line[col].strip()
        got_num = _number(cell)
        if isinstance(expected, (int, float)) and not isinstance(expected, bool) and got_num is not None:
            ok = values_equal(got_num, expected, tol)
        else:
            ok = cell == str(expected)
        return result(ok, f"{path}: cell [{row}][{column}] = {cell!r}" + ("" if ok else f", expected {expected!r}"))
    total = 0.0
    for i, line in enumerate(data):
        value = _number(line[col]) if -len(line) <= col < len(line) else None
        if value is None:
            return result(False, f"{path}: data row {i} column {column!r} is not a number")
        total += value
    require(expected, (int, float), "expected")
    ok = values_equal(total, expected, tol)
    return result(ok, f"{path}: sum of {column!r} = {total:g}" + ("" if ok else f", expected {expected}"))


def _as_rows(expected: Any) -> list[list[Any]]:
    require(expected, list, "expected_rows")
    rows = []
    for r in expected:
        rows.append(list(r) if isinstance(r, (list, tuple)) else [r])
    return rows


#: ``sqlite_query`` copies the database (and its journal) up to this size.
MAX_SQLITE_BYTES = 256 * 1024 * 1024


def _query(sqlite3, copy: str, query: str, timeout: float) -> list[list[Any]] | str:
    """The first 10,000 rows of ``query`` on the private copy, or why it failed.

    The copy is opened read-write so SQLite can replay its WAL or roll back a
    hot journal (what any reader of the agent's database would see); the
    connection itself refuses to change anything.
    """
    try:
        conn = sqlite3.connect(copy, timeout=timeout)
    except sqlite3.Error as exc:
        return f"cannot open: {exc}"
    try:
        conn.execute("PRAGMA query_only = ON")
        deadline = time.monotonic() + timeout
        conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
        return [list(r) for r in conn.execute(query).fetchmany(10_000)]
    except sqlite3.Error as exc:
        return f"query failed: {exc}"
    finally:
        conn.close()


@check("sqlite_query")
def sqlite_query(
    path: str,
    query: str,
    expected_rows: list[Any] | None = None,
    expected_scalar: Any = None,
    ordered: bool = True,
    tolerance: float = 0.0,
    timeout: float = 10.0,
) -> Result:
    """Run a read-only query on a SQLite file and compare with the expected result.

    The query runs on a private copy of the database (and of its ``-wal`` or
    ``-journal``), so the agent's files are never written and a name swapped
    mid-check cannot redirect SQLite. Give ``expected_rows`` (a list of rows, each a list of values) or
    ``expected_scalar`` (the first column of the only row). Rows compare in
    order unless ``ordered`` is false.
    """
    import sqlite3  # here, not at the top: every check run pays start-up, few need it

    require(query, str, "query")
    require(timeout, (int, float), "timeout")
    tol = _tolerance(tolerance)
    if (expected_rows is None) == (expected_scalar is None):
        raise ArgumentError("give exactly one of expected_rows or expected_scalar")
    want = _as_rows(expected_rows) if expected_rows is not None else None
    with tempfile.TemporaryDirectory(prefix="evaluators-sqlite-") as scratch:
        copy = os.path.join(scratch, "db")
        try:
            if not _state.copy_out(path, copy, MAX_SQLITE_BYTES):
                return result(False, f"{path}: missing")
            for suffix in ("-wal", "-journal"):
                _state.copy_out(path + suffix, copy + suffix, MAX_SQLITE_BYTES)
        except OSError as exc:
            return result(False, f"{path}: cannot read: {_state.describe(exc)}")
        got = _query(sqlite3, copy, query, float(timeout))
    if isinstance(got, str):
        return result(False, f"{path}: {got}")
    if want is None:
        if len(got) != 1 or not got[0]:
            return result(False, f"{path}: expected one row, got {len(got)} rows")
        ok = values_equal(got[0][0], expected_scalar, tol)
        return result(ok, f"{path}: {got[0][0]!r}" + ("" if ok else f", expected {expected_scalar!r}"))
    if not ordered:
        got = sorted(got, key=repr)
        want = sorted(want, key=repr)
    ok = values_equal(got, want, tol)
    shown = json.dumps(got, default=str)[:200]
    return result(
        ok, f"{path}: {len(got)} rows {shown}" + ("" if ok else f", expected {json.dumps(want, default=str)[:200]}")
    )
