"""OSWorld's evaluator as the trusted checker runs it: conj semantics, getters as data refs, XLSX rules."""

from __future__ import annotations

import base64
import importlib.util
import io
import zipfile
from pathlib import Path

import pytest

from evaluators import ArgumentError, run_check
from evaluators.osworld_table import table_limits

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("ooxml", ROOT / "scripts/gui/ooxml.py")
ooxml = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ooxml)


def b64(data: bytes) -> dict:
    return {"data_b64": base64.b64encode(data).decode()}


def test_text_file_metric_reads_the_file_and_a_missing_file_scores_zero(tmp_path):
    (tmp_path / "a.txt").write_text("x <y>\n")
    ok = {"func": "compare_text_file", "result": {"file": str(tmp_path / "a.txt")}, "expected": b64(b"x <y>\n")}
    assert run_check("osworld", {"metrics": [ok]})["score"] == 1.0
    gone = {**ok, "result": {"file": str(tmp_path / "missing.txt")}}
    assert run_check("osworld", {"metrics": [gone]})["score"] == 0.0


def test_conj_and_stops_at_zero_or_averages_and_or_takes_the_max():
    half = {"func": "fuzzy_match", "result": {"value": "abcd"}, "expected": {"value": {"expected": "abxx"}}}
    one = {"func": "exact_match", "result": {"value": "a"}, "expected": {"value": {"expected": "a"}}}
    zero = {"func": "exact_match", "result": {"value": "a"}, "expected": {"value": {"expected": "b"}}}
    assert run_check("osworld", {"metrics": [one, half], "conj": "and"})["score"] == 0.75
    assert run_check("osworld", {"metrics": [one, zero, half], "conj": "and"})["score"] == 0.0
    assert run_check("osworld", {"metrics": [zero, half], "conj": "or"})["score"] == 0.5
    assert run_check("osworld", {"metrics": [zero, one], "conj": "or"})["passed"] is True


def test_compare_table_rules_on_a_generated_workbook(tmp_path):
    path = tmp_path / "b.xlsx"
    ooxml.write_xlsx(path, [["Item", "Cost"], ["Rent", 55], ["Total", "=SUM(B2:B2)"]], sheet="S")
    data = path.read_bytes()
    cell = {"type": "check_cell", "sheet_idx": 0, "coordinate": "B3", "props": {"formula": {"method": "eq", "ref": "=SUM(B2:B2)"}}}  # fmt: skip
    item = {"func": "compare_table", "result": b64(data), "options": {"rules": [cell]}}
    assert run_check("osworld", {"metrics": [item]})["score"] == 1.0
    cell["props"] = {"value": {"method": "eq", "ref": 55}}
    assert run_check("osworld", {"metrics": [item]})["score"] == 0.0  # B3 has no cached value
    same = {"func": "compare_table", "result": b64(data), "expected": b64(data), "options": {"rules": [{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}]}}  # fmt: skip
    assert run_check("osworld", {"metrics": [same]})["score"] == 1.0
    other = tmp_path / "c.xlsx"
    ooxml.write_xlsx(other, [["Item", "Cost"], ["Rent", 56]])
    same["expected"] = b64(other.read_bytes())
    assert run_check("osworld", {"metrics": [same]})["score"] == 0.0


def _bold_a1(path: Path) -> bytes:
    """The workbook at ``path`` with a second font, bold, given to A1 (as Calc saves a cell made bold)."""
    styles = (
        '<?xml version="1.0" encoding="UTF-8"?><styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
        '<fonts count="2"><font><sz val="10"/><name val="Arial"/></font><font><b val="true"/><sz val="10"/><name val="Arial"/></font></fonts>'
        '<fills count="1"><fill><patternFill patternType="none"/></fill></fills>'
        '<cellXfs count="2"><xf fontId="0" fillId="0"/><xf fontId="1" fillId="0" applyFont="true"/></cellXfs></styleSheet>'
    )  # fmt: skip
    out = io.BytesIO()
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(out, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename == "xl/worksheets/sheet1.xml":
                data = data.replace(b'<c r="A1"', b'<c r="A1" s="1"')
            dst.writestr(item, data)
        dst.writestr("xl/styles.xml", styles)
    return out.getvalue()


def test_check_cell_reads_style_props_as_upstream_does(tmp_path):
    path = tmp_path / "s.xlsx"
    ooxml.write_xlsx(path, [["Region", "Sales"], ["North", 50]])
    bold = {"font_bold": {"method": "eq", "ref": True}}
    rules = [{"type": "check_cell", "sheet_idx": 0, "coordinate": c, "props": bold} for c in ("A1", "B1")]
    item = {"func": "compare_table", "result": b64(_bold_a1(path)), "options": {"rules": rules[:1]}}
    assert run_check("osworld", {"metrics": [item]})["score"] == 1.0
    item["options"] = {"rules": rules}
    assert run_check("osworld", {"metrics": [item]})["score"] == 0.0  # B1 is not bold
    item["result"] = b64(path.read_bytes())
    item["options"] = {"rules": rules[:1]}
    assert run_check("osworld", {"metrics": [item]})["score"] == 0.0  # a workbook without styles
    unknown = {"type": "check_cell", "sheet_idx": 0, "coordinate": "A1", "props": {"border_top": {"method": "eq"}}}
    assert table_limits({"rules": [unknown]}, None) == ["compare_table check_cell prop 'border_top'"]


def test_unknown_metric_is_an_argument_error_not_a_zero():
    with pytest.raises(ArgumentError, match="no_such_metric"):
        run_check("osworld", {"metrics": [{"func": "no_such_metric", "result": {"value": 1}}]})


def test_check_csv_and_check_list_and_a_directory_listing(tmp_path):
    (tmp_path / "r.csv").write_text("name,qty\napple,3\npear,0\n")
    csv_ref = {"file": str(tmp_path / "r.csv")}
    rules = {"expect": [{"name": "apple", "qty": "3"}], "unexpect": [{"qty": "7"}]}
    item = {"func": "check_csv", "result": csv_ref, "expected": {"value": rules}}
    assert run_check("osworld", {"metrics": [item]})["score"] == 1.0
    rules["unexpect"] = [{"name": "pear"}]
    assert run_check("osworld", {"metrics": [item]})["score"] == 0.0
    listing = {"func": "check_list", "result": {"listdir": str(tmp_path)}, "expected": {"value": {"expect": [r"^r\.csv$"]}}}  # fmt: skip
    assert run_check("osworld", {"metrics": [listing]})["score"] == 1.0
    listing["expected"] = {"value": {"expect": [r"\.csv$"], "unexpect": [r"^r\."]}}
    assert run_check("osworld", {"metrics": [listing]})["score"] == 0.0
    listing["result"] = {"listdir": str(tmp_path / "missing")}
    assert run_check("osworld", {"metrics": [listing]})["score"] == 0.0


def test_docx_contains_reads_the_zipped_body(tmp_path):
    ooxml.write_docx(tmp_path / "m.docx", ["Title", "Approved by the board."])
    assert run_check("docx_contains", {"path": str(tmp_path / "m.docx"), "text": "by the board"})["passed"]
    assert not run_check("docx_contains", {"path": str(tmp_path / "m.docx"), "text": "bored"})["passed"]
    assert run_check("docx_contains", {"path": str(tmp_path / "m.docx"), "text": "bored", "absent": True})["passed"]
    assert not run_check("docx_contains", {"path": str(tmp_path / "m.docx"), "text": "board", "absent": True})["passed"]
    (tmp_path / "t.docx").write_text("Approved by the board.")  # not a DOCX: never a pass
    assert not run_check("docx_contains", {"path": str(tmp_path / "t.docx"), "text": "board"})["passed"]
    assert not run_check("docx_contains", {"path": str(tmp_path / "t.docx"), "text": "bored", "absent": True})["passed"]


def test_pptx_contains_reads_slides_in_presentation_order(tmp_path):
    deck = tmp_path / "d.pptx"
    ooxml.write_pptx(deck, [("Agenda", ["Budget", "Hiring plan"]), ("Budget", [])])

    def passed(**args) -> bool:
        return run_check("pptx_contains", {"path": str(deck), **args})["passed"]

    assert passed(text="Hiring") and passed(text="Hiring", slide=1) and not passed(text="Hiring", slide=2)
    assert passed(text="Budget", slide=2, whole=True) and not passed(text="Budg", slide=2, whole=True)
    assert passed(text="Draft", absent=True) and not passed(text="Agenda", absent=True)
    assert not passed(text="Agenda", slide=3) and not passed(text="Draft", slide=3, absent=True)
    (tmp_path / "t.pptx").write_text("Agenda")  # not a PPTX: never a pass
    assert not run_check("pptx_contains", {"path": str(tmp_path / "t.pptx"), "text": "Agenda"})["passed"]
    assert not run_check("pptx_contains", {"path": str(tmp_path / "t.pptx"), "text": "x", "absent": True})["passed"]
