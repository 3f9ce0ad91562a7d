"""Text and page count of a PDF with the standard library: objects, Flate streams, fonts' ToUnicode maps.

Enough for what OSWorld's PDF metrics compare (``compare_pdfs``' text
similarity, ``check_pdf_pages``' count) on files office apps export: the
objects (also inside object streams), each page's content streams in page
order, text-showing operators decoded through the font's ``/ToUnicode``
CMap (code width from its codespace range), a line break where the text
position moves down. Untrusted input: every stream is inflated with a cap,
and a malformed file is a ``PdfError``.
"""

from __future__ import annotations

import re
import zlib
from typing import Any

from evaluators._budget import spend

MAX_STREAM = 64 * 1024 * 1024
_OBJ = re.compile(rb"(\d+)\s+(\d+)\s+obj\b(.*?)\bendobj", re.S)
_REF = re.compile(rb"(\d+)\s+\d+\s+R")
_TOKEN = re.compile(
    rb"\s*(?:(?P<str>\()|(?P<hex><[0-9A-Fa-f\s]*>)|(?P<arr>\[)|(?P<end>\])|(?P<name>/[^\s/\[\]()<>{}%]*)"
    rb"|(?P<num>[+-]?(?:\d+\.?\d*|\.\d+))|(?P<dict><<|>>)|(?P<op>[A-Za-z'\"*]+[0-9]?\*?)|(?P<other>\S))"
)


class PdfError(ValueError):
    """Not a PDF this reader can take apart."""


def _inflate(raw: bytes) -> bytes:
    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(raw, MAX_STREAM)
    except zlib.error as exc:
        raise PdfError(f"a stream does not inflate: {exc}") from None
    if inflater.unconsumed_tail:
        raise PdfError("a stream inflates past the cap")
    spend(len(out), "PDF stream")
    return out


def _split(body: bytes) -> tuple[bytes, bytes | None]:
    """An object's dictionary text and its (decoded) stream, if it has one."""
    m = re.search(rb"stream\r?\n", body)
    if m is None:
        return body, None
    head, raw = body[: m.start()], body[m.end() :]
    end = raw.rfind(b"endstream")
    raw = raw[:end] if end >= 0 else raw
    length = re.search(rb"/Length\s+(\d+)(?!\s+\d+\s+R)", head)
    if length and int(length.group(1)) <= len(raw):
        raw = raw[: int(length.group(1))]
    if b"/FlateDecode" in head:
        return head, _inflate(raw)
    if re.search(rb"/Filter", head):
        return head, None  # an image or another filter: never text here
    return head, raw


class Pdf:
    def __init__(self, data: bytes):
        if not data.startswith(b"%PDF"):
            raise PdfError("not a PDF")
        self.objects: dict[int, tuple[bytes, bytes | None]] = {}
        for m in _OBJ.finditer(data):
            self.objects[int(m.group(1))] = _split(m.group(3))
        for head, stream in list(self.objects.values()):
            if b"/ObjStm" in head and stream is not None:
                self._unpack(head, stream)
        if not self.objects:
            raise PdfError("no objects")

    def _unpack(self, head: bytes, stream: bytes) -> None:
        first = re.search(rb"/First\s+(\d+)", head)
        count = re.search(rb"/N\s+(\d+)", head)
        if not first or not count:
            return
        numbers = stream[: int(first.group(1))].split()
        pairs = [
            (int(numbers[i]), int(numbers[i + 1])) for i in range(0, min(len(numbers), 2 * int(count.group(1))), 2)
        ]
        for i, (num, offset) in enumerate(pairs):
            start = int(first.group(1)) + offset
            end = int(first.group(1)) + pairs[i + 1][1] if i + 1 < len(pairs) else len(stream)
            self.objects.setdefault(num, (stream[start:end], None))

    def _dict_value(self, head: bytes, key: bytes) -> bytes | None:
        """The raw value of ``/key`` in a dictionary: a reference's target object, a nested dict, an array, a name."""
        m = re.search(rb"/" + key + rb"(?![A-Za-z])\s*", head)
        if m is None:
            return None
        rest = head[m.end() :]
        ref = re.match(rb"(\d+)\s+\d+\s+R", rest)
        if ref:
            return self.objects.get(int(ref.group(1)), (b"", None))[0]
        for open_, close in ((b"<<", b">>"), (b"[", b"]")):
            if rest.startswith(open_):
                depth, i = 0, 0
                while i < len(rest):
                    if rest.startswith(open_, i):
                        depth, i = depth + 1, i + len(open_)
                    elif rest.startswith(close, i):
                        depth, i = depth - 1, i + len(close)
                        if depth == 0:
                            return rest[:i]
                    else:
                        i += 1
                return rest
        return rest.split(None, 1)[0] if rest.strip() else None

    def _refs(self, value: bytes | None) -> list[int]:
        return [int(n) for n in _REF.findall(value or b"")]

    def _raw_value(self, head: bytes, key: bytes) -> bytes | None:
        m = re.search(rb"/" + key + rb"(?![A-Za-z])\s*(\[[^\]]*\]|\d+\s+\d+\s+R)", head)
        return m.group(1) if m else None

    def pages(self) -> list[tuple[bytes, bytes]]:
        """(page dict, resources dict) in page order, resources inherited from the page tree."""
        catalog = next((h for h, _ in self.objects.values() if re.search(rb"/Type\s*/Catalog", h)), b"")
        tree = self._refs(self._raw_value(catalog, b"Pages"))
        out: list[tuple[bytes, bytes]] = []
        self._walk(tree[0] if tree else None, b"", out, set())
        if not out:  # no usable catalog: every page object, in file order
            out = [(h, self._dict_value(h, b"Resources") or b"") for h, _ in self.objects.values() if re.search(rb"/Type\s*/Page(?!s)", h)]  # fmt: skip
        return out

    def _walk(self, num: int | None, resources: bytes, out: list, seen: set[int]) -> None:
        if num is None or num in seen or num not in self.objects:
            return
        seen.add(num)
        head = self.objects[num][0]
        resources = self._dict_value(head, b"Resources") or resources
        if re.search(rb"/Type\s*/Pages", head):
            for kid in self._refs(self._raw_value(head, b"Kids")):
                self._walk(kid, resources, out, seen)
        elif re.search(rb"/Type\s*/Page\b", head):
            out.append((head, resources))

    def page_text(self, page: bytes, resources: bytes) -> str:
        fonts = {}
        font_dict = self._dict_value(resources, b"Font") or b""
        for name, num in re.findall(rb"/([^\s/<>\[\]]+)\s+(\d+)\s+\d+\s+R", font_dict):
            fonts[name] = self._cmap(self.objects.get(int(num), (b"", None))[0])
        content = b"".join(
            self.objects.get(n, (b"", None))[1] or b"" for n in self._refs(self._raw_value(page, b"Contents"))
        )
        return _show(content, fonts)

    def _cmap(self, font: bytes) -> tuple[int, dict[int, str]]:
        to_unicode = self._refs(self._raw_value(font, b"ToUnicode"))
        stream = self.objects.get(to_unicode[0], (b"", None))[1] if to_unicode else None
        if not stream:
            return 1, {}
        width = 1
        space = re.search(rb"begincodespacerange\s*<([0-9A-Fa-f]+)>", stream)
        if space:
            width = max(1, len(space.group(1)) // 2)
        table: dict[int, str] = {}
        for block in re.findall(rb"beginbfchar(.*?)endbfchar", stream, re.S):
            for code, uni in re.findall(rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]*)>", block):
                table[int(code, 16)] = _utf16(uni)
        for block in re.findall(rb"beginbfrange(.*?)endbfrange", stream, re.S):
            for lo, hi, dest in re.findall(
                rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s*(<[0-9A-Fa-f]*>|\[[^\]]*\])", block
            ):
                a, b = int(lo, 16), min(int(hi, 16), int(lo, 16) + 65535)
                if dest.startswith(b"["):
                    for i, uni in enumerate(re.findall(rb"<([0-9A-Fa-f]*)>", dest)):
                        table[a + i] = _utf16(uni)
                else:
                    start = _utf16(dest[1:-1])
                    for i in range(b - a + 1):
                        table[a + i] = start[:-1] + chr(ord(start[-1]) + i) if start else ""
        return width, table


def _utf16(hexed: bytes) -> str:
    raw = bytes.fromhex(hexed.decode())
    return raw.decode("utf-16-be", "replace") if len(raw) >= 2 else raw.decode("latin-1")


def _literal(data: bytes, i: int) -> tuple[bytes, int]:
    """A literal string starting after its ``(`` at ``i``: its bytes and the index past its ``)``."""
    out, depth = bytearray(), 1
    escapes = {ord("n"): b"\n", ord("r"): b"\r", ord("t"): b"\t", ord("b"): b"\b", ord("f"): b"\f"}
    while i < len(data):
        c = data[i]
        if c == 0x5C and i + 1 < len(data):  # backslash
            nxt = data[i + 1]
            octal = re.match(rb"[0-7]{1,3}", data[i + 1 : i + 4])
            if octal:
                out.append(int(octal.group(), 8) & 0xFF)
                i += 1 + len(octal.group())
                continue
            out += escapes.get(nxt, bytes([nxt]) if nxt not in (0x0A, 0x0D) else b"")
            i += 2
            continue
        if c == 0x28:
            depth += 1
        elif c == 0x29:
            depth -= 1
            if depth == 0:
                return bytes(out), i + 1
        out.append(c)
        i += 1
    return bytes(out), i


def _decode(raw: bytes, font: tuple[int, dict[int, str]] | None) -> str:
    width, table = font or (1, {})
    if not table:
        return raw.decode("latin-1")
    codes = [int.from_bytes(raw[i : i + width], "big") for i in range(0, len(raw) - width + 1, width)]
    return "".join(table.get(c, "") for c in codes)


def _show(content: bytes, fonts: dict[bytes, tuple[int, dict[int, str]]]) -> str:
    """Run a content stream's text operators: the shown text, a newline where the line moves."""
    out: list[str] = []
    stack: list[Any] = []
    font = None
    i = 0
    while i < len(content):
        m = _TOKEN.match(content, i)
        if m is None:
            break
        i = m.end()
        if m.group("str"):
            raw, i = _literal(content, i)
            stack.append(raw)
        elif m.group("hex"):
            digits = re.sub(rb"\s", b"", m.group("hex")[1:-1])
            stack.append(bytes.fromhex((digits + b"0" * (len(digits) % 2)).decode()))
        elif m.group("arr"):
            stack.append("[")
        elif m.group("end"):
            items = []
            while stack and stack[-1] != "[":
                items.append(stack.pop())
            if stack:
                stack.pop()
            stack.append(items[::-1])
        elif m.group("name"):
            stack.append(m.group("name")[1:])
        elif m.group("num"):
            stack.append(float(m.group("num")))
        elif m.group("op"):
            op = m.group("op")
            if op == b"Tf" and len(stack) >= 2:
                font = fonts.get(stack[-2]) if isinstance(stack[-2], bytes) else None
            elif op in (b"Tj", b"'", b'"') and stack and isinstance(stack[-1], bytes):
                if op != b"Tj":
                    out.append("\n")
                out.append(_decode(stack[-1], font))
            elif op == b"TJ" and stack and isinstance(stack[-1], list):
                for item in stack[-1]:
                    if isinstance(item, bytes):
                        out.append(_decode(item, font))
                    elif isinstance(item, float) and item < -200:
                        out.append(" ")
            elif op in (b"Td", b"TD") and len(stack) >= 2 and isinstance(stack[-1], float) and stack[-1] < 0:
                out.append("\n")
            elif op == b"T*":
                out.append("\n")
            elif op == b"ET":
                out.append("\n")
            stack = []
        else:
            stack = [] if m.group("dict") else stack
    text = "".join(out)
    return "\n".join(line.rstrip() for line in text.split("\n") if line.strip())


def pdf_text(data: bytes) -> str:
    doc = Pdf(data)
    return "\n".join(doc.page_text(page, res) for page, res in doc.pages()).strip()


def pdf_pages(data: bytes) -> int:
    return len(Pdf(data).pages())
