"""OSWorld's ``compare_table``: its rules over a result workbook and an optional expected one; and
``compare_conference_city_in_order``, a column of cities read as openpyxl reads it.

Rules run in order and the first that fails scores 0 (OSWorld's
semantics). Cell data comes from ``office.read_xlsx``; sheet views, rows,
validations, styles, charts and pivot tables from ``xlsx.Workbook``. Values
are matched with OSWorld's rule methods (``match_rule``).
"""

from __future__ import annotations

import builtins
import operator
import re
import unicodedata
from typing import Any
from xml.etree.ElementTree import ParseError

from evaluators._registry import ArgumentError
from evaluators.office import OfficeError, read_xlsx
from evaluators.osworld import _compare, limits, metric
from evaluators.xlsx import CHART_PROPS, PIVOT_PROPS, STYLE_PROPS, Workbook, ranges, ranges_within

#: ``compare_table`` rule types this checker implements; a task using another is refused at import.
TABLE_RULES = (
    "sheet_data",
    "sheet_print",
    "sheet_fuzzy",
    "check_cell",
    "sheet_name",
    "freeze",
    "zoom",
    "row_props",
    "data_validation",
    "style",
    "chart",
    "pivot_table",
)


@limits("compare_table")
def table_limits(options: dict[str, Any], rule: Any) -> list[str]:
    """Rule types, and style/chart/pivot props, that ``compare_table`` here does not read."""
    found = []
    for item in options.get("rules", []):
        if not isinstance(item, dict) or item.get("type") not in TABLE_RULES:
            found.append(f"compare_table rule {item.get('type') if isinstance(item, dict) else item!r}")
            continue
        for key, known in (("props", STYLE_PROPS), ("chart_props", CHART_PROPS), ("pivot_props", PIVOT_PROPS)):
            if item["type"] in ("style", "chart", "pivot_table"):
                found += [f"compare_table {item['type']} prop {p!r}" for p in item.get(key, []) if p not in known]
        if item["type"] == "check_cell":
            cell_props = ("value", "formula", "merge", *STYLE_PROPS)
            found += [f"compare_table check_cell prop {p!r}" for p in item.get("props", {}) if p not in cell_props]
    return found


def match_rule(value: Any, rule: dict[str, Any]) -> bool:
    """OSWorld's value rules: ``re[.FLAG...]``, comparisons, ``approx:T``, ``spreadsheet_range``, ``range.xy``, str lists."""
    method, ref = rule["method"], rule.get("ref")
    if method in ("approx", "str_eq", "str_contains"):  # ours: approx within 1e-3, string tests
        return _compare(value, method, ref)
    try:
        if method.startswith("re"):
            flags = 0
            for name in method.split(".")[1:]:
                flags |= getattr(re, name)
            return re.search(ref, value, flags) is not None
        if method in ("eq", "ne", "le", "lt", "ge", "gt"):
            return bool(getattr(operator, method)(value, ref))
        if method.startswith("approx"):
            return abs(float(value) - ref) <= float(method.split(":")[1])
        if method == "spreadsheet_range":
            have = ranges(value)
            return ranges_within(ranges(ref[0]), have) and ranges_within(have, ranges(ref[1]))
        if method.startswith("range."):
            left, right = method[6], method[7]
            return bool(getattr(operator, "l" + left)(ref[0], value) and getattr(operator, "l" + right)(value, ref[1]))
        if method in ("str_list_eq", "str_set_eq"):
            kind = getattr(builtins, method[4:-3])
            return bool(kind(str(value).strip("\"'").split(",")) == kind(ref))
    except (TypeError, ValueError, re.error):
        return False
    raise ArgumentError(f"unsupported rule method {method!r}")


def _index(index: Any) -> tuple[str, Any]:
    """OSWorld's sheet indices: an int (result), ``RI<n>``/``EI<n>`` by index, ``RN<name>``/``EN<name>`` by name."""
    if isinstance(index, str) and len(index) > 2 and index[:2] in ("RI", "EI", "RN", "EN"):
        return ("expected" if index[0] == "E" else "result"), (int(index[2:]) if index[1] == "I" else index[2:])
    return "result", index


class _Books:
    """The result and expected workbooks, each read lazily: values per sheet and the parts rules need."""

    def __init__(self, result: bytes, expected: bytes | None):
        self.data = {"result": result, "expected": expected}
        self._values: dict[str, list] = {}
        self._books: dict[str, Workbook] = {}

    def values(self, side: str) -> list:
        if side not in self._values:
            raw = self.data[side]
            self._values[side] = read_xlsx(raw) if raw is not None else []
        return self._values[side]

    def book(self, side: str) -> Workbook:
        if side not in self._books:
            raw = self.data[side]
            if raw is None:
                raise OfficeError("no expected workbook")
            self._books[side] = Workbook(raw)
        return self._books[side]

    def sheet(self, index: Any) -> tuple | None:
        side, key = _index(index)
        sheets = self.values(side)
        if isinstance(key, int):
            return sheets[key] if 0 <= key < len(sheets) else None
        return next((s for s in sheets if s[0] == key), None)

    def named(self, index: Any) -> tuple[Workbook, str] | None:
        """(workbook, sheet name) for a rule that reads the sheet's parts."""
        side, _ = _index(index)
        found = self.sheet(index)
        return (self.book(side), found[0]) if found is not None else None


def _normal(values: dict[str, object], kind: str) -> dict[str, object]:
    if kind == "sheet_data":
        return {k: v for k, v in values.items() if v != ""}
    return {k: str(v).strip().lower() for k, v in values.items() if str(v).strip()}


def _pair(books: _Books, rule: dict[str, Any], read: Any) -> bool:
    """Read the same part of ``sheet_idx0`` and ``sheet_idx1`` and compare; a missing sheet fails."""
    a, b = books.named(rule.get("sheet_idx0", 0)), books.named(rule.get("sheet_idx1", "EI0"))
    if a is None or b is None:
        return False
    return bool(read(*a) == read(*b))


def _check_cell(books: _Books, rule: dict[str, Any]) -> bool:
    """One cell's ``value``, ``formula``, ``merge`` and style props (upstream's ``_read_cell_style``)."""
    sheet = books.sheet(rule.get("sheet_idx", 0))
    if sheet is None:
        return False
    where = rule["coordinate"]
    for prop, spec in rule.get("props", {}).items():
        if prop in STYLE_PROPS:
            found = books.named(rule.get("sheet_idx", 0))
            value = found[0].styles(found[1], [prop]).get(where, [None])[0] if found else None
        elif prop == "merge":
            found = books.named(rule.get("sheet_idx", 0))
            value = found[0].merged(found[1], where) if found else None
        else:
            value = sheet[2].get(where) if prop == "formula" else sheet[1].get(where)
        if not match_rule(value, spec):
            return False
    return True


def _rule(books: _Books, rule: dict[str, Any]) -> bool:
    kind = rule["type"]
    if kind in ("sheet_data", "sheet_print", "sheet_fuzzy"):
        a, b = books.sheet(rule.get("sheet_idx0", 0)), books.sheet(rule.get("sheet_idx1", "EI0"))
        return a is not None and b is not None and _normal(a[1], kind) == _normal(b[1], kind)
    if kind == "check_cell":
        return _check_cell(books, rule)
    if kind == "sheet_name":
        return books.values("result") and [s[0] for s in books.values("result")] == [
            s[0] for s in books.values("expected")
        ]
    if kind == "freeze":
        return _pair(books, rule, lambda book, name: book.freeze_key(name))
    if kind == "zoom":
        found = books.named(rule.get("sheet_idx", 0))
        return found is not None and match_rule(found[0].zoom(found[1]), rule)
    if kind == "row_props":
        return _pair(books, rule, lambda book, name: book.rows(name, rule.get("props", [])))
    if kind == "style":
        return _pair(books, rule, lambda book, name: book.styles(name, rule.get("props", [])))
    if kind == "chart":
        return _pair(books, rule, lambda book, name: book.charts(name, rule.get("chart_props", [])))
    if kind == "pivot_table":
        return _pair(books, rule, lambda book, name: book.pivots(name, rule.get("pivot_props", [])))
    if kind == "data_validation":
        found = books.named(rule.get("sheet_idx", 0))
        if found is None:
            return False
        validations, wanted = found[0].data_validations(found[1]), rule["dv_props"]
        if len(validations) < len(wanted):
            return False
        return all(
            any(all(match_rule(dv.get(attr), spec) for attr, spec in props.items()) for props in wanted)
            for dv in validations
        )
    raise ArgumentError(f"compare_table rule {kind!r} is not supported")


@metric
def compare_table(result: Any, expected: Any = None, **options: Any) -> float:
    if result is None:
        return 0.0
    books = _Books(result, expected)
    try:
        books.values("result")
        if expected is not None:
            books.values("expected")
    except (OfficeError, KeyError, ValueError, IndexError):
        return 0.0
    for rule in options.get("rules", [{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}]):
        try:
            if not _rule(books, rule):
                return 0.0
        except (OfficeError, KeyError, ValueError, IndexError):
            return 0.0
    return 1.0


def _place(value: Any) -> str:
    """Upstream's city normal form: accents dropped (NFKD), lower case, runs of anything but ``a-z0-9`` one space."""
    text = unicodedata.normalize("NFKD", "" if value is None else str(value))
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


@metric
def compare_conference_city_in_order(result: Any, expected: dict[str, Any]) -> float:
    """C2:C22 of the active sheet, in order, each containing (after ``_place``) one of its expected names.

    As upstream: all 21 cells are checked, so fewer than 21 expected entries, an empty cell, or a
    formula instead of the city (openpyxl reads formulas, not their values) scores 0.
    """
    try:
        book = Workbook(result)
        cells = book.cells(book.active)
    except (OfficeError, KeyError, ValueError, ParseError):
        return 0.0
    wanted = expected["expected"]
    for row in range(2, 23):
        if row - 2 >= len(wanted):
            return 0.0
        entry = wanted[row - 2]
        if not isinstance(entry, (str, list)):
            return 0.0
        have = _place(cells.get(f"C{row}"))
        names = [entry] if isinstance(entry, str) else entry
        if not any(_place(name) and _place(name) in have for name in names):
            return 0.0
    return 1.0
