"""``compare_images`` on PNGs written here (not upstream's): Pillow's grey and Lanczos, scikit-image's SSIM.

The two reference scores below were measured once, by hand, with upstream's code path (Pillow 13,
scikit-image 0.26) on these same images; the state checker has neither.
"""

from __future__ import annotations

import base64
import json

from agentenvs.envs.gui.assets import AssetIndex
from agentenvs.envs.gui.importer import classify
from agentenvs.envs.gui.osworld_task import OSWorldTask
from evaluators import run_check
from evaluators.osworld_images import compare_images
from tests.gui.imported import desktop, imported_check
from tests.gui.ooxml import PR, P, R, rels, zipped
from tests.gui.ooxml import A as A_NS
from tests.gui.pngfile import encode

C1 = (0.01 * 255) ** 2


def rgb(width: int, height: int, k: int) -> list[bytes]:
    return [bytes((x * 37 + y * 11 * k + c * 60 + (x * y) % 7) % 256 for x in range(width) for c in range(3)) for y in range(height)]  # fmt: skip


def flat(value: int, width: int, height: int) -> bytes:
    return encode([bytes([value]) * width for _ in range(height)], width, ctype=0)


A = encode(rgb(12, 9, 1), 12, filters=(4, 1))
B = encode(rgb(12, 9, 2), 12)
WIDE = encode(rgb(15, 8, 2), 15, filters=(2,))  # min((12, 9), (15, 8)) is (12, 9): WIDE is stretched to 9 rows


def test_the_same_pixels_score_one_whatever_the_encoding():
    assert compare_images(A, A) == 1.0
    assert compare_images(A, encode(rgb(12, 9, 1), 12, filters=(3,))) == 1.0
    grey_rows = [bytes(v for v in row[0::3] for _ in range(3)) for row in rgb(12, 9, 1)]  # r = g = b
    assert compare_images(encode(grey_rows, 12), encode([row[0::3] for row in rgb(12, 9, 1)], 12, ctype=0)) == 1.0
    assert compare_images(flat(100, 14, 7), flat(100, 7, 7)) == 1.0  # a flat image stays flat when resized


def test_scores_are_upstreams_ssim():
    assert abs(compare_images(A, B) - 0.3356582078619331) < 1e-12
    assert abs(compare_images(A, WIDE) - -0.29141251215456654) < 1e-12  # resized with Lanczos, as Pillow does
    assert compare_images(WIDE, A) == compare_images(A, WIDE)
    # one 7x7 window on two flat images: SSIM's luminance term alone, (2cd + C1) / (c^2 + d^2 + C1)
    assert abs(compare_images(flat(100, 7, 7), flat(200, 7, 7)) - (40000 + C1) / (50000 + C1)) < 1e-12


def test_reference_base_result_rescales_and_cuts():
    score = compare_images(flat(100, 7, 7), flat(200, 7, 7))
    assert abs(compare_images(flat(100, 7, 7), flat(200, 7, 7), reference_base_result=0.5) - (score - 0.5) / 0.5) < 1e-12  # fmt: skip
    assert compare_images(flat(100, 7, 7), flat(200, 7, 7), reference_base_result=score - 0.005) == 0.0


def test_what_upstream_could_not_compare_scores_zero():
    assert compare_images(b"\xff\xd8\xff\xe0JFIF", A) == 0.0  # not a PNG
    assert compare_images(flat(1, 6, 9), flat(1, 6, 9)) == 0.0  # smaller than SSIM's 7x7 window
    assert compare_images(None, A) == 0.0 and compare_images(A, b"") == 0.0


def test_a_task_graded_by_it_imports_and_scores_from_the_root(tmp_path, monkeypatch):
    gold_url = "https://files.example.invalid/i/gold.png"
    evaluator = {"func": "compare_images", "result": {"type": "vm_file", "path": "/home/user/Desktop/res.png", "dest": "res.png"}, "expected": {"type": "cloud_file", "path": gold_url, "dest": "g.png"}}  # fmt: skip
    args = imported_check(tmp_path, "libreoffice_impress", evaluator, {"files.example.invalid/i/gold.png": A})
    assert args["metrics"][0]["expected"] == {"data_b64": base64.b64encode(A).decode()}
    folder = desktop(tmp_path, monkeypatch)
    for image, passed in ((encode(rgb(12, 9, 1), 12), True), (B, False)):
        (folder / "res.png").write_bytes(image)
        assert run_check("osworld", args)["passed"] is passed


# -- check_image_stretch_and_center: the picture's geometry in the saved deck ---------------------------

WIDTH, HEIGHT, INCH = 12192000, 6858000, 914400  # a 16:9 slide in EMU


def pic(image: int, x: int, y: int, cx: int, cy: int, *, placeholder: bool = False) -> str:
    ph = "<p:ph type='pic'/>" if placeholder else ""
    xfrm = f'<a:xfrm><a:off x="{x}" y="{y}"/><a:ext cx="{cx}" cy="{cy}"/></a:xfrm>'
    return f'<p:pic><p:nvPicPr><p:cNvPr id="{image + 2}" name="p"/><p:cNvPicPr/><p:nvPr>{ph}</p:nvPr></p:nvPicPr><p:blipFill><a:blip r:embed="rId{image}"/></p:blipFill><p:spPr>{xfrm}</p:spPr></p:pic>'  # fmt: skip


def deck(*shapes: str, images: tuple[bytes, ...] = (A, B)) -> bytes:
    """One slide holding ``shapes``; picture ``n`` (``pic(n, ...)``) shows ``images[n]``."""
    ns = f'xmlns:p="{P}" xmlns:a="{A_NS}" xmlns:r="{R}"'
    links = "".join(f'<Relationship Id="rId{i}" Type="x/image" Target="../media/image{i}.png"/>' for i in range(len(images)))  # fmt: skip
    parts = {
        "ppt/presentation.xml": f'<p:presentation {ns}><p:sldIdLst><p:sldId id="256" r:id="rId1"/></p:sldIdLst><p:sldSz cx="{WIDTH}" cy="{HEIGHT}"/></p:presentation>',  # fmt: skip
        "ppt/_rels/presentation.xml.rels": rels({"rId1": "slides/slide1.xml"}),
        "ppt/slides/slide1.xml": f"<p:sld {ns}><p:cSld><p:spTree>{''.join(shapes)}</p:spTree></p:cSld></p:sld>",
        "ppt/slides/_rels/slide1.xml.rels": f'<Relationships xmlns="{PR}">{links}</Relationships>',
    }
    return zipped({**parts, **{f"ppt/media/image{i}.png": image for i, image in enumerate(images)}})


ORIGINAL = deck(pic(0, INCH, INCH, 4 * INCH, 3 * INCH), pic(1, 0, 0, INCH, INCH))


def stretched(result: bytes) -> float:
    refs = [{"data_b64": base64.b64encode(d).decode()} for d in (result, ORIGINAL)]
    return run_check("osworld", {"metrics": [{"func": "check_image_stretch_and_center", "result": refs[0], "expected": refs[1]}]})["score"]  # fmt: skip


def test_the_picture_stretched_over_the_slide_and_centred_passes():
    assert stretched(deck(pic(1, 0, 0, INCH, INCH), pic(0, 0, 0, WIDTH, HEIGHT))) == 1.0
    near = INCH // 2 - 1000  # within half an inch each way
    assert stretched(deck(pic(0, -near, near, WIDTH + near, HEIGHT - near))) == 1.0
    # upstream takes the last picture with the same image bytes
    assert stretched(deck(pic(0, 0, 0, INCH, INCH), pic(0, 0, 0, WIDTH, HEIGHT))) == 1.0
    assert stretched(deck(pic(0, 0, 0, WIDTH, HEIGHT), pic(0, 0, 0, INCH, INCH))) == 0.0


def test_kept_in_proportion_off_centre_or_another_image_scores_zero():
    ratio = 4 * HEIGHT // 3  # proportional: as high as the slide, not as wide
    assert stretched(deck(pic(0, (WIDTH - ratio) // 2, 0, ratio, HEIGHT))) == 0.0
    assert stretched(deck(pic(0, INCH, 0, WIDTH, HEIGHT))) == 0.0  # an inch to the right
    assert stretched(deck(pic(1, 0, 0, WIDTH, HEIGHT))) == 0.0  # the other picture stretched
    assert stretched(deck(pic(0, 0, 0, WIDTH, HEIGHT, placeholder=True))) == 0.0  # a placeholder is not a PICTURE
    assert stretched(b"not a deck") == 0.0


def test_a_task_graded_by_the_picture_geometry_imports(tmp_path):
    url, path = "https://files.example.invalid/i/deck.pptx", "/home/user/Desktop/deck.pptx"
    evaluator = {"func": "check_image_stretch_and_center", "result": {"type": "vm_file", "path": path, "dest": "d.pptx"}, "expected": {"type": "cloud_file", "path": url, "dest": "o.pptx"}}  # fmt: skip
    task = {"id": "i2", "snapshot": "libreoffice_impress", "instruction": "Do it.", "source": "test", "config": [], "evaluator": evaluator}  # fmt: skip
    (tmp_path / "files.example.invalid/i").mkdir(parents=True)
    (tmp_path / "files.example.invalid/i/deck.pptx").write_bytes(ORIGINAL)
    assert classify("libreoffice_impress", task, AssetIndex(tmp_path)).status == "imported"
    assert classify("libreoffice_impress", task, AssetIndex(None)).status == "assets"


# -- compare_image_list: no pixel differs ---------------------------------------------------------------

PHOTO, OTHER = b"\xff\xd8\xff\xe0 photo 1", b"\xff\xd8\xff\xe0 photo 2"  # JPEG-looking files: compared as files
ROWS_RGB = rgb(5, 4, 3)


def listed(result: list, expected: list) -> float:
    refs = [{"list": [{"data_b64": base64.b64encode(d).decode()} if d is not None else {"file": "/nonexistent"} for d in side]} for side in (result, expected)]  # fmt: skip
    return run_check("osworld", {"metrics": [{"func": "compare_image_list", "result": refs[0], "expected": refs[1]}]})["score"]  # fmt: skip


def rgba(alpha: int, red: int = 10) -> bytes:
    return encode([bytes([red, 20, 30, alpha]) * 4 for _ in range(3)], 4, ctype=6)


def test_the_same_photos_in_order_pass_and_a_wrong_or_missing_one_fails():
    assert listed([PHOTO, OTHER], [PHOTO, OTHER]) == 1.0
    assert listed([OTHER, PHOTO], [PHOTO, OTHER]) == 0.0
    assert listed([PHOTO, None], [PHOTO, OTHER]) == 0.0
    assert listed([PHOTO], [PHOTO, OTHER]) == 1.0  # upstream zips the two lists: the shorter one decides


def test_pngs_compare_by_pixels_as_imagechops_and_getbbox_do():
    assert listed([encode(ROWS_RGB, 5, filters=(4,))], [encode(ROWS_RGB, 5)]) == 1.0  # re-encoded
    changed = [ROWS_RGB[0][:-1] + b"\x01", *ROWS_RGB[1:]]
    assert listed([encode(changed, 5)], [encode(ROWS_RGB, 5)]) == 0.0
    assert listed([rgba(255, red=99)], [rgba(255)]) == 1.0  # with alpha, getbbox reads the alpha channel alone
    assert listed([rgba(7)], [rgba(255)]) == 0.0
    assert listed([encode(ROWS_RGB[:3], 5)], [encode(ROWS_RGB, 5)]) == 0.0  # upstream would resize first


def test_a_task_graded_by_the_image_list_imports_and_scores_from_the_root(tmp_path, monkeypatch):
    names = ["a.jpg", "b.jpg"]
    result = {"type": "vm_file", "path": [f"/home/user/Desktop/out/{n}" for n in names], "dest": names, "multi": "true"}
    gold = {"type": "cloud_file", "path": [f"https://files.example.invalid/l/{n}" for n in names], "dest": names, "multi": "true"}  # fmt: skip
    both = {"func": "compare_image_list", "result": {**result, "gives": [0, 1]}, "expected": {**gold, "gives": [0, 1]}}
    task = {"id": "l1", "snapshot": "multi_apps", "instruction": "Do it.", "source": "test", "config": [], "evaluator": both}  # fmt: skip
    (tmp_path / "assets/files.example.invalid/l").mkdir(parents=True)
    for name, data in zip(names, (PHOTO, OTHER)):
        (tmp_path / "assets/files.example.invalid/l" / name).write_bytes(data)
    assert classify("multi_apps", task, AssetIndex(tmp_path / "assets")).status == "imported"
    (tmp_path / "both.json").write_text(json.dumps(task))
    # without "gives", upstream's getters give the first file only: so does the import
    (tmp_path / "first.json").write_text(
        json.dumps({**task, "evaluator": {**both, "result": result, "expected": gold}})
    )
    checks = {name: OSWorldTask(tmp_path / f"{name}.json", tmp_path / "assets").check_args() for name in ("both", "first")}  # fmt: skip
    monkeypatch.setenv("AGENTENVS_STATE_ROOT", str(tmp_path / "root"))
    out = tmp_path / "root/home/user/Desktop/out"
    out.mkdir(parents=True)
    (out / "a.jpg").write_bytes(PHOTO)
    assert [run_check("osworld", checks[n])["score"] for n in ("both", "first")] == [0.0, 1.0]  # b.jpg missing
    (out / "b.jpg").write_bytes(OTHER)
    assert [run_check("osworld", checks[n])["score"] for n in ("both", "first")] == [1.0, 1.0]
    (out / "b.jpg").write_bytes(PHOTO)
    assert [run_check("osworld", checks[n])["score"] for n in ("both", "first")] == [0.0, 1.0]
    (out / "a.jpg").write_bytes(OTHER)
    assert run_check("osworld", checks["first"])["score"] == 0.0
