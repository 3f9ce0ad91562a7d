"""OSWorld's spreadsheet, document and slide metrics on files built here: each rule and option, passing and failing."""

from __future__ import annotations

import base64
import sqlite3

import pytest

from evaluators import ArgumentError, run_check
from evaluators.osworld_table import match_rule
from tests.gui.ooxml import A, C, S, docx, para, pdf, pptx, rels, run, shape, table, xlsx


def b64(data: bytes) -> dict:
    return {"data_b64": base64.b64encode(data).decode()}


def score(func: str, result: bytes | dict, expected: bytes | dict | None = None, **options) -> float:
    item = {"func": func, "result": result if isinstance(result, dict) else b64(result), "options": options}
    if expected is not None:
        item["expected"] = expected if isinstance(expected, dict) else b64(expected)
    return run_check("osworld", {"metrics": [item]})["score"]


def table_score(result: bytes, expected: bytes | None, rule: dict) -> float:
    return score("compare_table", result, expected, rules=[rule])


DATA = '<sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>Name</t></is></c></row><row r="2"><c r="A2"><v>5</v></c></row></sheetData>'  # fmt: skip


def test_sheet_name_freeze_and_zoom():
    two = xlsx({"Data": DATA, "Sum": ""})
    assert table_score(two, xlsx({"Data": "", "Sum": ""}), {"type": "sheet_name"}) == 1.0
    assert table_score(two, xlsx({"Data": "", "Other": ""}), {"type": "sheet_name"}) == 0.0

    def frozen(top: str) -> str:
        return f'<sheetViews><sheetView zoomScale="150"><pane ySplit="1" topLeftCell="{top}" state="frozen"/></sheetView></sheetViews>'  # fmt: skip

    rule = {"type": "freeze", "sheet_idx0": 0, "sheet_idx1": "EI0"}
    assert table_score(xlsx({"S": frozen("A2")}), xlsx({"S": frozen("A40")}), rule) == 1.0  # scrolled: same freeze
    assert table_score(xlsx({"S": frozen("A2")}), xlsx({"S": DATA}), rule) == 0.0
    zoom = {"type": "zoom", "sheet_idx": 0, "method": "lt", "ref": 200}
    assert table_score(xlsx({"S": frozen("A2")}), None, zoom) == 1.0
    assert table_score(xlsx({"S": frozen("A2")}), None, {**zoom, "method": "gt"}) == 0.0
    assert table_score(xlsx({"S": DATA}), None, {**zoom, "method": "eq", "ref": 100.0}) == 1.0  # unset is 100


def test_row_props_and_data_validation():
    def rows(hidden: str) -> str:
        return f'<sheetData><row r="1" ht="12.8"/><row r="2" hidden="{hidden}"/></sheetData>'

    rule = {"type": "row_props", "sheet_idx0": 0, "sheet_idx1": "EI0", "props": ["hidden"]}
    assert table_score(xlsx({"S": rows("true")}), xlsx({"S": rows("1")}), rule) == 1.0
    assert table_score(xlsx({"S": rows("true")}), xlsx({"S": rows("false")}), rule) == 0.0

    def validation(sqref: str, items: str) -> bytes:
        dv = f'<dataValidations count="1"><dataValidation type="list" sqref="{sqref}"><formula1>"{items}"</formula1></dataValidation></dataValidations>'  # fmt: skip
        return xlsx({"S": DATA + dv})

    props = {
        "ranges": {"method": "spreadsheet_range", "ref": ["D2:D29", "D2:D1048576"]},
        "type": {"method": "eq", "ref": "list"},
        "formula1": {"method": "str_set_eq", "ref": ["Pass", "Fail", "Held"]},
    }
    rule = {"type": "data_validation", "sheet_idx": 0, "dv_props": [props]}
    assert table_score(validation("D2:D100", "Held,Pass,Fail"), None, rule) == 1.0
    assert table_score(validation("D2:D10", "Held,Pass,Fail"), None, rule) == 0.0  # does not cover D2:D29
    assert table_score(validation("D2:D100", "Pass,Fail"), None, rule) == 0.0
    assert table_score(xlsx({"S": DATA}), None, rule) == 0.0  # no validation at all


STYLES = (
    '<fonts><font><sz val="10"/></font><font><color rgb="FFFF0000"/></font></fonts>'
    '<fills><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill>'
    '<fill><patternFill patternType="solid"><fgColor rgb="FFFFFF00"/></patternFill></fill></fills>'
    '<cellXfs><xf fontId="0" fillId="0"/><xf fontId="1" fillId="2"/></cellXfs>'
)


def test_style_compares_font_colour_and_fill_of_every_cell():
    def sheet(s: int) -> bytes:
        return xlsx({"S": f'<sheetData><row r="1"><c r="A1" s="{s}"><v>1</v></c><c r="B1"><v>2</v></c></row></sheetData>'}, styles=STYLES)  # fmt: skip

    for props in (["font_color"], ["bgcolor"], ["font_color", "bgcolor"]):
        rule = {"type": "style", "sheet_idx0": 0, "sheet_idx1": "EI0", "props": props}
        assert table_score(sheet(1), sheet(1), rule) == 1.0
        assert table_score(sheet(1), sheet(0), rule) == 0.0


def chart_book(kind: str = "barChart", title: str = "Sales", bar_dir: str = "col") -> bytes:
    ser = "<c:ser><c:cat><c:strRef><c:f>S!$A$2:$A$4</c:f></c:strRef></c:cat><c:val><c:numRef><c:f>S!$B$2:$B$4</c:f></c:numRef></c:val></c:ser>"  # fmt: skip
    title_xml = f"<c:title><c:tx><c:rich><a:p><a:r><a:t>{title}</a:t></a:r></a:p></c:rich></c:tx></c:title>"
    chart = f'<c:chartSpace xmlns:c="{C}" xmlns:a="{A}"><c:chart>{title_xml}<c:plotArea><c:{kind}><c:barDir val="{bar_dir}"/>{ser}</c:{kind}></c:plotArea></c:chart></c:chartSpace>'  # fmt: skip
    return xlsx(
        {"S": DATA + '<drawing r:id="rId1"/>'},
        sheet_rels={1: rels({"rId1": "../drawings/drawing1.xml"})},
        extra={
            "xl/drawings/drawing1.xml": "<wsDr/>",
            "xl/drawings/_rels/drawing1.xml.rels": rels({"rId1": "../charts/chart1.xml"}),
            "xl/charts/chart1.xml": chart,
        },
    )


def test_chart_type_title_and_direction():
    rule = {"type": "chart", "sheet_idx0": 0, "sheet_idx1": "EI0", "chart_props": ["type", "title", "direction"]}
    assert table_score(chart_book(), chart_book(), rule) == 1.0
    assert table_score(chart_book(), chart_book(kind="bar3DChart"), rule) == 0.0
    assert table_score(chart_book(), chart_book(title="Costs"), rule) == 0.0
    assert table_score(chart_book(), chart_book(bar_dir="bar"), rule) == 0.0
    assert table_score(chart_book(), xlsx({"S": DATA}), rule) == 0.0  # no chart


def pivot_book(row_field: int = 0) -> bytes:
    fields = '<pivotField/><pivotField axis="axisRow"><items><item x="0"/><item x="1"/></items></pivotField><pivotField dataField="1"/>'  # fmt: skip
    pivot = (
        f'<pivotTableDefinition xmlns="{S}" name="P"><location ref="A3:B6"/><pivotFields count="3">{fields}</pivotFields>'
        f'<rowFields><field x="{row_field}"/></rowFields><dataFields><dataField fld="2" subtotal="sum"/></dataFields></pivotTableDefinition>'  # fmt: skip
    )
    cache = f'<pivotCacheDefinition xmlns="{S}"><cacheSource type="worksheet"><worksheetSource ref="A1:C9" sheet="Sheet1"/></cacheSource></pivotCacheDefinition>'  # fmt: skip
    return xlsx(
        {"Sheet1": DATA, "Sheet2": ""},
        sheet_rels={2: rels({"rId1": "../pivotTables/pivotTable1.xml"})},
        extra={
            "xl/pivotTables/pivotTable1.xml": pivot,
            "xl/pivotTables/_rels/pivotTable1.xml.rels": rels({"rId1": "../pivotCache/pivotCacheDefinition1.xml"}),
            "xl/pivotCache/pivotCacheDefinition1.xml": cache,
        },
    )


def test_pivot_table_fields_and_source():
    rule = {"type": "pivot_table", "sheet_idx0": "RNSheet2", "sheet_idx1": "ENSheet2", "pivot_props": ["col_fields", "filter", "row_fields", "data_fields"]}  # fmt: skip
    assert table_score(pivot_book(), pivot_book(), rule) == 1.0
    assert table_score(pivot_book(), pivot_book(row_field=1), rule) == 0.0
    assert table_score(pivot_book(), xlsx({"Sheet1": DATA, "Sheet2": ""}), rule) == 0.0


def test_rule_methods_are_osworlds():
    assert match_rule("Total: 12", {"method": "re.I", "ref": "total"})
    assert match_rule(10.4, {"method": "approx:0.5", "ref": 10})
    assert not match_rule(10.6, {"method": "approx:0.5", "ref": 10})
    assert match_rule(2, {"method": "range.te", "ref": [0, 2]}) and not match_rule(
        0, {"method": "range.te", "ref": [0, 2]}
    )
    assert match_rule('"b,a"', {"method": "str_set_eq", "ref": ["a", "b"]})
    assert not match_rule('"b,a"', {"method": "str_list_eq", "ref": ["a", "b"]})
    with pytest.raises(ArgumentError):
        match_rule(1, {"method": "nope", "ref": 1})


def test_compare_docx_files_options():
    a = docx(para("Hello  world") + para("") + para("Second") + table([["in a table"]]))
    b = docx(para("Hello world") + para("") + para("Second"))
    assert score("compare_docx_files", a, b) == 1.0  # blanks ignored; table text is not a body paragraph
    assert score("compare_docx_files", a, b, ignore_blanks=False) == 0.0
    assert score("compare_docx_files", docx(para("HELLO")), docx(para("hello")), ignore_case=True) == 1.0
    assert score("compare_docx_files", docx(para("HELLO")), docx(para("hello"))) == 0.0
    swapped = docx(para("Second") + para("") + para("Hello world"))
    assert score("compare_docx_files", swapped, b, ignore_order=True, ignore_blanks=False) == 1.0
    fewer = docx(para("Hello world") + para("Second"))
    assert score("compare_docx_files", fewer, b, ignore_blanks=False, delete_empty_lines=True) == 1.0
    assert score("compare_docx_files", fewer, b, ignore_blanks=False) == 0.0
    close = score("compare_docx_files", docx(para("Hello world!")), docx(para("Hello world")), fuzzy_match=True)
    assert 0.9 < close < 1.0
    assert 0.0 < score("compare_docx_files", docx(para("Hello world!")), b, content_only=True) < 1.0
    assert score("compare_docx_files", b"not a zip", b) == 0.0


def test_compare_line_spacing_and_docx_tables():
    def spaced(line: str) -> bytes:
        return docx(para("One", spacing=f'<w:spacing w:line="{line}" w:lineRule="auto"/>') + para("Two"))

    assert score("compare_line_spacing", spaced("360"), spaced("360")) == 1.0
    assert score("compare_line_spacing", spaced("360"), spaced("240")) == 0.0
    assert score("compare_line_spacing", spaced("360"), docx(para("One") + para("Three"))) == 0.0  # text differs
    grid = docx(table([["a", "b"], ["c", "d"]]))
    assert score("compare_docx_tables", grid, docx(table([["a ", "b"], ["c", "d"]]))) == 1.0
    assert score("compare_docx_tables", grid, docx(table([["a", "b"], ["c", "x"]]))) == 0.0
    assert score("compare_docx_tables", grid, docx(table([["a", "b", "e"], ["c", "d", "f"]]))) == 0.0
    assert score("compare_docx_tables", grid, docx(para("no table"))) == 0.0


def test_compare_pptx_files_compares_formatting_by_default():
    base = pptx([[shape([run("Title", b="1", sz="2400")])], [shape([run("Body")], algn="ctr")]])
    assert score("compare_pptx_files", base, base) == 1.0
    not_bold = pptx([[shape([run("Title", sz="2400")])], [shape([run("Body")], algn="ctr")]])
    assert score("compare_pptx_files", not_bold, base) == 0.0
    assert score("compare_pptx_files", not_bold, base, examine_font_bold=False) == 1.0
    smaller = pptx([[shape([run("Title", b="1", sz="1800")])], [shape([run("Body")], algn="ctr")]])
    assert score("compare_pptx_files", smaller, base) == 0.0
    assert score("compare_pptx_files", smaller, base, examine_font_size=False) == 1.0
    red = pptx([[shape([run("Title", b="1", sz="2400", color="FF0000")])], [shape([run("Body")], algn="ctr")]])
    blue = pptx([[shape([run("Title", b="1", sz="2400", color="0000FF")])], [shape([run("Body")], algn="ctr")]])
    assert score("compare_pptx_files", red, blue) == 0.0
    assert score("compare_pptx_files", red, blue, examine_color_rgb=False) == 1.0
    moved = pptx([[shape([run("Title", b="1", sz="2400")], x=9000)], [shape([run("Body")], algn="ctr")]])
    assert score("compare_pptx_files", moved, base) == 0.0
    assert score("compare_pptx_files", moved, base, examine_shape=False) == 1.0
    left = pptx([[shape([run("Title", b="1", sz="2400")])], [shape([run("Body")])]])
    assert score("compare_pptx_files", left, base) == 0.0
    assert score("compare_pptx_files", left, base, examine_alignment=False) == 1.0
    other = pptx([[shape([run("Title", b="1", sz="2400")])], [shape([run("Text")], algn="ctr")]])
    assert score("compare_pptx_files", other, base) == 0.0
    assert score("compare_pptx_files", pptx([[shape([run("Title", b="1", sz="2400")])]]), base) == 0.0


def test_compare_pptx_files_single_task_options_keep_upstreams_rules():
    elaborate = "Elaborate on what you want to discuss."
    base = pptx([[shape([run("Title")]), shape([run(elaborate)])]])
    grown = pptx([[shape([run("Title")]), shape([run(elaborate)], cy=4000)]])
    options = {"examine_shape": False, "examine_shape_for_shift_size": True}
    assert score("compare_pptx_files", grown, base, **options) == 1.0  # that one placeholder may change size
    moved_title = pptx([[shape([run("Title")], x=9000), shape([run(elaborate)])]])
    assert score("compare_pptx_files", moved_title, base, **options) == 0.0
    assert score("compare_pptx_files", moved_title, base, examine_shape=False) == 1.0


TREE = (
    '<desktop-frame xmlns:attr="https://accessibility.ubuntu.example.org/ns/attributes" '
    'xmlns:st="https://accessibility.ubuntu.example.org/ns/state">'
    '<application name="Calc"><tool-bar attr:id="main"><push-button name="Bold" st:checked="true"/>'
    '<label name="To"/><panel attr:class="pill"><label name="ann@x.org">ann</label></panel></tool-bar></application>'
    "</desktop-frame>"
)


def test_check_accessibility_tree_selectors_xpath_and_text():
    def tree_score(rules: list) -> float:
        return score("check_accessibility_tree", {"value": TREE}, {"value": rules})

    assert tree_score([{"selectors": ['application[name=Calc] push-button[name="Bold"][st|checked=true]']}]) == 1.0
    assert (
        tree_score([{"selectors": ["tool-bar[attr|id=main] label[name=To]~[attr|class=pill]>label[name*=ann]"]}]) == 1.0
    )
    assert tree_score([{"selectors": ["application[name=Writer] push-button"]}]) == 0.0
    assert tree_score([{"xpath": "//push-button[@name='Bold']"}]) == 1.0
    assert tree_score([{"selectors": ["panel > label"], "text": "ann", "exact": True}]) == 1.0
    assert tree_score([{"selectors": ["panel > label"], "text": "bob", "exact": True}]) == 0.0
    assert 0.0 < tree_score([{"selectors": ["panel > label"], "text": "anne", "exact": False}]) < 1.0
    assert score("check_accessibility_tree", {"value": None}, {"value": []}) == 0.0  # the probe saw nothing
    with pytest.raises(ArgumentError, match="unsupported CSS selector"):
        tree_score([{"selectors": ["label:nth-child(2)"]}])


def test_run_sqlite3_and_content_from_vm_file(tmp_path):
    db = tmp_path / "m.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE m (id INTEGER, read INTEGER)")
        conn.executemany("INSERT INTO m VALUES (?, ?)", [(1, 1), (2, 0)])
    conn.close()
    ref = {"file": str(db)}
    assert score("run_sqlite3", ref, {"value": {"sql": "SELECT COUNT(*) = 2 FROM m"}}) == 1.0
    assert score("run_sqlite3", ref, {"value": {"sql": "SELECT SUM(read) = 2 FROM m"}}) == 0.0
    assert score("run_sqlite3", ref, {"value": {"sql": "SELECT nonsense"}}) == 0.0
    sheet = '<sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>Name</t></is></c><c r="B1" t="inlineStr"><is><t>Cites</t></is></c></row><row r="2"><c r="A2" t="inlineStr"><is><t>Ada</t></is></c><c r="B2"><v>42</v></c></row></sheetData>'  # fmt: skip
    (tmp_path / "r.xlsx").write_bytes(xlsx({"S": sheet}))
    last = {"last_row": str(tmp_path / "r.xlsx")}
    assert score("literal_match", last, {"value": ["Ada", "42"]}, type="list") == 1.0
    assert score("literal_match", last, {"value": ["Ada", "41"]}, type="list") == 0.0
    assert score("literal_match", {"last_row": str(tmp_path / "none.xlsx")}, {"value": []}, type="list") == 0.0


def test_compare_pdfs_and_check_pdf_pages():
    from evaluators.pdf import pdf_text

    two = pdf([["Hello PDF world", "café (2)"], ["Page two"]])
    assert pdf_text(two) == "Hello PDF world\ncafé (2)\nPage two"
    assert score("compare_pdfs", two, two) == 1.0
    close = score("compare_pdfs", two, pdf([["Hello PDF world", "cafe (2)"], ["Page two"]]))
    assert 0.9 < close < 1.0
    assert score("compare_pdfs", two, pdf([["Something else entirely"]])) < 0.5
    assert score("compare_pdfs", b"not a pdf", two) == 0.0
    pair = {"list": [b64(two), b64(b"not a pdf")]}
    assert score("compare_pdfs", pair, {"list": [b64(two), b64(two)]}) == 0.5  # the mean over pairs
    assert score("check_pdf_pages", two, {"value": {"relation": "eq", "ref_value": 2}}) == 1.0
    assert score("check_pdf_pages", two, {"value": {"relation": "gt", "ref_value": 2}}) == 0.0


def test_check_left_panel_looks_for_the_slides_view():
    panel = (
        '<desktop-frame><application name="soffice"><document-frame name="Slides View"/></application></desktop-frame>'
    )
    assert score("check_left_panel", {"value": panel}) == 1.0
    assert score("check_left_panel", {"value": panel.replace("Slides View", "Outline View")}) == 0.0
    assert score("check_left_panel", {"value": None}) == 0.0
