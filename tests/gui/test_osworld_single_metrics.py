"""OSWorld's single-task Writer, Impress and settings metrics on files built here: a pass and a fail each."""

from __future__ import annotations

import base64
import io
import tarfile
import zipfile

from evaluators.osworld_writer import _lab, delta_e2000
from tests.gui.ooxml import P, R, W, docx, para, pdf, pptx, rels, run, shape, zipped
from tests.gui.test_osworld_office_metrics import score


def wrun(text: str, props: str = "") -> str:
    return f'<w:r><w:rPr>{props}</w:rPr><w:t xml:space="preserve">{text}</w:t></w:r>'


def wpara(*runs: str, ppr: str = "") -> str:
    return f"<w:p><w:pPr>{ppr}</w:pPr>{''.join(runs)}</w:p>"


def test_fonts_centering_and_page_breaks():
    liberation = docx(wpara(wrun("a", '<w:rFonts w:ascii="Liberation Serif"/>')))
    assert score("compare_font_names", liberation, {"value": {"font_name": "Liberation Serif"}}) == 1.0
    assert score("compare_font_names", liberation, {"value": {"font_name": "DejaVu Sans"}}) == 0.0
    assert score("is_first_line_centered", docx(wpara(wrun("T"), ppr='<w:jc w:val="center"/>') + para("x"))) == 1.0
    assert score("is_first_line_centered", docx(para("T"))) == 0.0
    broken = docx(wpara(wrun("a"), '<w:r><w:br w:type="page"/></w:r>', wrun("b")))
    assert score("contains_page_break", broken, {"value": {}}) == 1.0
    assert score("contains_page_break", broken, {"value": {"page_break_count": 2}}) == 0.0
    assert score("contains_page_break", docx(para("a")), {"value": {}}) == 0.0


def test_run_formats_after_the_same_text():
    sub = wrun("2", '<w:vertAlign w:val="subscript"/>')
    assert score("compare_subscript_contains", docx(wpara(wrun("H"), sub)), docx(wpara(wrun("H"), sub))) == 1.0
    assert score("compare_subscript_contains", docx(wpara(wrun("H"), wrun("2"))), docx(wpara(wrun("H"), sub))) == 0.0
    italic14 = docx(wpara(wrun("a", '<w:i/><w:sz w:val="28"/>'), wrun(" b")))
    italic12 = docx(wpara(wrun("a", '<w:i/><w:sz w:val="24"/>'), wrun(" b")))
    assert score("check_italic_font_size_14", italic14, italic14) == 1.0
    assert score("check_italic_font_size_14", italic12, italic14) == 0.0
    struck = docx(para("keep") + wpara(wrun("gone", "<w:strike/>")))
    assert score("evaluate_strike_through_last_paragraph", struck, struck) == 1.0
    assert score("evaluate_strike_through_last_paragraph", docx(para("keep") + para("gone")), struck) == 0.0
    gaps = docx(para("one") + para("") + para("two"))
    assert score("compare_docx_files_and_ignore_new_lines", gaps, docx(para("one") + para("two")), ignore_blanks=False) == 1.0  # fmt: skip
    assert score("compare_docx_files_and_ignore_new_lines", gaps, docx(para("one two three"))) == 0.0


def test_colored_words_in_tables_by_ciede2000():
    assert delta_e2000(_lab((255, 0, 0)), _lab((255, 0, 0))) == 0.0
    assert round(delta_e2000((50, 2.6772, -79.7751), (50, 0, -82.7485)), 4) == 2.0425  # Sharma et al.'s test data
    assert round(delta_e2000((50, 2.5, 0), (73, 25, -18)), 4) == 27.1492
    assert 3.0 < delta_e2000(_lab((240, 0, 0)), _lab((255, 0, 0))) < 3.5  # a near red passes the 3.5 threshold

    def cells(first: str, second: str) -> bytes:
        def cell(word: str, color: str) -> str:
            return "<w:tc>" + wpara(wrun(word, '<w:color w:val="' + color + '"/>')) + "</w:tc>"

        row = cell("apple", first) + cell("pear", second)
        return docx(f"<w:tbl><w:tblGrid><w:gridCol/><w:gridCol/></w:tblGrid><w:tr>{row}</w:tr></w:tbl>")

    gold = cells("FF0000", "0000FF")
    assert score("evaluate_colored_words_in_tables", cells("F00000", "0000FF"), gold) == 1.0
    assert score("evaluate_colored_words_in_tables", cells("0000FF", "0000FF"), gold) == 0.0


def footer_doc(footer_text: str | None) -> bytes:
    ref = '<w:footerReference w:type="default" r:id="rIdF"/>' if footer_text is not None else ""
    body = f'<w:document xmlns:w="{W}" xmlns:r="{R}"><w:body>{para("Body")}<w:sectPr>{ref}</w:sectPr></w:body></w:document>'  # fmt: skip
    parts = {"word/document.xml": body}
    if footer_text is not None:
        parts["word/_rels/document.xml.rels"] = rels({"rIdF": "footer1.xml"})
        parts["word/footer1.xml"] = f'<w:ftr xmlns:w="{W}">{para(footer_text)}</w:ftr>'
    return zipped(parts)


def test_page_numbers_in_footers_and_tab_stops():
    assert score("has_page_numbers_in_footers", footer_doc("Page 1")) == 1.0
    assert score("has_page_numbers_in_footers", footer_doc("Page")) == 0.0
    assert score("has_page_numbers_in_footers", footer_doc(None)) == 0.0

    def tabbed(pos: int, kind: str = "right") -> bytes:
        tabs = f'<w:tabs><w:tab w:val="{kind}" w:pos="{pos}"/></w:tabs>'
        section = '<w:sectPr><w:pgSz w:w="12240"/><w:pgMar w:left="1440" w:right="1440"/></w:sectPr>'
        return docx(wpara(wrun("Name\tDate"), ppr=tabs) + section)

    assert score("check_tabstops", tabbed(9360), tabbed(9360)) == 1.0
    assert 0.9 < score("check_tabstops", tabbed(8460), tabbed(9360)) < 1.0  # 900 twips off a 9360-twip line
    assert score("check_tabstops", tabbed(9360, "center"), tabbed(9360)) == 0.0
    assert score("check_tabstops", tabbed(9360), tabbed(9360), word_number_split_by_tabstop=1) == 1.0
    assert score("check_tabstops", tabbed(9360), tabbed(9360), word_number_split_by_tabstop=2) == 0.0


def slide_deck(transition: str = "", size: tuple[int, int] = (9144000, 6858000), master_color: str = "") -> bytes:
    parts = {
        "ppt/presentation.xml": f'<p:presentation xmlns:p="{P}" xmlns:r="{R}"><p:sldIdLst><p:sldId id="256" r:id="rId1"/></p:sldIdLst><p:sldSz cx="{size[0]}" cy="{size[1]}"/></p:presentation>',  # fmt: skip
        "ppt/_rels/presentation.xml.rels": rels({"rId1": "slides/slide1.xml"}),
        "ppt/slides/slide1.xml": f'<p:sld xmlns:p="{P}"><p:cSld><p:spTree/></p:cSld>{transition}</p:sld>',
    }
    if master_color:
        fill = f'<a:rPr xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><a:solidFill><a:srgbClr val="{master_color}"/></a:solidFill></a:rPr>'  # fmt: skip
        parts["ppt/slideMasters/slideMaster1.xml"] = f'<p:sldMaster xmlns:p="{P}">{fill}</p:sldMaster>'
    return zipped(parts)


def test_impress_transition_orientation_and_number_colour():
    dissolve = slide_deck("<p:transition><p:dissolve/></p:transition>")
    assert score("check_transition", dissolve, {"value": {"slide_idx": 0, "transition_type": "dissolve"}}) == 1.0
    assert score("check_transition", dissolve, {"value": {"slide_idx": 0, "transition_type": "fade"}}) == 0.0
    assert score("check_transition", slide_deck(), {"value": {"slide_idx": 0, "transition_type": "dissolve"}}) == 0.0
    assert score("check_slide_orientation_Portrait", slide_deck(size=(6858000, 9144000))) == 1.0
    assert score("check_slide_orientation_Portrait", slide_deck()) == 0.0
    assert score("check_page_number_colors", slide_deck(master_color="E01010"), {"value": {"color": "red"}}) == 1.0
    assert score("check_page_number_colors", slide_deck(master_color="1010E0"), {"value": {"color": "red"}}) == 0.0


def test_background_fill_distance():
    def deck(color: str) -> bytes:
        return pptx([[shape([run("x")])]], background=color)

    assert score("evaluate_presentation_fill_to_rgb_distance", deck("0000FF"), {"value": {"rgb": [0, 0, 255]}}) == 1.0
    assert score("evaluate_presentation_fill_to_rgb_distance", deck("FFFFFF"), {"value": {"rgb": [0, 0, 255]}}) < 0.4
    same_as_before = {"value": {"rgb": [0, 0, 255], "original_rgb": [0, 0, 255]}}
    assert score("evaluate_presentation_fill_to_rgb_distance", deck("0000FF"), same_as_before) == 0.0


XCU = (
    '<oor:items xmlns:oor="http://openoffice.org/2001/registry">'
    '<item oor:path="/org.openoffice.Office.Impress/Misc/Start"><prop oor:name="EnablePresenterScreen" oor:op="fuse"><value>{presenter}</value></prop></item>'  # fmt: skip
    '<item oor:path="/org.openoffice.Office.Common/Save/Document"><prop oor:name="AutoSaveTimeIntervall" oor:op="fuse"><value>3</value></prop></item>'  # fmt: skip
    '<item oor:path="/org.openoffice.Office.Writer/DefaultFont"><prop oor:name="Standard" oor:op="fuse"><value>Liberation Sans</value></prop></item>'  # fmt: skip
    "</oor:items>"
)


def test_libreoffice_settings():
    off, on = {"value": XCU.format(presenter="false")}, {"value": XCU.format(presenter="true")}
    assert score("check_presenter_console_disable", off) == 1.0
    assert score("check_presenter_console_disable", on) == 0.0
    assert score("check_auto_saving_time", off, {"value": {"minutes": 3}}) == 1.0
    assert score("check_auto_saving_time", off, {"value": {"minutes": 10}}) == 0.0
    assert score("find_default_font", off, {"value": {"font_name": "Liberation Sans"}}) == 1.0
    assert score("find_default_font", off, {"value": {"font_name": "DejaVu Sans"}}) == 0.0
    assert score("find_default_font", {"value": "not xml"}, {"value": {"font_name": "DejaVu Sans"}}) == 0.0


def archive(files: dict[str, bytes], kind: str = "zip") -> bytes:
    buf = io.BytesIO()
    if kind == "zip":
        with zipfile.ZipFile(buf, "w") as z:
            for name, data in files.items():
                z.writestr(name, data)
    else:
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            for name, data in files.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_archives_member_by_member():
    doc = pdf([["Chapter one"]])
    gold = archive({"a.pdf": doc, "b.txt": b"x\n"})
    assert score("compare_zip_files", archive({"b.txt": b"x\n", "a.pdf": doc}), gold) == 1.0
    assert score("compare_zip_files", archive({"a.pdf": doc, "b.txt": b"y\n"}), gold) == 0.0
    assert score("compare_zip_files", archive({"a.pdf": pdf([["Chapter two and more"]]), "b.txt": b"x\n"}), gold) == 0.0
    tgz = archive({"./a.pdf": doc, "./c.pdf": doc}, kind="tgz")
    assert score("compare_archive", tgz, archive({"a.pdf": doc, "c.pdf": doc}), file_type="pdf") == 1.0
    assert score("compare_archive", tgz, archive({"a.pdf": doc, "d.pdf": doc}), file_type="pdf") == 0.0
    nested = archive({"book/a.txt": b"1\n", "book/b.txt": b"2\n"})
    assert score("compare_archive", nested, archive({"book/a.txt": b"1\n", "book/b.txt": b"3\n"}), file_path="book") == 0.5  # fmt: skip
    assert score("compare_archive", b"not an archive", nested) == 0.0


def test_lines_listings_and_records():
    log = {"value": "12:00:01 cpu\nno time\n23:59:59 mem\n"}
    assert score("check_line_number", log, {"value": {"expected": 2}}) == 1.0
    assert score("check_line_number", log, {"value": {"expected": 3}}) == 0.0
    listing = {"value": ["a.jpg", "b.jpg"]}
    assert score("check_moved_jpgs", listing, {"value": {"expected": ["b.jpg", "a.jpg"]}}) == 1.0
    assert score("check_moved_jpgs", listing, {"value": {"expected": ["a.jpg"]}}) == 0.0
    initial = docx(para("1,T1,A,B") + para("2,T1,A,B") + para("3,T2,C,D"))
    gold = docx(para("1,T1,A,B") + para("3,T2,C,D"))
    both = {"list": [{"data_b64": base64.b64encode(gold).decode()}, {"data_b64": base64.b64encode(initial).decode()}]}
    assert score("compare_unique_train_records", docx(para("2,T1,A,B") + para("3,T2,C,D")), both) == 1.0
    assert score("compare_unique_train_records", initial, both) == 0.0  # T1 twice
    assert (
        score("compare_unique_train_records", docx(para("9,T1,A,B") + para("3,T2,C,D")), both) == 0.0
    )  # not in the original


def test_compare_references_rescales_similarity():
    gold = docx(para("Intro") + para("References") + para("Smith, J. (2020). A title.") + para("Doe, A. (2019). B."))
    assert score("compare_references", gold, gold) == 1.0
    typo = docx(para("Intro") + para("References") + para("Smith, J. (2020). A titel.") + para("Doe, A. (2019). B."))
    assert 0.8 < score("compare_references", typo, gold) < 1.0
    assert score("compare_references", docx(para("Intro")), gold) == 0.0
    assert score("compare_references", docx(para("Intro")), docx(para("Other"))) == 1.0  # neither has references


def odt(body: str, styles: str = "") -> bytes:
    ns = (
        'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
        'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" '
        'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
        'xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0"'
    )
    content = f"<office:document-content {ns}><office:automatic-styles>{styles}</office:automatic-styles><office:body><office:text>{body}</office:text></office:body></office:document-content>"  # fmt: skip
    return zipped({"mimetype": "application/vnd.oasis.opendocument.text", "content.xml": content})


def test_odt_text_and_highlighted_words():
    yellow = '<style:style style:name="T1" style:family="text"><style:text-properties fo:background-color="#ffff00"/></style:style>'  # fmt: skip
    marked = odt('<text:p>The <text:span text:style-name="T1">key</text:span> word</text:p>', yellow)
    plain = odt('<text:p>The <text:span text:style-name="T2">key</text:span> word</text:p>')
    assert score("compare_docx_files", marked, plain) == 1.0  # span text counts
    assert score("compare_docx_files", marked, docx(para("The key word"))) == 0.0  # ODT against DOCX: upstream's 0
    assert score("check_highlighted_words", plain, marked) == 1.0
    assert score("check_highlighted_words", marked, plain) == 0.0
    assert score("check_highlighted_words", odt("<text:p>Other</text:p>"), plain) == 0.0
