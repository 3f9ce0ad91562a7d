"""``check_cell``'s ``merge``, ``compare_conference_city_in_order``, ``fuzzy_place_math`` and
``is_expected_installed_extensions`` scored as upstream scores them, on files written here (not upstream's)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from typer.testing import CliRunner

from agentenvs.cli import app
from agentenvs.envs.gui.osworld_task import OSWorldTask, needs_profile
from evaluators import run_check
from evaluators.osworld_docs import indel_ratio
from evaluators.osworld_table import table_limits
from tests.gui.ooxml import R, S, docx, para, table, xlsx


def b64(data: bytes) -> dict:
    return {"data_b64": base64.b64encode(data).decode()}


def score(func: str, result: dict, expected: dict | None = None, **options) -> float:
    item = {"func": func, "result": result, "options": options}
    if expected is not None:
        item["expected"] = expected
    return run_check("osworld", {"metrics": [item]})["score"]


def inline(ref: str, text: str) -> str:
    return f'<c r="{ref}" t="inlineStr"><is><t>{text}</t></is></c>'


# -- check_cell's merge -------------------------------------------------------------------------

MERGED = xlsx(
    {
        "Sheet1": "<sheetData/>",
        "Sheet2": (
            f"<sheetData><row r='1'>{inline('A1', 'Investment')}</row><row r='2'>{inline('C2', 'Low')}</row></sheetData>"
            '<mergeCells count="2"><mergeCell ref="A1:C1"/><mergeCell ref="D2:C2"/></mergeCells>'
        ),
    }
)


def merge(coordinate: str, merged: bool, sheet: str = "RNSheet2") -> dict:
    props = {"merge": {"method": "eq", "ref": merged}}
    return {"type": "check_cell", "sheet_idx": sheet, "coordinate": coordinate, "props": props}


def test_merge_is_true_inside_a_merged_range_but_not_on_its_top_left_cell():
    rules = [merge("A1", False), merge("B1", True), merge("C1", True), merge("D1", False)]
    rules += [merge("C2", False), merge("D2", True), merge("B2", False)]  # "D2:C2" is the range C2:D2
    assert score("compare_table", b64(MERGED), rules=rules) == 1.0
    for wrong in (merge("A1", True), merge("D1", True), merge("C2", True), merge("B1", False)):
        assert score("compare_table", b64(MERGED), rules=[wrong]) == 0.0, wrong


def test_merge_on_an_unmerged_sheet_or_a_missing_one():
    assert score("compare_table", b64(MERGED), rules=[merge("B1", False, sheet=0)]) == 1.0  # Sheet1 merges nothing
    assert score("compare_table", b64(MERGED), rules=[merge("B1", True, sheet=0)]) == 0.0
    assert score("compare_table", b64(MERGED), rules=[merge("B1", True, sheet="RNSheet3")]) == 0.0
    value = {"value": {"method": "eq", "ref": "Investment"}, "merge": {"method": "eq", "ref": False}}
    both = {"type": "check_cell", "sheet_idx": "RNSheet2", "coordinate": "A1", "props": value}
    assert score("compare_table", b64(MERGED), rules=[both]) == 1.0


def test_merge_is_no_longer_refused_at_import():
    assert table_limits({"rules": [merge("B1", True)]}, None) == []


# -- compare_conference_city_in_order ----------------------------------------------------------

CITIES = ["Scottsdale", "Atlanta", "Lake Tahoe", "Banff", "Beijing", "Montreal", "San Diego"]
CITIES += ["Lille", "Montreal", "San Juan", "New York", "Barcelona", "Toulon", "Sydney"]
CITIES += ["Long Beach", "Vancouver", "Stockholm", "Montreal", "New Orleans", "Los Angeles", "Vancouver"]
EXPECTED = [["Montreal", "Montréal"] if c == "Montreal" else c for c in CITIES]
EXPECTED[14] = EXPECTED[19] = ["Los Angeles", "Long Beach", "LA"]


def conference(column: list[str], *, active: int | None = None, formula_at: int | None = None) -> bytes:
    """Conference names in A, cities in C from row 2, on the second sheet; ``active`` the saved active tab."""
    rows = [f"<row r='1'>{inline('A1', 'Conference')}{inline('C1', 'City')}</row>"]
    for i, city in enumerate(column):
        r = i + 2
        cell = (
            f'<c r="C{r}" t="str"><f>VLOOKUP(A{r},Notes!A1:B30,2,0)</f><v>{city}</v></c>'
            if i == formula_at
            else inline(f"C{r}", city)
        )
        rows.append(f"<row r='{r}'>{inline(f'A{r}', 'ICML')}{cell}</row>")
    sheets = {"Notes": "<sheetData/>", "Cities": f"<sheetData>{''.join(rows)}</sheetData>"}
    views = f'<bookViews><workbookView activeTab="{active}"/></bookViews>' if active is not None else ""
    book = f'<workbook xmlns="{S}" xmlns:r="{R}">{views}<sheets><sheet name="Notes" sheetId="1" r:id="rId1"/>'
    book += '<sheet name="Cities" sheetId="2" r:id="rId2"/></sheets></workbook>'
    return xlsx(sheets, extra={"xl/workbook.xml": book})


def cities(data: bytes, expected: list | None = None) -> float:
    return score("compare_conference_city_in_order", b64(data), {"value": {"expected": expected or EXPECTED}})


def test_cities_in_order_on_the_active_sheet_pass_with_accents_case_and_extra_words():
    column = list(CITIES)
    column[5], column[0], column[10] = "Montréal, QC", "SCOTTSDALE (AZ)", "New York City"
    assert cities(conference(column, active=1)) == 1.0


def test_cities_out_of_order_missing_or_on_another_sheet_score_zero():
    swapped = list(CITIES)
    swapped[1], swapped[2] = swapped[2], swapped[1]
    assert cities(conference(swapped, active=1)) == 0.0
    assert cities(conference(CITIES[:-1], active=1)) == 0.0  # C22 empty
    assert cities(conference(CITIES)) == 0.0  # no book view: the active sheet is the first, Notes
    assert cities(conference(CITIES, active=1), EXPECTED[:-1]) == 0.0  # 20 expected for 21 cells: upstream's 0
    assert cities(conference(CITIES, active=1, formula_at=3)) == 0.0  # openpyxl reads the formula, not "Banff"
    assert cities(b"not a workbook") == 0.0


def test_an_expected_name_is_found_as_a_substring_after_normalising():
    expected = [*EXPECTED[:14], ["LA"], *EXPECTED[15:]]
    column = list(CITIES)
    column[14] = "Atlanta"  # upstream's quirk: "la" is in "atlanta"
    assert cities(conference(column, active=1), expected) == 1.0
    column[14] = "Los_Angeles!"
    assert cities(conference(column, active=1)) == 1.0


# -- fuzzy_place_math ------------------------------------------------------------------------

PLACES = ["深圳市福田区正义街1号", "福田区振兴路108号", "福田区滨河大道2033号"]


def places(body: str, expected: list[str] | None = None) -> float:
    return score("fuzzy_place_math", b64(docx(body)), {"value": {"expected": expected or PLACES}})


def test_three_addresses_score_the_mean_of_their_best_ratios():
    assert places("".join(para(p) for p in PLACES)) == 1.0
    near = "福田区振兴路18号"  # one digit dropped: 2 * 9 / (9 + 10)
    assert abs(places(para(PLACES[0]) + para(near) + para(PLACES[2])) - (2 + 18 / 19) / 3) < 1e-12
    assert places(para(f"{PLACES[0]} {PLACES[1]}\t{PLACES[2]}")) == 1.0  # words, not paragraphs


def test_anything_but_three_words_scores_zero():
    assert places("".join(para(p) for p in PLACES + PLACES[:2])) == 0.0  # five, as the instruction asks
    assert places(para(PLACES[0]) + para(PLACES[1])) == 0.0
    assert places(para(PLACES[0]) + para(PLACES[1]) + table([[PLACES[2]]])) == 0.0  # a table's text is not read
    assert score("fuzzy_place_math", {"file": "/nonexistent/a.docx"}, {"value": {"expected": PLACES}}) == 0.0


def test_words_split_where_python_docx_splits_them():
    def runs(*inner: str) -> str:
        return "<w:p>" + "".join(inner) + "</w:p>"

    t = lambda text: f"<w:r><w:t>{text}</w:t></w:r>"  # noqa: E731
    page = runs(t(PLACES[0]), '<w:r><w:br w:type="page"/></w:r>', t(PLACES[1]))  # a page break adds no space
    assert places(page + para(PLACES[2]) + para("x")) < 1.0 and places(page + para(PLACES[2])) == 0.0
    line = runs(t(PLACES[0]), "<w:r><w:br/></w:r>", t(PLACES[1]))
    assert places(line + para(PLACES[2])) == 1.0
    link = runs(f'<w:hyperlink xmlns:r="{R}" r:id="x">{t(PLACES[1])}</w:hyperlink>')
    assert places(para(PLACES[0]) + link + para(PLACES[2])) == 1.0
    tracked = runs(f'<w:ins w:id="1" w:author="a">{t(PLACES[1])}</w:ins>')  # python-docx does not read w:ins
    assert places(para(PLACES[0]) + tracked + para(PLACES[2])) == 0.0


def test_indel_ratio_is_rapidfuzzs_ratio():
    assert indel_ratio("", "") == 1.0 and indel_ratio("a", "") == 0.0
    assert indel_ratio("abcd", "acbd") == 0.75  # LCS 3 of 4 + 4
    assert indel_ratio("kitten", "sitting") == 2 * 4 / 13


# -- is_expected_installed_extensions ---------------------------------------------------------

WANTED = {"expected": ["Zoom for Google Chrome", "Momentum", "Google Translate"]}


def extensions(tmp_path: Path, settings: object) -> float:
    default = tmp_path / "Default"
    default.mkdir(exist_ok=True)
    (default / "Preferences").write_text(json.dumps({"extensions": {"settings": settings}}))
    ref = {"chrome": "find_installed_extension_name", "profile": str(tmp_path)}
    return score("is_expected_installed_extensions", ref, {"value": WANTED})


def installed(*names: str) -> dict:
    return {f"id{i}": {"manifest": {"name": n}, "path": f"/ext/{i}"} for i, n in enumerate(names)}


def test_every_expected_extension_installed_passes_and_aliases_count_as_one(tmp_path):
    assert extensions(tmp_path, installed("Chromium PDF Viewer", "Momentum", "Google Translate", "Zoom for Google Chrome")) == 1.0  # fmt: skip
    assert extensions(tmp_path, installed("Zoom Chrome Extension", "Momentum", "Google Translate")) == 1.0


def test_a_missing_extension_or_an_unreadable_profile_scores_zero(tmp_path):
    assert extensions(tmp_path, installed("Momentum", "Google Translate")) == 0.0
    assert extensions(tmp_path, {}) == 0.0
    no_manifest = {**installed("Zoom for Google Chrome", "Momentum", "Google Translate"), "x": {"state": 0}}
    assert extensions(tmp_path, no_manifest) == 0.0  # upstream's getter gives "Google" then
    ref = {"chrome": "find_installed_extension_name", "profile": str(tmp_path / "none")}
    assert score("is_expected_installed_extensions", ref, {"value": WANTED}) == 0.0
    assert score("is_expected_installed_extensions", {"value": "Google"}, {"value": {"expected": ["G", "o"]}}) == 1.0


# -- the importer: tasks (written here) that use the four now import and score from the verifier's root ------

CACHE = "https://files.example.invalid/cache"
OPEN = {"type": "open", "parameters": {"path": "/home/user/Desktop/in.file"}}
LAUNCH = {"type": "launch", "parameters": {"command": ["google-chrome", "--remote-debugging-port=1337"]}}


def osworld(uuid: str, domain: str, evaluator: dict, config: list | None = None) -> dict:
    base = {"id": uuid, "snapshot": domain, "instruction": "Do it.", "source": "test"}
    fetch = {"type": "download", "parameters": {"files": [{"url": f"{CACHE}/{uuid}.in", "path": "/home/user/Desktop/in.file"}]}}  # fmt: skip
    return {**base, "config": [fetch, OPEN, *(config or [])], "evaluator": evaluator}


def vm(path: str) -> dict:
    return {"type": "vm_file", "path": path, "dest": Path(path).name}


def rules(value: dict) -> dict:
    return {"type": "rule", "rules": value}


TASKS = {
    "libreoffice_calc/m1.json": osworld(
        "m1",
        "libreoffice_calc",
        {
            "func": "compare_table",
            "result": vm("/home/user/Desktop/b.xlsx"),
            "expected": {"type": "cloud_file", "path": f"{CACHE}/m1-gold.xlsx", "dest": "g.xlsx"},
            "options": {"rules": [merge("B1", True), merge("D1", False)]},
        },
    ),
    "multi_apps/m2.json": osworld(
        "m2",
        "multi_apps",
        {
            "func": "compare_conference_city_in_order",
            "result": vm("/home/user/Desktop/c.xlsx"),
            "expected": rules({"expected": EXPECTED}),
        },
    ),
    "multi_apps/m3.json": osworld(
        "m3",
        "multi_apps",
        {
            "func": "fuzzy_place_math",
            "result": vm("/home/user/Desktop/p.docx"),
            "expected": rules({"expected": PLACES}),
        },
    ),
    "multi_apps/m4.json": osworld(
        "m4",
        "multi_apps",
        {
            "func": "is_expected_installed_extensions",
            "result": {"type": "find_installed_extension_name"},
            "expected": rules(WANTED),
        },
        [LAUNCH],
    ),
}
#: The files each task is graded on, written beneath the verifier's root: passing, then failing.
GRADED = {
    "m1": ("Desktop/b.xlsx", MERGED, xlsx({"Sheet1": "<sheetData/>", "Sheet2": "<sheetData/>"})),
    "m2": ("Desktop/c.xlsx", conference(CITIES, active=1), conference(CITIES)),
    "m3": ("Desktop/p.docx", docx("".join(map(para, PLACES))), docx("".join(map(para, PLACES * 2)))),
    "m4": (
        ".config/chromium/Default/Preferences",
        json.dumps(
            {"extensions": {"settings": installed("Zoom Chrome Extension", "Momentum", "Google Translate")}}
        ).encode(),
        json.dumps({"extensions": {"settings": installed("Momentum")}}).encode(),
    ),
}


def test_tasks_using_the_four_import_and_score_one_and_zero_from_the_root(tmp_path, monkeypatch):
    src, assets, out = tmp_path / "evaluation_examples", tmp_path / "assets", tmp_path / "tasks"
    for name, data in TASKS.items():
        (src / "examples" / name).parent.mkdir(parents=True, exist_ok=True)
        (src / "examples" / name).write_text(json.dumps(data))
    host = assets / "files.example.invalid/cache"
    host.mkdir(parents=True)
    for uuid in GRADED:
        (host / f"{uuid}.in").write_bytes(b"input")
    (host / "m1-gold.xlsx").write_bytes(MERGED)
    result = CliRunner().invoke(app, ["gui", "import-osworld", str(src), "--out", str(out), "--assets", str(assets), "--check"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "4 tasks: 4 imported, 0 assets, 0 network, 0 unsupported" in result.output
    root = tmp_path / "root"
    monkeypatch.setenv("AGENTENVS_STATE_ROOT", str(root))
    for uuid, (path, good, bad) in GRADED.items():
        domain = "libreoffice_calc" if uuid == "m1" else "multi_apps"
        task = out / f"osworld-{domain}-{uuid}"
        args = OSWorldTask(task / "task.json", task / "assets").check_args()
        assert needs_profile(args) == (uuid == "m4")
        for data, want in ((good, 1.0), (bad, 0.0)):
            (root / "home/user" / path).parent.mkdir(parents=True, exist_ok=True)
            (root / "home/user" / path).write_bytes(data)
            assert run_check("osworld", args)["score"] == want, (uuid, want)
