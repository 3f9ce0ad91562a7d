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
    gold_url, path = "https://files.example.invalid/i/gold.png", "/home/user/Desktop/res.png"
    evaluator = {"func": "compare_images", "result": {"type": "vm_file", "path": path, "dest": "res.png"}, "expected": {"type": "cloud_file", "path": gold_url, "dest": "g.png"}}  # fmt: skip
    task = {"id": "i1", "snapshot": "libreoffice_impress", "instruction": "Do it.", "source": "test", "config": [], "evaluator": evaluator}  # fmt: skip
    assets = tmp_path / "assets"
    (assets / "files.example.invalid/i").mkdir(parents=True)
    (assets / "files.example.invalid/i/gold.png").write_bytes(A)
    assert classify("libreoffice_impress", task, AssetIndex(assets)).status == "imported"
    (tmp_path / "t.json").write_text(json.dumps(task))
    args = OSWorldTask(tmp_path / "t.json", assets).check_args()
    assert args["metrics"][0]["expected"] == {"data_b64": base64.b64encode(A).decode()}
    monkeypatch.setenv("AGENTENVS_STATE_ROOT", str(tmp_path / "root"))
    (tmp_path / "root/home/user/Desktop").mkdir(parents=True)
    for image, passed in ((encode(rgb(12, 9, 1), 12), True), (B, False)):
        (tmp_path / "root" / path.lstrip("/")).write_bytes(image)
        assert run_check("osworld", args)["passed"] is passed
