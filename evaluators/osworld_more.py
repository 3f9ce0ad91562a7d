"""OSWorld's metrics over an accessibility tree, a database (``run_sqlite3``) and PDFs (``compare_pdfs``, ``check_pdf_pages``).

``check_accessibility_tree`` selects nodes of the tree's XML by CSS
selectors (a subset: type and ``*``, attribute tests ``[a]``, ``[a=v]``,
``*=``, ``^=``, ``$=``, ``~=`` with ``ns|a`` namespaced names, and the
descendant, ``>``, ``~`` and ``+`` combinators) or by ElementTree's XPath
subset; a selector outside these is an argument error, never a silent 0.
"""

from __future__ import annotations

import operator
import os
import re
import tempfile
from collections.abc import Callable
from typing import Any
from xml.etree import ElementTree as ET

from evaluators._budget import sequence_ratio
from evaluators._registry import ArgumentError
from evaluators.data import _query
from evaluators.osworld import _text, limits, metric

A11Y_NS = {
    "st": "https://accessibility.ubuntu.example.org/ns/state",
    "attr": "https://accessibility.ubuntu.example.org/ns/attributes",
    "cp": "https://accessibility.ubuntu.example.org/ns/component",
    "doc": "https://accessibility.ubuntu.example.org/ns/document",
    "docattr": "https://accessibility.ubuntu.example.org/ns/document/attributes",
    "txt": "https://accessibility.ubuntu.example.org/ns/text",
    "val": "https://accessibility.ubuntu.example.org/ns/value",
    "act": "https://accessibility.ubuntu.example.org/ns/action",
}
_TOKEN = re.compile(
    r"\s*(?P<comb>[>~+])\s*|(?P<space>\s+)|(?P<tag>\*|[A-Za-z][\w-]*)"
    r"|\[\s*(?P<attr>(?:[\w-]+\|)?[\w-]+)\s*(?:(?P<op>[*^$~]?=)\s*(?P<val>\"[^\"]*\"|'[^']*'|[^\]\s]+)\s*)?\]"
)
_OPS: dict[str, Callable[[str, str], bool]] = {
    "=": lambda a, v: a == v,
    "*=": lambda a, v: v in a,
    "^=": lambda a, v: a.startswith(v),
    "$=": lambda a, v: a.endswith(v),
    "~=": lambda a, v: v in a.split(),
}
Compound = tuple[str, list[tuple[str, str | None, str | None]]]


def _parse(selector: str) -> list[tuple[str, Compound]]:
    """A selector as (combinator, compound) steps; the first step's combinator is unused."""
    steps: list[tuple[str, Compound]] = []
    comb, compound, pos = " ", None, 0
    text = selector.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise ArgumentError(f"unsupported CSS selector {selector!r} at {text[pos:]!r}")
        pos = m.end()
        if m.group("comb") or m.group("space"):
            if compound is not None:
                steps.append((comb, compound))
                compound, comb = None, " "
            comb = m.group("comb") or comb
            continue
        if compound is None:
            compound = ("*", [])
        if m.group("tag"):
            if compound[1] or compound[0] != "*":
                raise ArgumentError(f"a type selector must start its compound in {selector!r}")
            compound = (m.group("tag"), compound[1])
            continue
        name = m.group("attr")
        if "|" in name:
            prefix, local = name.split("|")
            if prefix not in A11Y_NS:
                raise ArgumentError(f"unknown namespace {prefix!r} in {selector!r}")
            name = f"{{{A11Y_NS[prefix]}}}{local}"
        val = m.group("val")
        if val and val[0] in "\"'":
            val = val[1:-1]
        compound[1].append((name, m.group("op"), val))
    if compound is not None:
        steps.append((comb, compound))
    if not steps:
        raise ArgumentError(f"empty CSS selector {selector!r}")
    return steps


def _matches(node: ET.Element, compound: Compound) -> bool:
    tag, tests = compound
    if tag != "*" and node.tag != tag:
        return False
    for name, op, val in tests:
        have = node.get(name)
        if have is None or (op is not None and not _OPS[op](have, val or "")):
            return False
    return True


def select(root: ET.Element, selector: str) -> list[ET.Element]:
    """Nodes under ``root`` (itself included) that match a comma-separated CSS selector, in document order."""
    parents = {child: parent for parent in root.iter() for child in parent}
    order = {node: i for i, node in enumerate(root.iter())}

    def siblings_before(node: ET.Element) -> list[ET.Element]:
        parent = parents.get(node)
        if parent is None:
            return []
        kids = list(parent)
        return kids[: kids.index(node)]

    def holds(node: ET.Element, steps: list[tuple[str, Compound]]) -> bool:
        comb, compound = steps[-1]
        if not _matches(node, compound):
            return False
        if len(steps) == 1:
            return True
        rest = steps[:-1]
        if comb == ">":
            parent = parents.get(node)
            return parent is not None and holds(parent, rest)
        if comb == " ":
            up = parents.get(node)
            while up is not None:
                if holds(up, rest):
                    return True
                up = parents.get(up)
            return False
        before = siblings_before(node)
        if comb == "+":
            return bool(before) and holds(before[-1], rest)
        return any(holds(s, rest) for s in before)

    found: set[ET.Element] = set()
    for part in selector.split(","):
        steps = _parse(part)
        found |= {node for node in root.iter() if holds(node, steps)}
    return sorted(found, key=order.__getitem__)


def _xpath(root: ET.Element, expr: str) -> list[ET.Element]:
    path = "." + expr if expr.startswith("//") else expr
    try:
        return root.findall(path, A11Y_NS) if not path.startswith("/") else root.findall("." + path, A11Y_NS)
    except (SyntaxError, KeyError) as exc:
        raise ArgumentError(f"unsupported XPath {expr!r} (ElementTree's subset): {exc}") from None


@limits("check_accessibility_tree")
def tree_limits(options: dict[str, Any], rules: Any) -> list[str]:
    """Selectors or XPath this tree matcher cannot take."""
    found = []
    empty = ET.Element("desktop-frame")
    for rule in rules if isinstance(rules, list) else []:
        try:
            _xpath(empty, rule["xpath"]) if "xpath" in rule else [_parse(s) for s in rule.get("selectors", [])]
        except ArgumentError as exc:
            found.append(f"check_accessibility_tree: {exc}")
    return found


@metric
def check_accessibility_tree(result: Any, rules: list[dict[str, Any]], osname: str = "ubuntu") -> float:
    """Each rule selects nodes (``xpath`` first, else ``selectors``); with ``text``, the best match scores it."""
    try:
        root = ET.fromstring(_text(result))
    except ET.ParseError:
        return 0.0
    total = 1.0
    for rule in rules:
        if "xpath" in rule:
            nodes = _xpath(root, rule["xpath"])
        elif "selectors" in rule:
            nodes = select(root, ", ".join(rule["selectors"]))
        else:
            raise ArgumentError("an accessibility-tree rule needs xpath or selectors")
        if not nodes:
            return 0.0
        if "text" in rule:
            want = rule["text"]
            if rule.get("exact", True):
                score = float(any((n.text or None) == want for n in nodes))
            else:
                score = max(sequence_ratio(want, n.text or "", autojunk=False) for n in nodes)
            total *= score
    return total


@metric
def run_sqlite3(result: Any, rules: dict[str, Any]) -> float:
    """The first column of the first row of ``rules["sql"]`` on the database (read-only, on a private copy)."""
    import sqlite3

    if not isinstance(result, bytes):
        return 0.0
    with tempfile.TemporaryDirectory(prefix="evaluators-osworld-") as scratch:
        copy = os.path.join(scratch, "db")
        with open(copy, "wb") as fh:
            fh.write(result)
        got = _query(sqlite3, copy, rules["sql"], 10.0)
    if isinstance(got, str) or not got or not got[0]:
        return 0.0
    try:
        return float(got[0][0] or 0)
    except (TypeError, ValueError):
        return 0.0


def _pdf_text(data: Any) -> str | None:
    from evaluators.pdf import PdfError, pdf_text

    try:
        return pdf_text(data) if isinstance(data, bytes) else None
    except (PdfError, ValueError, IndexError):
        return None


@metric
def compare_pdfs(result: Any, expected: Any) -> float:
    """The mean text similarity of the PDFs, pair by pair (one pair or two lists); an unreadable pair scores 0."""
    pairs = list(zip(result, expected)) if isinstance(expected, list) else [(result, expected)]
    total = 0.0
    for a, b in pairs:
        one, two = _pdf_text(a), _pdf_text(b)
        if one is not None and two is not None:
            total += sequence_ratio(one, two, autojunk=False)
    return total / len(pairs) if pairs else 0.0


@metric
def check_pdf_pages(result: Any, rules: dict[str, Any]) -> float:
    """The page count against ``ref_value`` by ``relation`` (an ``operator`` name: eq, lt, ge...)."""
    from evaluators.pdf import PdfError, pdf_pages

    if rules.get("relation") not in ("eq", "ne", "lt", "le", "gt", "ge"):
        raise ArgumentError(f"check_pdf_pages relation must be eq, ne, lt, le, gt or ge, not {rules.get('relation')!r}")
    try:
        pages = pdf_pages(result) if isinstance(result, bytes) else None
    except (PdfError, ValueError, IndexError):
        return 0.0
    return float(pages is not None and getattr(operator, rules["relation"])(pages, rules["ref_value"]))


@metric
def check_left_panel(result: Any) -> float:
    """Impress's slide panel is open: the tree has a ``document-frame`` named "Slides View"."""
    try:
        root = ET.fromstring(_text(result))
    except ET.ParseError:
        return 0.0
    return float(any(node.get("name") == "Slides View" for node in root.iter("document-frame")))
