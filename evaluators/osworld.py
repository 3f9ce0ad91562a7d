"""OSWorld's evaluator, run as one checker: ``func``/``conj`` semantics and its metrics.

The env turns a task's ``evaluator`` into ``osworld`` check arguments: each
metric with its ``result`` and ``expected`` already reduced to data refs
(``{"file": path}`` read beneath the state root, ``{"listdir": path}`` its
names, ``{"list": [...]}`` several, ``{"data_b64": ...}`` from the task,
``{"value": ...}`` for rules, ``{"slide_audio": path, "slide_index": i}``
the audio a PPTX's slide embeds or links), so no getter runs
code in the agent's desktop here. A missing file scores 0 (OSWorld's
FileNotFoundError rule). Metrics keep OSWorld's names, arguments and scores.
"""

from __future__ import annotations

import base64
import csv
import importlib
import io
import json
import re
from typing import Any, Callable

from evaluators import _state
from evaluators._budget import sequence_ratio
from evaluators._registry import ArgumentError, Result, check, require, result
from evaluators.office import OfficeError, read_docx, read_pptx, read_xlsx
from evaluators.xlsx import position

Metric = Callable[..., float]
METRICS: dict[str, Metric] = {}


def metric(fn: Metric) -> Metric:
    METRICS[fn.__name__] = fn
    return fn


#: Per metric, what in a task's options or ``rule`` this checker cannot do, named when the task is imported.
Limits = Callable[[dict[str, Any], Any], list[str]]
LIMITS: dict[str, Limits] = {}


def limits(name: str) -> Callable[[Limits], Limits]:
    def register(fn: Limits) -> Limits:
        LIMITS[name] = fn
        return fn

    return register


#: The modules whose ``@metric`` and ``@limits`` fill the two tables above.
METRIC_MODULES = (
    "osworld_audio",
    "osworld_chrome",
    "osworld_docs",
    "osworld_files",
    "osworld_images",
    "osworld_impress",
    "osworld_more",
    "osworld_ocr",
    "osworld_slides",
    "osworld_table",
    "osworld_writer",
)


def load_metrics() -> None:
    """Import every metric module (each registers on import); the package imports none until asked."""
    for name in METRIC_MODULES:
        importlib.import_module(f"evaluators.{name}")


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return "" if value is None else str(value)


@metric
def exact_match(result: Any, rules: dict[str, Any]) -> float:
    return float(_text(result) == rules["expected"])


@metric
def fuzzy_match(result: Any, rules: dict[str, Any]) -> float:
    return sequence_ratio(_text(result), rules["expected"])


@metric
def literal_match(result: Any, expected: Any, **options: Any) -> float:
    if options.get("type") == "list":
        return float(list(result or []) == list(expected or []))
    a, b = _text(result), _text(expected)
    if options.get("ignore_case"):
        a, b = a.lower(), b.lower()
    return float(a == b)


@metric
def check_include_exclude(result: Any, rules: dict[str, Any]) -> float:
    text = _text(result)
    ok = all(s in text for s in rules.get("include", [])) and not any(s in text for s in rules.get("exclude", []))
    return float(ok)


@metric
def is_in_list(result: Any, rules: dict[str, Any]) -> float:
    return float(rules["expected"] in (result or []))


@metric
def match_in_list(result: Any, rules: dict[str, Any]) -> float:
    return float(_text(result) in rules["expected"])


@metric
def file_contains(result: Any, config: dict[str, Any]) -> float:
    text = _text(result)
    return float(all(s in text for s in config["expected"]))


def _matches(pattern: dict[str, Any], row: dict[str, Any]) -> bool:
    return all(k in row and row[k] == v for k, v in pattern.items())


@metric
def check_csv(result: Any, rules: dict[str, Any], **options: Any) -> float:
    """Every ``expect`` record matches some row (by the keys it names), no ``unexpect`` record matches any."""
    rows = list(csv.DictReader(io.StringIO(_text(result))))
    expect, unexpect = rules.get("expect", []), rules.get("unexpect", [])
    found = all(any(_matches(p, r) for r in rows) for p in expect)
    return float(found and not any(_matches(p, r) for p in unexpect for r in rows))


@metric
def check_list(result: Any, rules: dict[str, Any]) -> float:
    """Every ``expect`` regex matches some line, no ``unexpect`` regex matches any (a list result is its lines)."""
    lines = [str(x) for x in result] if isinstance(result, list) else _text(result).splitlines()
    expect, unexpect = rules.get("expect", []), rules.get("unexpect", [])
    found = all(any(re.search(p, line) for line in lines) for p in expect)
    return float(found and not any(re.search(p, line) for p in unexpect for line in lines))


def _lines(value: Any, ignore_blanks: bool, ignore_case: bool) -> str:
    text = _text(value)
    if ignore_case:
        text = text.lower()
    if ignore_blanks:
        text = " ".join(text.split())
    return text


@metric
def compare_text_file(result: Any, expected: Any, ignore_blanks: bool = False, ignore_case: bool = False) -> float:
    return float(_lines(result, ignore_blanks, ignore_case) == _lines(expected, ignore_blanks, ignore_case))


@metric
def diff_text_file(result: Any, expected: Any) -> float:
    return sequence_ratio(_text(result), _text(expected))


@metric
def compare_csv(result: Any, expected: Any, **options: Any) -> float:
    def rows(value: Any) -> list[list[str]]:
        return [r for r in csv.reader(io.StringIO(_text(value))) if any(c.strip() for c in r)]

    return float(rows(result) == rows(expected))


@metric
def check_json(result: Any, rules: dict[str, Any], is_yaml: bool = False) -> float:
    try:
        data = json.loads(_text(result))
    except ValueError:
        return 0.0
    for rule in rules.get("expect", []):
        value = data
        for key in rule["key"]:
            value = value.get(key) if isinstance(value, dict) else None
        if not _compare(value, rule.get("method", "eq"), rule["ref"]):
            return 0.0
    for rule in rules.get("unexpect", []):
        value = data
        for key in rule["key"]:
            value = value.get(key) if isinstance(value, dict) else None
        if _compare(value, rule.get("method", "eq"), rule["ref"]):
            return 0.0
    return 1.0


@metric
def check_direct_json_object(result: Any, rules: dict[str, Any]) -> float:
    data = result if isinstance(result, dict) else _loads(result)
    if not isinstance(data, dict):
        return 0.0
    expected = rules.get("expected", {})
    if rules.get("relativeTime") or rules.get("expect_in_result"):
        return float(all(str(v) in str(data.get(k, "")) for k, v in expected.items()))
    return float(all(data.get(k) == v for k, v in expected.items()))


def _loads(value: Any) -> Any:
    try:
        return json.loads(_text(value))
    except ValueError:
        return None


def _compare(value: Any, method: str, ref: Any) -> bool:
    """OSWorld's comparison methods for cell and JSON rules."""
    if method == "eq":
        return value == ref
    if method == "ne":
        return value != ref
    if method in ("lt", "le", "gt", "ge", "approx"):
        try:
            a, b = float(value), float(ref)
        except (TypeError, ValueError):
            return False
        return {"lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b, "approx": abs(a - b) < 1e-3}[method]
    if method == "str_eq":
        return str(value) == str(ref)
    if method == "str_contains":
        return str(ref) in str(value)
    raise ArgumentError(f"unsupported comparison method {method!r}")


def _resolve(ref: Any) -> Any:
    """A data ref to the metric's input: file bytes (None when missing), task data, or a literal value."""
    require(ref, dict, "a getter ref")
    if "file" in ref:
        try:
            return _state.read_bytes(ref["file"])
        except (FileNotFoundError, NotADirectoryError, _state.NotRegular, _state.TooLarge):
            return None
    if "data_b64" in ref:
        return base64.b64decode(ref["data_b64"])
    if "listdir" in ref:
        try:
            return sorted(_state.listdir(ref["listdir"]))
        except (FileNotFoundError, NotADirectoryError):
            return None
    if "list" in ref:
        return [_resolve(item) for item in ref["list"]]
    if "value" in ref:
        return ref["value"]
    if "chrome" in ref:
        from evaluators.osworld_chrome import profile_value

        return profile_value(str(ref["chrome"]), str(ref["profile"]))
    if "slide_audio" in ref:
        from evaluators.osworld_audio import audio_in_slide

        return audio_in_slide(str(ref["slide_audio"]), int(ref.get("slide_index", 0)))
    if "last_row" in ref:
        data = _resolve({"file": ref["last_row"]})
        try:
            return last_row(data) if data is not None else None
        except (OfficeError, KeyError, ValueError, IndexError):
            return None
    raise ArgumentError(
        f"a getter ref needs file, listdir, list, data_b64, last_row, slide_audio, chrome or value, got {sorted(ref)}"
    )


def last_row(data: bytes) -> list[str] | None:
    """``content_from_vm_file``'s ``last_row``: the first sheet read as pandas does (row 1 the header), its last row as strings."""
    sheets = read_xlsx(data)
    if not sheets or not sheets[0][1]:
        return None
    cells = {position(ref): value for ref, value in sheets[0][1].items()}
    width, bottom = max(c for _, c in cells), max(r for r, _ in cells)
    if bottom < 2:
        return None
    return [str(cells[(bottom, c)]) if (bottom, c) in cells else "nan" for c in range(1, width + 1)]


@check("docx_contains")
def docx_contains(path: str, text: str, absent: bool = False) -> Result:
    """A saved DOCX's body text contains ``text`` (with ``absent``, no longer does: a deletion's progress).

    A dense check: the file is zipped XML, not text. An unreadable file passes neither way.
    """
    try:
        body = " ".join(read_docx(_state.read_bytes(path)))
    except (FileNotFoundError, NotADirectoryError, _state.NotRegular, OfficeError, KeyError):
        return result(False, f"{path}: no readable DOCX")
    found = text in body
    return result(found != absent, f"{text!r} {'in' if found else 'not in'} {path}")


@check("pptx_contains")
def pptx_contains(path: str, text: str, slide: int | None = None, whole: bool = False, absent: bool = False) -> Result:
    """A saved PPTX's text (of one slide, 1-based, in presentation order, if ``slide`` is given) contains ``text``.

    With ``whole``, ``text`` must be a whole paragraph (one text box's line of its own); with
    ``absent``, no longer does. A dense check like ``docx_contains``; an unreadable file, or a
    slide the deck does not have, passes neither way.
    """
    try:
        slides = read_pptx(_state.read_bytes(path))
    except (FileNotFoundError, NotADirectoryError, _state.NotRegular, OfficeError, KeyError):
        return result(False, f"{path}: no readable PPTX")
    if slide is not None and not 1 <= slide <= len(slides):
        return result(False, f"{path} has {len(slides)} slides, not slide {slide}")
    where = [slides[slide - 1]] if slide is not None else slides
    found = any(text == p if whole else text in p for paragraphs in where for p in paragraphs)
    place = f"slide {slide} of {path}" if slide is not None else path
    return result(found != absent, f"{text!r} {'in' if found else 'not in'} {place}")


@check("osworld")
def osworld(metrics: list, conj: str = "and") -> Result:
    """OSWorld's score: ``and`` stops at the first 0 else averages; ``or`` stops at the first 1 else takes the max."""
    require(metrics, list, "metrics")
    if conj not in ("and", "or") or not metrics:
        raise ArgumentError("conj is 'and' or 'or' and metrics is a non-empty list")
    load_metrics()
    scores, details = [], []
    for item in metrics:
        fn = METRICS.get(item.get("func", ""))
        if fn is None:
            raise ArgumentError(f"unknown OSWorld metric {item.get('func')!r}; known: {', '.join(sorted(METRICS))}")
        got = _resolve(item["result"])
        expected = _resolve(item["expected"]) if "expected" in item else None
        args = (got, expected) if "expected" in item else (got,)
        score = 0.0 if got is None else float(fn(*args, **item.get("options", {})))
        scores.append(score)
        details.append(f"{item['func']}={score:g}")
        if conj == "and" and score == 0.0 or conj == "or" and score == 1.0:
            break
    if conj == "and":
        final = 0.0 if scores[-1] == 0.0 else sum(scores) / len(scores)
    else:
        final = 1.0 if scores[-1] == 1.0 else max(scores)
    return result(final >= 1.0, ", ".join(details), score=final)
