"""OSWorld's metrics over archives, listings, single files and command output: zips and tarballs compared member by
member, lines, names, ``timedatectl``'s zone and GNOME's favourite apps.

Archives are read in memory (zip, or tar in any compression), regular
members only, each capped in size; nothing is extracted to disk.
"""

from __future__ import annotations

import ast
import io
import posixpath
import re
import tarfile
import zipfile
from typing import Any

from evaluators._budget import BoundedZipFile, decompressed, sequence_ratio
from evaluators._registry import ArgumentError
from evaluators.office import _W
from evaluators.osworld import METRICS, _text, limits, metric
from evaluators.osworld_docs import _read, _read_both, paragraph_text
from evaluators.osworld_more import _pdf_text

MAX_MEMBER = 64 * 1024 * 1024
#: ``compare_archive``'s ``file_type`` -> the metric that compares each pair of members.
ARCHIVE_TYPES = {
    "text": "compare_text_file",
    "pdf": "compare_pdfs",
    "docx": "compare_docx_files",
    "ppt": "compare_pptx_files",
    "csv": "compare_csv",
    "table": "compare_table",
}


@limits("compare_archive")
def archive_limits(options: dict[str, Any], rule: Any) -> list[str]:
    kind = options.get("file_type", "text")
    return [] if kind in ARCHIVE_TYPES else [f"compare_archive file_type {kind!r}"]


def _members(data: bytes) -> dict[str, bytes]:
    """Regular members by path (``./`` and leading ``/`` stripped); not an archive raises ``ValueError``."""
    out: dict[str, bytes] = {}
    if zipfile.is_zipfile(io.BytesIO(data)):
        with BoundedZipFile(io.BytesIO(data)) as z:
            for info in z.infolist():
                if not info.is_dir() and info.file_size <= MAX_MEMBER:
                    out[posixpath.normpath(info.filename).lstrip("/")] = z.read(info)
        return out
    try:
        # Unwrapped here, under the budget: tarfile would inflate all of it to list the members.
        with tarfile.open(fileobj=io.BytesIO(decompressed(data, "tar")), mode="r:") as tar:
            for member in tar.getmembers():
                if member.isfile() and member.size <= MAX_MEMBER:
                    handle = tar.extractfile(member)
                    if handle is not None:
                        out[posixpath.normpath(member.name).lstrip("/")] = handle.read()
    except tarfile.TarError as exc:
        raise ValueError(f"not an archive: {exc}") from None
    return out


@metric
def compare_zip_files(result: Any, expected: Any, **options: Any) -> float:
    """The same member names; PDFs at least 0.95 similar in text, every other member byte for byte."""
    try:
        one, two = BoundedZipFile(io.BytesIO(result)), BoundedZipFile(io.BytesIO(expected))
    except (zipfile.BadZipFile, TypeError):
        return 0.0
    with one, two:
        if set(one.namelist()) != set(two.namelist()):
            return 0.0
        for name in one.namelist():
            a, b = one.read(name), two.read(name)
            if name.lower().endswith(".pdf"):
                ta, tb = _pdf_text(a), _pdf_text(b)
                if ta is None or tb is None or sequence_ratio(ta, tb) < 0.95:
                    return 0.0
            elif a != b:
                return 0.0
    return 1.0


@metric
def compare_archive(result: Any, expected: Any, file_path: str = "", file_type: str = "text", **options: Any) -> float:
    """The same names in ``file_path`` of both archives, then each pair scored by ``file_type``'s metric, averaged."""
    if file_type not in ARCHIVE_TYPES:
        raise ArgumentError(
            f"compare_archive file_type {file_type!r} is not supported (known: {sorted(ARCHIVE_TYPES)})"
        )
    try:
        one, two = _members(result), _members(expected)
    except (ValueError, TypeError, zipfile.BadZipFile):
        return 0.0
    prefix = posixpath.normpath(file_path).lstrip("/") if file_path else ""

    def listing(members: dict[str, bytes]) -> dict[str, bytes | None]:
        names: dict[str, bytes | None] = {}
        for path, data in members.items():
            rel = posixpath.relpath(path, prefix) if prefix else path
            if rel.startswith(".."):
                continue
            head, _, rest = rel.partition("/")
            names[head] = None if rest else data
        return names

    a, b = listing(one), listing(two)
    if sorted(a) != sorted(b) or not a:
        return 0.0
    compare = METRICS[ARCHIVE_TYPES[file_type]]
    total = 0.0
    for name in sorted(a):
        x, y = a[name], b[name]
        total += float(compare(x, y, **options)) if x is not None and y is not None else 0.0
    return total / len(a)


@metric
def check_line_number(result: Any, line_number: dict[str, Any]) -> float:
    """The number of lines holding a time of day (``HH:MM:SS``) is ``expected``."""
    lines = _text(result).splitlines()
    count = sum(1 for line in lines if re.search(r"([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)", line))
    return float(count == int(line_number["expected"]))


@metric
def check_moved_jpgs(result: Any, rules: dict[str, Any]) -> float:
    """The directory holds exactly the expected names (a listing, or OSWorld's tree with ``children``)."""
    names = [c["name"] for c in result.get("children", [])] if isinstance(result, dict) else list(result or [])
    return float(len(names) == len(rules["expected"]) and set(names) == set(rules["expected"]))


@metric
def is_utc_0(result: Any) -> float:
    """``timedatectl status``'s line index 3 (systemd's "Time zone: Area/City (ABBR, +0000)") ends with ``+0000)``.

    Upstream's convention: the fourth line, not whichever line names the zone; output of fewer lines
    (no timedatectl) scores 0 here where upstream raises.
    """
    lines = _text(result).split("\n")
    return float(len(lines) > 3 and lines[3].endswith("+0000)"))


def gvariant_strings(text: str) -> list[str] | None:
    """A GVariant string array as ``gsettings get`` prints it (``['a', "b's"]``, ``@as []``), or None.

    Parsed as a Python literal (``ast.literal_eval``, never ``eval`` as upstream): GVariant's text
    form of an ``as`` is one, once an ``@as`` type annotation is dropped.
    """
    text = text.strip()
    if text.startswith("@as "):
        text = text[4:].lstrip()
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None
    return value


@metric
def check_gnome_favorite_apps(result: Any, rules: dict[str, Any]) -> float:
    """``gsettings get org.gnome.shell favorite-apps`` lists the expected apps: as many, the same set (upstream)."""
    apps = gvariant_strings(_text(result))
    expected = list(rules["expected"])
    return float(apps is not None and len(apps) == len(expected) and set(apps) == set(expected))


def _lines_and_ids(data: Any) -> tuple[list[str], list[str]] | None:
    body = _read(data)
    if body is None:
        return None
    lines = [t.strip() for t in map(paragraph_text, body.findall(f"{_W}p")) if t.strip()]
    return lines, [line.split(",")[1].strip() for line in lines if len(line.split(",")) == 4]


@metric
def compare_unique_train_records(result: Any, expected: Any, **options: Any) -> float:
    """Lines all from the initial document (``expected[1]``), no train id twice, the gold's ids and line count (``expected[0]``)."""
    if not isinstance(expected, list) or len(expected) < 2:
        return 0.0
    mine, gold, initial = _lines_and_ids(result), _lines_and_ids(expected[0]), _lines_and_ids(expected[1])
    if mine is None or gold is None or initial is None:
        return 0.0
    (lines, ids), (gold_lines, gold_ids) = mine, gold
    ok = set(lines) <= set(initial[0]) and len(ids) == len(set(ids)) and set(ids) == set(gold_ids)
    return float(ok and len(lines) == len(gold_lines))


@metric
def compare_references(
    result: Any, expected: Any, reference_indicator: str = "References", reference_base_result: float = 0.5
) -> float:
    """The paragraphs after the references heading, paired, by mean similarity rescaled above ``reference_base_result``."""
    pair = _read_both(result, expected)
    if pair is None:
        return 0.0
    a, b = pair
    one = [paragraph_text(p) for p in a.findall(f"{_W}p")]
    two = [paragraph_text(p) for p in b.findall(f"{_W}p")]
    if reference_indicator not in one and reference_indicator not in two:
        return 1.0
    if reference_indicator not in one or reference_indicator not in two:
        return 0.0
    ref1 = [p for p in one[one.index(reference_indicator) + 1 :] if p.strip()]
    ref2 = [p for p in two[two.index(reference_indicator) + 1 :] if p.strip()]
    if len(ref1) != len(ref2) or not ref1:
        return 0.0
    mean = sum(sequence_ratio(x, y, autojunk=False) for x, y in zip(ref1, ref2)) / len(ref1)
    return (mean - reference_base_result) / (1 - reference_base_result) if mean >= reference_base_result + 0.01 else 0.0
