"""``compare_docx_images`` and the PNG decoder under it, on documents and PNGs written here (not upstream's).

Upstream opens each image with Pillow and compares ``tobytes()``; ``evaluators.png`` gives the
same bytes (checked against Pillow 13 by hand: every colour type and depth Pillow reads, filters
as libpng and Pillow write them), so different files of the same pixels still match.
"""

from __future__ import annotations

import base64
import io
import struct
import zlib

import pytest

from evaluators import run_check
from evaluators.png import PngError, decode
from tests.gui.imported import desktop, imported_check
from tests.gui.ooxml import PR, W, zipped
from tests.gui.pngfile import chunk, encode, random_png

IMAGE = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/image"


ROWS = [bytes((x * 7 + y * 31 + c * 50) % 256 for x in range(5) for c in range(3)) for y in range(4)]


def test_every_filter_decodes_to_the_same_pixels():
    for filters in ((0,), (1,), (2,), (3,), (4,), (4, 3, 2, 1)):
        assert decode(encode(ROWS, 5, filters=filters)) == ("RGB", 5, 4, b"".join(ROWS)), filters


def test_modes_and_depths_are_pillows():
    assert decode(encode([b"\xff\xff\x00\x10" * 3], 3, ctype=6))[0] == "RGBA"
    wide = [bytes([1, 2, 3, 4, 5, 6])]  # one RGB pixel at 16 bits: Pillow keeps the high bytes
    assert decode(encode(wide, 1, depth=16)) == ("RGB", 1, 1, bytes([1, 3, 5]))
    grey = [bytes([0x12, 0x34])]  # a 16-bit grey: I;16, little-endian
    assert decode(encode(grey, 1, ctype=0, depth=16)) == ("I;16", 1, 1, bytes([0x34, 0x12]))
    two_bit = [bytes([0b00011011])]  # four pixels 0..3 scaled to 8 bits
    assert decode(encode(two_bit, 4, ctype=0, depth=2))[3] == bytes([0, 85, 170, 255])
    assert decode(encode(two_bit, 4, ctype=3, depth=2))[3] == bytes([0, 1, 2, 3])  # palette indices
    one_bit = [bytes([0b10100111])]  # mode 1 keeps the packing, bits past the 5 pixels are 0
    assert decode(encode(one_bit, 5, ctype=0, depth=1)) == ("1", 5, 1, bytes([0b10100000]))


FORMATS = [(0, 1), (0, 2), (0, 4), (0, 8), (0, 16), (2, 8), (2, 16), (3, 1), (3, 2), (3, 4), (3, 8), (4, 8), (4, 16), (6, 8), (6, 16)]  # fmt: skip


@pytest.mark.parametrize(("ctype", "depth"), FORMATS)
def test_every_format_plain_and_interlaced_decodes_as_pillow_reads_it(ctype, depth):
    from PIL import Image

    for width, height, interlace in ((13, 7, False), (1, 1, False), (11, 9, True), (3, 2, True)):
        data = random_png(width, height, ctype, depth, interlace=interlace, seed=width * depth + ctype)
        theirs = Image.open(io.BytesIO(data))
        assert decode(data) == (theirs.mode, *theirs.size, theirs.tobytes()), (width, height, interlace)


def test_what_it_does_not_read_is_an_error():
    for bad in (b"GIF89a", encode(ROWS, 5)[:-30], encode(ROWS, 5, depth=4)):
        with pytest.raises(PngError):
            decode(bad)


def test_an_image_too_large_to_decode_in_time_is_refused_before_it_is_inflated():
    """An agent's huge (but tiny, flat) PNG must not run the check past its deadline: that would be infra."""
    header = struct.pack(">IIBBBBB", 1921, 1200, 8, 6, 0, 0, 0)
    flat = zlib.compress(bytes(1921 * 4 + 1) * 1200)  # 9 MB of pixels in a few kB
    huge = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", flat) + chunk(b"IEND", b"")
    with pytest.raises(PngError, match="too many pixels"):
        decode(huge)
    assert same(document(huge), document(encode(ROWS, 5))) == 0.0  # a score, not an error


def document(*images: bytes, external: bool = False) -> bytes:
    """A DOCX whose document part links the images (``media/imageN.png``) in that order."""
    links = "".join(f'<Relationship Id="rId{i + 9}" Type="{IMAGE}" Target="media/image{i}.png"/>' for i in range(len(images)))  # fmt: skip
    style = '<Relationship Id="rId1" Type="http://x/styles" Target="styles.xml"/>'
    if external:
        links += f'<Relationship Id="rId99" Type="{IMAGE}" Target="https://x.invalid/a.png" TargetMode="External"/>'
    parts = {
        "word/document.xml": f'<w:document xmlns:w="{W}"><w:body><w:p/></w:body></w:document>',
        "word/_rels/document.xml.rels": f'<Relationships xmlns="{PR}">{style}{links}</Relationships>',
    }
    return zipped({**parts, **{f"word/media/image{i}.png": image for i, image in enumerate(images)}})


def same(result: bytes, expected: bytes) -> float:
    refs = [{"data_b64": base64.b64encode(d).decode()} for d in (result, expected)]
    return run_check("osworld", {"metrics": [{"func": "compare_docx_images", "result": refs[0], "expected": refs[1]}]})["score"]  # fmt: skip


def test_the_same_pixels_in_the_same_order_pass_even_in_another_file():
    logo, shot = encode(ROWS, 5), encode(ROWS[:2], 5, filters=(1,))
    assert same(document(logo, shot), document(logo, shot)) == 1.0
    assert same(document(encode(ROWS, 5, filters=(4, 2)), shot), document(logo, shot)) == 1.0  # re-encoded
    assert same(document(), document()) == 1.0  # upstream: no images on either side is a match
    assert same(document(b"JFIF-a"), document(b"JFIF-a")) == 1.0  # the same file of any format


def test_other_pixels_order_count_or_mode_score_zero():
    logo, shot = encode(ROWS, 5), encode(ROWS[:2], 5)
    changed = [ROWS[0][:-1] + b"\x00", *ROWS[1:]]
    assert same(document(encode(changed, 5), shot), document(logo, shot)) == 0.0
    assert same(document(shot, logo), document(logo, shot)) == 0.0
    assert same(document(logo), document(logo, shot)) == 0.0
    rgba = [bytes(v for i in range(0, len(r), 3) for v in (*r[i : i + 3], 255)) for r in ROWS]
    assert same(document(encode(rgba, 5, ctype=6)), document(logo)) == 0.0  # tobytes differ, as upstream's
    assert same(document(b"JFIF-a"), document(b"JFIF-b")) == 0.0  # not PNG: only Pillow could tell
    assert same(document(logo, external=True), document(logo)) == 0.0
    assert same(b"not a document", document(logo)) == 0.0


def test_a_task_graded_by_it_imports_and_scores_from_the_root(tmp_path, monkeypatch):
    gold_url = "https://files.example.invalid/w/gold.docx"
    evaluator = {"func": "compare_docx_images", "result": {"type": "vm_file", "path": "/home/user/Desktop/a.docx", "dest": "a.docx"}, "expected": {"type": "cloud_file", "path": gold_url, "dest": "g.docx"}}  # fmt: skip
    args = imported_check(tmp_path, "libreoffice_writer", evaluator, {"files.example.invalid/w/gold.docx": document(encode(ROWS, 5))})  # fmt: skip
    folder = desktop(tmp_path, monkeypatch)
    for image, want in ((encode(ROWS, 5, filters=(3,)), 1.0), (encode(ROWS[:3], 5), 0.0)):
        (folder / "a.docx").write_bytes(document(image))
        assert run_check("osworld", args)["score"] == want
