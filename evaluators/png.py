"""PNG pixels with the standard library (zlib and the five scanline filters), as Pillow's ``tobytes`` gives them.

OSWorld compares images with Pillow, which the state checker cannot import.
``decode`` gives the mode Pillow opens a PNG in and its raw pixel bytes:
8-bit samples as stored; 16-bit ones cut to their high byte (``I;16``, a
16-bit grey, kept little-endian); grey of 2 or 4 bits scaled to 8, palette
indices unpacked to a byte, 1-bit grey packed as mode ``1``. Untrusted
input: the inflated data is capped by what the header says it holds, the
image at ``MAX_PIXELS``, and a malformed file is a ``PngError``. An
interlaced (Adam7) file is put back into the rows a plain one holds.
"""

from __future__ import annotations

import struct
import zlib

SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: Pillow reads larger images; pure Python decodes about a million RGBA pixels a second at worst (every row
#: Paeth-filtered). A larger image the agent saves must not run the check past its deadline, which would make
#: the episode an unscored infrastructure error: so 1920x1200 at most, a few seconds even on a loaded machine,
#: and a larger image scores 0.
MAX_PIXELS = 1920 * 1200
#: (colour type, bit depth) -> Pillow's mode
MODES = {
    (0, 1): "1",
    (0, 2): "L",
    (0, 4): "L",
    (0, 8): "L",
    (0, 16): "I;16",
    (2, 8): "RGB",
    (2, 16): "RGB",
    (3, 1): "P",
    (3, 2): "P",
    (3, 4): "P",
    (3, 8): "P",
    (4, 8): "LA",
    (4, 16): "RGBA",
    (6, 8): "RGBA",
    (6, 16): "RGBA",
}
_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
#: Adam7's passes: (first column, first row, column step, row step)
_ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2))


class PngError(ValueError):
    """Not a PNG this decoder reads."""


def _header_and_data(data: bytes) -> tuple[tuple[int, ...], bytes]:
    if not data.startswith(SIGNATURE):
        raise PngError("no PNG signature")
    pos, header, idat = len(SIGNATURE), None, []
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR" and len(body) >= 13:
            header = struct.unpack(">IIBBBBB", body[:13])
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    if header is None or not idat:
        raise PngError("no IHDR or IDAT chunk")
    return header, b"".join(idat)


def _unfilter(raw: bytes, stride: int, bpp: int, height: int) -> bytearray:
    """The scanlines without their filter bytes, each filter (None, Sub, Up, Average, Paeth) undone."""
    out = bytearray()
    prev = bytearray(stride)
    high = int.from_bytes(b"\x80" * stride, "big")
    low = int.from_bytes(b"\x7f" * stride, "big")
    for row in range(height):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        if kind == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif kind == 2:  # bytewise sums in one big integer: the low 7 bits add, bit 7 is their carry xor both
            a, b = int.from_bytes(line, "big"), int.from_bytes(prev, "big")
            line = bytearray((((a & low) + (b & low)) ^ ((a ^ b) & high)).to_bytes(stride, "big"))
        elif kind == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif kind == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = prev[i], prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        elif kind != 0:
            raise PngError(f"unknown filter type {kind}")
        out += line
        prev = line
    return out


def _unpack(rows: bytes, width: int, height: int, depth: int, stride: int, scale: int) -> bytes:
    """Sub-byte samples, most significant first, one byte each (times ``scale``)."""
    out = bytearray()
    mask, per = (1 << depth) - 1, 8 // depth
    for row in range(height):
        line = rows[row * stride : (row + 1) * stride]
        for x in range(width):
            byte = line[x // per]
            out.append(((byte >> (8 - depth * (x % per + 1))) & mask) * scale)
    return bytes(out)


def _passes(width: int, height: int, bits: int) -> list[tuple[int, int, int, int, int, int, int]]:
    """Adam7's non-empty passes: (x0, y0, dx, dy, columns, rows, stride)."""
    found = []
    for x0, y0, dx, dy in _ADAM7:
        cols, rows = (width - x0 + dx - 1) // dx, (height - y0 + dy - 1) // dy
        if cols > 0 and rows > 0:
            found.append((x0, y0, dx, dy, cols, rows, (cols * bits + 7) // 8))
    return found


def _deinterlace(raw: bytes, width: int, height: int, depth: int, bits: int, bpp: int) -> bytes:
    """Adam7's seven sub-images put back into the scanlines a non-interlaced PNG of the image holds."""
    stride, pos = (width * bits + 7) // 8, 0
    image = bytearray(stride * height) if bits >= 8 else bytearray(width * height)
    for x0, y0, dx, dy, cols, rows, sub_stride in _passes(width, height, bits):
        sub = bytes(_unfilter(raw[pos:], sub_stride, bpp, rows))
        pos += rows * (sub_stride + 1)
        if bits < 8:  # one sample a pixel: place the values, pack them again below
            values = _unpack(sub, cols, rows, depth, sub_stride, 1)
            for r in range(rows):
                y = y0 + r * dy
                image[y * width + x0 : (y + 1) * width : dx] = values[r * cols : (r + 1) * cols]
            continue
        size = bits // 8
        for r in range(rows):
            y, line = y0 + r * dy, sub[r * sub_stride : (r + 1) * sub_stride]
            for k in range(size):
                image[y * stride + x0 * size + k : (y + 1) * stride : dx * size] = line[k::size]
    if bits >= 8:
        return bytes(image)
    per, out = 8 // depth, bytearray()
    for y in range(height):
        row = image[y * width : (y + 1) * width]
        row += bytes(-len(row) % per)
        out += bytes(sum(v << (8 - depth * (k + 1)) for k, v in enumerate(row[i : i + per])) for i in range(0, len(row), per))  # fmt: skip
    return bytes(out)


def palette(data: bytes) -> bytes:
    """The ``PLTE`` chunk's RGB triples (empty without one): what mode ``P``'s indices name."""
    pos = len(SIGNATURE)
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        if kind == b"PLTE":
            return data[pos + 8 : pos + 8 + length]
        if kind in (b"IDAT", b"IEND"):
            break
        pos += 12 + length
    return b""


def decode(data: bytes) -> tuple[str, int, int, bytes]:
    """(mode, width, height, pixels): the mode Pillow opens the PNG in and its ``tobytes()``."""
    (width, height, depth, ctype, _, _, interlace), packed = _header_and_data(data)
    mode = MODES.get((ctype, depth))
    if mode is None:
        raise PngError(f"colour type {ctype} at {depth} bits")
    if width * height > MAX_PIXELS:
        raise PngError("too many pixels")
    bits = _CHANNELS[ctype] * depth
    stride, bpp = (width * bits + 7) // 8, max(1, bits // 8)
    size = sum(r * (s + 1) for *_, r, s in _passes(width, height, bits)) if interlace else height * (stride + 1)
    inflater = zlib.decompressobj()
    try:
        raw = inflater.decompress(packed, size)
    except zlib.error as exc:
        raise PngError(f"the image data does not inflate: {exc}") from None
    if len(raw) < size:
        raise PngError("the image data is truncated")
    if interlace:
        rows = _deinterlace(raw, width, height, depth, bits, bpp)
    else:
        rows = bytes(_unfilter(raw, stride, bpp, height))
    if mode == "1" and width % 8:  # Pillow packs its pixels again: the bits past the row's end are 0
        packed_rows = bytearray(rows)
        packed_rows[stride - 1 :: stride] = bytes(
            b & (0xFF << (8 - width % 8)) & 0xFF for b in rows[stride - 1 :: stride]
        )
        rows = bytes(packed_rows)
    if depth == 8 or mode == "1":
        return mode, width, height, rows
    if depth < 8:
        return mode, width, height, _unpack(rows, width, height, depth, stride, 1 if ctype == 3 else 255 // ((1 << depth) - 1))  # fmt: skip
    if ctype == 0:  # I;16: the same samples, little-endian
        swapped = bytearray(rows)
        swapped[0::2], swapped[1::2] = rows[1::2], rows[0::2]
        return mode, width, height, bytes(swapped)
    high = rows[0::2]
    if ctype == 4:  # grey and alpha as RGBA
        high = bytes(v for grey, alpha in zip(high[0::2], high[1::2]) for v in (grey, grey, grey, alpha))
    return mode, width, height, high
