"""A check's work is bounded: small files that inflate, or texts that take long to compare, fail the check at
once (score 0) instead of running it past its deadline, which would void the agent's failure as infra."""

from __future__ import annotations

import base64
import difflib
import gzip
import io
import tarfile
import zipfile

from evaluators import run_batch, run_check
from evaluators._budget import MAX_CHECK_WORK
from tests.gui.ooxml import xlsx

MIB = 1 << 20


def data(raw: bytes) -> dict:
    return {"data_b64": base64.b64encode(raw).decode()}


def metric(func: str, result: bytes, expected: bytes | None = None, **options) -> dict:
    item = {"func": func, "result": data(result), "options": options}
    if expected is not None:
        item["expected"] = data(expected)
    return {"metrics": [item]}


def deflated(parts: dict[str, bytes | str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, part in parts.items():
            z.writestr(name, part)
    return buf.getvalue()


def padded_sheet(mib: int) -> str:
    """A worksheet of one cell and ``mib`` MiB of whitespace: quick to make, quick to parse, large inflated."""
    return '<sheetData><row r="1"><c r="A1"><v>7</v></c></row></sheetData>' + " " * (mib * MIB)


def rule(value: int) -> dict:
    return {
        "type": "check_cell",
        "sheet_idx": 0,
        "coordinate": "A1",
        "props": {"value": {"method": "eq", "ref": value}},
    }


def test_a_workbook_whose_sheets_inflate_past_the_budget_fails_and_one_within_it_is_read():
    within = xlsx({"Sheet1": padded_sheet(20), "Sheet2": padded_sheet(20)})
    assert run_check("osworld", metric("compare_table", deflated_copy(within), rules=[rule(7)]))["score"] == 1.0
    # Each sheet is under the per-member cap; together they are past what one check reads.
    many = xlsx({f"Sheet{i}": padded_sheet(20) for i in range(1, 6)})
    bomb = deflated_copy(many)
    assert len(bomb) < 2 * MIB < MAX_CHECK_WORK
    out = run_check("osworld", metric("compare_table", bomb, rules=[rule(7)]))
    assert out["score"] == 0.0 and "of work a check does" in out["detail"], out


def deflated_copy(raw: bytes) -> bytes:
    with zipfile.ZipFile(io.BytesIO(raw)) as z:
        return deflated({info.filename: z.read(info) for info in z.infolist()})


def tar_gz(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, body in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
    return gzip.compress(buf.getvalue(), 6)


def test_a_tar_gz_that_inflates_past_the_budget_fails_before_it_is_listed():
    small = tar_gz({"out/a.txt": b"alpha\n"})
    assert run_check("osworld", metric("compare_archive", small, small, file_path="out"))["score"] == 1.0
    bomb = tar_gz({"out/a.txt": b"alpha\n", "out/zeros.bin": bytes(200 * MIB)})
    assert len(bomb) < MIB
    out = run_check("osworld", metric("compare_archive", bomb, small, file_path="out"))
    assert out["score"] == 0.0 and "of work a check does" in out["detail"], out


def test_zip_members_count_against_the_budget_in_compare_zip_files():
    parts = {f"part{i}.bin": bytes(30 * MIB) for i in range(3)}
    bomb = deflated(parts)
    out = run_check("osworld", metric("compare_zip_files", bomb, bomb))
    assert out["score"] == 0.0 and "zip member" in out["detail"], out
    two = deflated({name: parts[name] for name in ("part0.bin",)})
    assert run_check("osworld", metric("compare_zip_files", two, two))["score"] == 1.0


def test_a_text_too_long_to_compare_in_time_fails_and_a_shorter_one_is_scored_as_difflib_scores_it():
    gold = "line one\nline two\n"
    near = "line one\nline 2\n"
    out = run_check("osworld", metric("diff_text_file", near.encode(), gold.encode()))
    assert out["score"] == difflib.SequenceMatcher(None, near, gold).ratio()
    long = ("line one\n" * (MAX_CHECK_WORK // 4 // 9 + 1)).encode()
    out = run_check("osworld", metric("diff_text_file", long, gold.encode()))
    assert out["score"] == 0.0 and "text compared" in out["detail"], out


def test_every_check_of_a_batch_starts_with_the_whole_budget():
    workbook = deflated_copy(xlsx({"Sheet1": padded_sheet(40)}))
    spec = {"check": "osworld", "args": metric("compare_table", workbook, rules=[rule(7)])}
    assert [r["score"] for r in run_batch([spec, spec])] == [1.0, 1.0]
