"""Checks on a file's text: substrings, regular expressions, normalised equality."""

from __future__ import annotations

import re

from evaluators import _state
from evaluators._budget import sequence_ratio
from evaluators._registry import ArgumentError, Result, check, require, result

MAX_TEXT_BYTES = _state.MAX_READ_BYTES


class _Unreadable(Exception):
    pass


def read_text(path: str) -> str:
    """The file's text (UTF-8, undecodable bytes replaced); ``_Unreadable`` says why not.

    At most ``MAX_TEXT_BYTES`` are read, even from a file that grows while
    it is read; a fifo or a device is never opened.
    """
    require(path, str, "path")
    try:
        data = _state.read_bytes(path, MAX_TEXT_BYTES)
    except (FileNotFoundError, NotADirectoryError):
        raise _Unreadable(f"{path}: missing") from None
    except (_state.NotRegular, _state.TooLarge) as exc:
        raise _Unreadable(f"{path}: {_state.describe(exc)}") from None
    except OSError as exc:
        raise _Unreadable(f"{path}: cannot read: {_state.describe(exc)}") from None
    return data.decode("utf-8", errors="replace")


def normalise(text: str, strip: bool = True, collapse_whitespace: bool = False, ignore_case: bool = False) -> str:
    """Apply the comparison options shared by the text checks."""
    text = text.replace("\r\n", "\n")
    if collapse_whitespace:
        text = " ".join(text.split())
    elif strip:
        text = "\n".join(line.rstrip() for line in text.strip().split("\n"))
    if ignore_case:
        text = text.casefold()
    return text


def _compile(pattern: object, flags: int) -> re.Pattern[str]:
    require(pattern, str, "pattern")
    try:
        return re.compile(pattern, flags)
    except re.error as exc:
        raise ArgumentError(f"pattern {pattern!r} is not a valid regular expression: {exc}") from None


@check("file_contains")
def file_contains(path: str, text: str, ignore_case: bool = False, min_count: int = 1) -> Result:
    """The file contains ``text`` at least ``min_count`` times."""
    require(text, str, "text")
    require(min_count, int, "min_count")
    if not text:
        raise ArgumentError("text must not be empty")
    try:
        content = read_text(path)
    except _Unreadable as exc:
        return result(False, str(exc))
    haystack, needle = (content.casefold(), text.casefold()) if ignore_case else (content, text)
    count = haystack.count(needle)
    ok = count >= min_count
    return result(ok, f"{path}: {text!r} found {count} time(s)" + ("" if ok else f", expected at least {min_count}"))


@check("file_matches")
def file_matches(
    path: str, pattern: str, full_match: bool = False, multiline: bool = False, ignore_case: bool = False
) -> Result:
    """The file's text matches a regular expression (searched, or whole-text with ``full_match``)."""
    flags = (re.MULTILINE if multiline else 0) | (re.IGNORECASE if ignore_case else 0)
    regex = _compile(pattern, flags | (re.DOTALL if full_match else 0))
    try:
        content = read_text(path)
    except _Unreadable as exc:
        return result(False, str(exc))
    match = regex.fullmatch(content) if full_match else regex.search(content)
    if match is None:
        return result(False, f"{path}: no match for {pattern!r}")
    return result(True, f"{path}: matched {match.group(0)[:80]!r}")


def _expected_text(expected: str | None, expected_file: str | None) -> str:
    if (expected is None) == (expected_file is None):
        raise ArgumentError("give exactly one of expected or expected_file")
    if expected is not None:
        return require(expected, str, "expected")
    try:
        return read_text(expected_file)
    except _Unreadable as exc:
        raise ArgumentError(f"expected_file {exc}") from None


def _normalised_pair(
    path: str, expected: str | None, expected_file: str | None, strip: bool, collapse: bool, ignore_case: bool
) -> tuple[str, str] | Result:
    """The file's text and the expected text, both normalised; a failed result if the file is unreadable."""
    want = _expected_text(expected, expected_file)
    try:
        got = read_text(path)
    except _Unreadable as exc:
        return result(False, str(exc))
    return normalise(got, strip, collapse, ignore_case), normalise(want, strip, collapse, ignore_case)


@check("text_equals")
def text_equals(
    path: str,
    expected: str | None = None,
    expected_file: str | None = None,
    strip: bool = True,
    collapse_whitespace: bool = False,
    ignore_case: bool = False,
) -> Result:
    """The file's text equals the expected text after normalisation.

    ``strip`` drops leading/trailing blank space and trailing spaces on
    each line; ``collapse_whitespace`` turns every run of whitespace into
    one space; ``ignore_case`` compares case-folded text.
    """
    pair = _normalised_pair(path, expected, expected_file, strip, collapse_whitespace, ignore_case)
    if isinstance(pair, dict):
        return pair
    a, b = pair
    if a == b:
        return result(True, f"{path}: text equals expected")
    first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return result(False, f"{path}: differs from expected at character {first}: got {a[first : first + 40]!r}")


@check("text_match")
def text_match(
    path: str,
    expected: str | None = None,
    expected_file: str | None = None,
    threshold: float = 1.0,
    strip: bool = True,
    collapse_whitespace: bool = False,
    ignore_case: bool = False,
) -> Result:
    """Similarity of the file's text to the expected text, as a graded score.

    The score is difflib's ratio (1.0 for identical normalised texts); the
    check passes when the score reaches ``threshold``.
    """
    require(threshold, (int, float), "threshold")
    if not 0.0 <= threshold <= 1.0:
        raise ArgumentError(f"threshold must be within [0, 1], got {threshold}")
    pair = _normalised_pair(path, expected, expected_file, strip, collapse_whitespace, ignore_case)
    if isinstance(pair, dict):
        return pair
    a, b = pair
    ratio = 1.0 if a == b else sequence_ratio(a, b, autojunk=False)
    return result(ratio >= threshold, f"{path}: similarity {ratio:.3f} (threshold {threshold})", score=ratio)
