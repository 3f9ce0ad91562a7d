"""OSWorld's ``compare_images`` on PNGs (Pillow's grey conversion and Lanczos resize, then scikit-image's
SSIM) and ``compare_image_list`` (no pixel differs).

Upstream opens both images with Pillow, converts them to ``L``, resizes both
to the smaller size (``min`` of the two (width, height) tuples, so by width
first) with ``LANCZOS`` and scores ``structural_similarity`` with its
defaults: a 7x7 uniform window, sample covariance, data range 255, the mean
over the pixels at least 3 from the border. Each step here is written to
give the same numbers with the standard library: the grey values and the
resize bit for bit (Pillow's fixed-point coefficients), the SSIM to float
rounding. Only PNGs are decoded (``png``); any other file scores 0.
"""

from __future__ import annotations

import math
import operator
from itertools import accumulate
from typing import Any

from evaluators import png
from evaluators.osworld import metric

#: Pillow's resampling precision for 8-bit images (``PRECISION_BITS`` in Resample.c)
_BITS = 32 - 8 - 2


def grey(data: bytes) -> tuple[int, int, bytes]:
    """(width, height, pixels) of ``Image.open(...).convert("L")``: ITU-R 601 weights in Pillow's fixed point."""
    mode, width, height, px = png.decode(data)
    if mode == "L":
        return width, height, px
    if mode in ("RGB", "RGBA"):
        n = len(mode)
        r, g, b = px[0::n], px[1::n], px[2::n]
        return width, height, bytes((x * 19595 + y * 38470 + z * 7471 + 0x8000) >> 16 for x, y, z in zip(r, g, b))
    if mode == "LA":
        return width, height, px[0::2]
    if mode == "P":
        colours = png.palette(data).ljust(768, b"\0")
        table = [(colours[i] * 19595 + colours[i + 1] * 38470 + colours[i + 2] * 7471 + 0x8000) >> 16 for i in range(0, 768, 3)]  # fmt: skip
        return width, height, bytes(table[i] for i in px)
    if mode == "I;16":  # Pillow clips: anything above 255 is white
        return width, height, bytes(lo if hi == 0 else 255 for lo, hi in zip(px[0::2], px[1::2]))
    stride = (width + 7) // 8  # mode 1
    return width, height, bytes(255 * (px[y * stride + x // 8] >> (7 - x % 8) & 1) for y in range(height) for x in range(width))  # fmt: skip


def _lanczos(x: float) -> float:
    if not -3.0 <= x < 3.0:
        return 0.0
    sinc = math.sin(x * math.pi) / (x * math.pi) if x else 1.0
    third = math.sin(x * math.pi / 3) / (x * math.pi / 3) if x else 1.0
    return sinc * third


def _coefficients(size: int, out: int) -> list[tuple[int, list[int]]]:
    """Per output pixel, the first input pixel and the fixed-point weights (Pillow's ``precompute_coeffs``)."""
    scale = size / out
    filterscale = max(scale, 1.0)
    support = 3.0 * filterscale
    found = []
    for xx in range(out):
        center = (xx + 0.5) * scale
        xmin = max(int(center - support + 0.5), 0)
        xmax = min(int(center + support + 0.5), size) - xmin
        weights = [_lanczos((x + xmin - center + 0.5) / filterscale) for x in range(xmax)]
        total = sum(weights)
        weights = [w / total for w in weights] if total != 0.0 else weights
        fixed = [int(w * (1 << _BITS) + (0.5 if w >= 0 else -0.5)) for w in weights]
        found.append((xmin, fixed))
    return found


def _pass(lines: list[bytes], size: int, out: int) -> list[bytes]:
    """Resample each line from ``size`` to ``out`` pixels, rounding and clipping as Pillow does."""
    coeffs = _coefficients(size, out)
    half = 1 << (_BITS - 1)
    result = []
    for line in lines:
        row = bytearray(out)
        for xx, (xmin, fixed) in enumerate(coeffs):
            total = half + sum(line[xmin + i] * k for i, k in enumerate(fixed))
            row[xx] = min(max(total >> _BITS, 0), 255)
        result.append(bytes(row))
    return result


def resize(width: int, height: int, px: bytes, new: tuple[int, int]) -> bytes:
    """``Image.resize(new, LANCZOS)`` of a grey image: horizontal pass, then vertical; the same size is a copy."""
    rows = [px[y * width : (y + 1) * width] for y in range(height)]
    if new[0] != width:
        rows = _pass(rows, width, new[0])
    if new[1] != height:
        columns = [bytes(row[x] for row in rows) for x in range(new[0])]
        columns = _pass(columns, height, new[1])
        rows = [bytes(col[y] for col in columns) for y in range(new[1])]
    return b"".join(rows)


def _integral(values: list[int], width: int, height: int) -> list[list[int]]:
    """Summed-area table: entry [y][x] is the sum of the values above and left of pixel (x, y)."""
    table = [[0] * (width + 1)]
    for y in range(height):
        table.append([0, *map(operator.add, table[-1][1:], accumulate(values[y * width : (y + 1) * width]))])
    return table


def ssim(a: bytes, b: bytes, width: int, height: int) -> float:
    """scikit-image's ``structural_similarity`` of two uint8 images with its defaults."""
    win, r = 7, 3
    if width < win or height < win:
        raise ValueError("an image smaller than the 7x7 window")
    tables = [
        _integral(list(a), width, height),
        _integral(list(b), width, height),
        _integral([v * v for v in a], width, height),
        _integral([v * v for v in b], width, height),
        _integral([v * w for v, w in zip(a, b)], width, height),
    ]
    n = win * win
    cov_norm, c1, c2 = n / (n - 1), (0.01 * 255) ** 2, (0.03 * 255) ** 2

    def pixel(sx: int, sy: int, sxx: int, syy: int, sxy: int) -> float:
        ux, uy = sx / n, sy / n
        vx, vy = cov_norm * (sxx / n - ux * ux), cov_norm * (syy / n - uy * uy)
        vxy = cov_norm * (sxy / n - ux * uy)
        return ((2 * ux * uy + c1) * (2 * vxy + c2)) / ((ux * ux + uy * uy + c1) * (vx + vy + c2))

    total = 0.0
    for y in range(r, height - r):
        # each table's 7x7 window sums along the row: bottom-right - top-right - bottom-left + top-left
        sums = [
            [d - c - b + a for a, b, c, d in zip(t[y - r], t[y + r + 1], t[y - r][win:], t[y + r + 1][win:])]
            for t in tables
        ]
        total += sum(map(pixel, *sums))
    return total / ((width - 2 * r) * (height - 2 * r))


@metric
def compare_images(result: Any, expected: Any, **options: Any) -> float:
    """SSIM of the two images in grey at the smaller size; with ``reference_base_result``, the part of the
    way from that base to 1 (0 unless at least 0.01 above it)."""
    if not result or not expected:
        return 0.0
    try:
        (w1, h1, a), (w2, h2, b) = grey(result), grey(expected)
        new = min((w1, h1), (w2, h2))
        score = ssim(resize(w1, h1, a, new), resize(w2, h2, b, new), *new)
    except (png.PngError, ValueError):
        return 0.0
    base = options.get("reference_base_result")
    if base is None:
        return score
    return (score - base) / (1 - base) if score >= base + 0.01 else 0.0


def _no_difference(pred: bytes, gold: bytes) -> bool:
    """``ImageChops.difference(pred, gold).getbbox()`` is None: the same file, or PNGs of the same size and mode
    whose pixels differ nowhere (only in colour where both have alpha: ``getbbox`` then reads alpha alone).

    Upstream first resizes and converts the prediction to the gold's size and mode; images that would need
    that, and different files of another format (JPEG), count as different here."""
    if pred == gold:
        return True
    try:
        (mode, *size, a), (gold_mode, *gold_size, b) = png.decode(pred), png.decode(gold)
    except png.PngError:
        return False
    if (mode, size) != (gold_mode, gold_size):
        return False
    if mode in ("RGBA", "LA"):
        return a[len(mode) - 1 :: len(mode)] == b[len(mode) - 1 :: len(mode)]
    return a == b


@metric
def compare_image_list(result: Any, expected: Any) -> float:
    """Each predicted image, paired in order with its gold one (as far as both lists go), shows no difference."""
    pairs = zip(result, expected) if isinstance(result, list) else [(result, expected)]
    return float(all(pred and gold and _no_difference(pred, gold) for pred, gold in pairs))
