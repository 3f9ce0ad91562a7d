"""A workbook's parts beyond cell values, read with zip + ElementTree: what ``compare_table``'s rules compare.

Sheet views (freeze panes, zoom), row attributes, data validations, cell
styles (font colour, fill), charts (through the sheet's drawing) and pivot
tables (with their cache's source). Each reader returns plain values shaped
like the ones OSWorld's openpyxl-based rules compare.
"""

from __future__ import annotations

import posixpath
import re
import zipfile
from xml.etree import ElementTree as ET

from evaluators.office import _MAIN, _PKG_REL, _REL, OfficeError, _cells, _open, _xml

_C = "{http://schemas.openxmlformats.org/drawingml/2006/chart}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
#: What ``styles``, ``charts`` and ``pivots`` can read (OSWorld's names).
STYLE_PROPS = ("font_color", "font_name", "font_bold", "font_italic", "font_size", "bgcolor", "fgcolor", "fill_type")
CHART_PROPS = ("type", "title", "direction", "legend", "xtitle", "ytitle")
PIVOT_PROPS = ("name", "location", "filter", "selection", "ordered", "col_fields", "row_fields", "data_fields", "data_fields_name")  # fmt: skip


def _rels(archive: zipfile.ZipFile, part: str) -> dict[str, str]:
    """A part's relationships: id -> target part path (absolute inside the zip)."""
    folder, name = posixpath.split(part)
    rels_name = posixpath.join(folder, "_rels", name + ".rels")
    if rels_name not in archive.namelist():
        return {}
    out = {}
    for rel in _xml(archive, rels_name).iter(f"{_PKG_REL}Relationship"):
        target = rel.get("Target", "")
        path = target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join(folder, target))
        out[rel.get("Id", "")] = path
    return out


def _truthy(value: str | None) -> bool:
    return value in ("1", "true")


class Workbook:
    """One XLSX file's sheets by name, opened once."""

    def __init__(self, data: bytes):
        self.archive = _open(data)
        wb_rels = _rels(self.archive, "xl/workbook.xml")
        self.sheets: list[tuple[str, str]] = [
            (s.get("name", ""), wb_rels.get(s.get(f"{_REL}id", ""), ""))
            for s in _xml(self.archive, "xl/workbook.xml").iter(f"{_MAIN}sheet")
        ]
        self._shared: list[str] | None = None

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.sheets]

    @property
    def active(self) -> str:
        """The sheet openpyxl's ``wb.active`` is: the first book view's ``activeTab``, 0 without one."""
        view = _xml(self.archive, "xl/workbook.xml").find(f"{_MAIN}bookViews/{_MAIN}workbookView")
        index = int(view.get("activeTab", "0")) if view is not None else 0
        if not 0 <= index < len(self.sheets):
            raise OfficeError(f"no sheet at the active tab {index}")
        return self.sheets[index][0]

    def cells(self, sheet: str) -> dict[str, object]:
        """Cells as openpyxl loads them without ``data_only``: a formula (``=...``) where there is one, else the value."""
        values, formulas = _cells(self.root(sheet), self.shared())
        return {**values, **formulas}

    def part(self, sheet: str) -> str:
        for name, path in self.sheets:
            if name == sheet:
                return path
        raise OfficeError(f"no sheet {sheet!r}")

    def root(self, sheet: str) -> ET.Element:
        return _xml(self.archive, self.part(sheet))

    def shared(self) -> list[str]:
        if self._shared is None:
            self._shared = []
            if "xl/sharedStrings.xml" in self.archive.namelist():
                for si in _xml(self.archive, "xl/sharedStrings.xml").iter(f"{_MAIN}si"):
                    self._shared.append("".join(t.text or "" for t in si.iter(f"{_MAIN}t")))
        return self._shared

    # -- sheet views and rows ---------------------------------------------------------

    def freeze_key(self, sheet: str) -> tuple:
        """Frozen panes by their split (scroll-independent); an unfrozen split keeps its top-left cell."""
        pane = self.root(sheet).find(f"{_MAIN}sheetViews/{_MAIN}sheetView/{_MAIN}pane")
        if pane is None:
            return ("none",)
        xs, ys = int(float(pane.get("xSplit", 0))), int(float(pane.get("ySplit", 0)))
        if pane.get("state", "").lower() in ("frozen", "frozensplit"):
            return ("frozen", xs, ys)
        return ("other", xs, ys, pane.get("topLeftCell"))

    def zoom(self, sheet: str) -> float:
        view = self.root(sheet).find(f"{_MAIN}sheetViews/{_MAIN}sheetView")
        scale = view.get("zoomScale") if view is not None else None
        return float(scale) if scale else 100.0

    def rows(self, sheet: str, props: list[str]) -> dict[int, dict[str, object]]:
        """Rows that carry attributes (as openpyxl's row dimensions), with the asked ones."""
        out: dict[int, dict[str, object]] = {}
        for row in self.root(sheet).iter(f"{_MAIN}row"):
            if not set(row.attrib) - {"r", "spans"}:
                continue
            attrs = {re.sub(r"(?<!^)(?=[A-Z])", "_", k).lower(): v for k, v in row.attrib.items()}
            attrs["height"] = attrs.get("ht")
            info: dict[str, object] = {}
            for prop in props:
                raw = attrs.get(prop)
                info[prop] = _truthy(raw) if prop in ("hidden", "collapsed", "custom_height") else raw
                if prop == "height" and raw is not None:
                    info[prop] = float(raw)
            out[int(row.get("r", "0"))] = info
        return out

    def data_validations(self, sheet: str) -> list[dict[str, object]]:
        """Each validation's attributes in openpyxl's names (``ranges`` from ``sqref``, ``formula1``...)."""
        found = []
        for dv in self.root(sheet).iter(f"{_MAIN}dataValidation"):
            item: dict[str, object] = {re.sub(r"(?<!^)(?=[A-Z])", "_", k).lower(): v for k, v in dv.attrib.items()}
            item["ranges"] = dv.get("sqref", "")
            item.setdefault("type", None)
            for child in ("formula1", "formula2"):
                node = dv.find(f"{_MAIN}{child}")
                item[child] = node.text if node is not None else None
            found.append(item)
        return found

    def merged(self, sheet: str, ref: str) -> bool:
        """openpyxl's ``isinstance(cell, MergedCell)``: inside a ``mergeCell`` range but not its top-left cell."""
        row, col = position(ref)
        for node in self.root(sheet).iter(f"{_MAIN}mergeCell"):
            for top, left, bottom, right in ranges(node.get("ref", "")):
                if top <= row <= bottom and left <= col <= right and (row, col) != (top, left):
                    return True
        return False

    # -- styles ---------------------------------------------------------------------------

    def styles(self, sheet: str, props: list[str]) -> dict[str, list[object]]:
        """Every cell of the used range: the asked style props (``font_color``, ``bgcolor``/``fgcolor``, ...)."""
        root = self.root(sheet)
        values, _ = _cells(root, self.shared())
        styled: dict[str, int] = {c.get("r", ""): int(c.get("s", "0")) for c in root.iter(f"{_MAIN}c")}
        xfs, fonts, fills = self._style_tables()
        out: dict[str, list[object]] = {}
        if not styled:
            return out
        coords = [position(ref) for ref in styled]
        rows, cols = [r for r, _ in coords], [c for _, c in coords]
        for col in range(min(cols), max(cols) + 1):
            for row in range(min(rows), max(rows) + 1):
                ref = f"{_letters(col)}{row}"
                xf = xfs[styled.get(ref, 0)] if styled.get(ref, 0) < len(xfs) else {}
                font = fonts[xf.get("font", 0)] if xf.get("font", 0) < len(fonts) else {}
                fill = fills[xf.get("fill", 0)] if xf.get("fill", 0) < len(fills) else {}
                has = ref in values
                cell = {
                    "font_color": font.get("color") if has else None,
                    "font_name": font.get("name") if has else None,
                    "font_bold": font.get("bold") if has else None,
                    "font_italic": font.get("italic") if has else None,
                    "font_size": font.get("size") if has else None,
                    "bgcolor": fill.get("fg", "00000000"),
                    "fgcolor": fill.get("fg", "00000000"),
                    "fill_type": fill.get("tag"),
                }
                unknown = [p for p in props if p not in cell]
                if unknown:
                    raise OfficeError(f"unsupported style {unknown[0]!r}")
                out[ref] = [cell[p] for p in props]
        return out

    def _style_tables(self) -> tuple[list[dict], list[dict], list[dict]]:
        if "xl/styles.xml" not in self.archive.namelist():
            return [], [], []
        root = _xml(self.archive, "xl/styles.xml")
        xfs = [
            {"font": int(x.get("fontId", 0)), "fill": int(x.get("fillId", 0))}
            for x in root.findall(f"{_MAIN}cellXfs/{_MAIN}xf")
        ]
        fonts = []
        for font in root.findall(f"{_MAIN}fonts/{_MAIN}font"):
            name, size, color = font.find(f"{_MAIN}name"), font.find(f"{_MAIN}sz"), font.find(f"{_MAIN}color")
            fonts.append(
                {
                    "name": name.get("val") if name is not None else None,
                    "size": float(size.get("val", 0)) if size is not None else None,
                    "bold": font.find(f"{_MAIN}b") is not None
                    and font.find(f"{_MAIN}b").get("val", "1") in ("1", "true"),  # type: ignore[union-attr]  # fmt: skip
                    "italic": font.find(f"{_MAIN}i") is not None
                    and font.find(f"{_MAIN}i").get("val", "1") in ("1", "true"),  # type: ignore[union-attr]  # fmt: skip
                    "color": _color(color),
                }
            )
        fills = []
        for fill in root.findall(f"{_MAIN}fills/{_MAIN}fill"):
            pattern = fill.find(f"{_MAIN}patternFill")
            fg = pattern.find(f"{_MAIN}fgColor") if pattern is not None else None
            tag = "patternFill" if pattern is not None else ("gradientFill" if len(fill) else None)
            fills.append({"fg": _color(fg) or "00000000", "tag": tag})
        return xfs, fonts, fills

    # -- drawings: charts; pivot tables ------------------------------------------------------

    def charts(self, sheet: str, props: list[str]) -> dict[str, dict[str, object]]:
        """Charts keyed by their series' data refs (``val,cat;...``), each with the asked props."""
        sheet_part = self.part(sheet)
        out: dict[str, dict[str, object]] = {}
        for rid_node in self.root(sheet).iter(f"{_MAIN}drawing"):
            drawing = _rels(self.archive, sheet_part).get(rid_node.get(f"{_REL}id", ""))
            if drawing is None:
                continue
            for chart_part in _rels(self.archive, drawing).values():
                if chart_part.startswith("xl/charts/chart"):
                    key, info = _chart(_xml(self.archive, chart_part), props)
                    out[key] = info
        return out

    def pivots(self, sheet: str, props: list[str]) -> dict[str, dict[str, object]]:
        """Pivot tables on the sheet keyed by their source (type, corners, sheet), as OSWorld compares them."""
        out: dict[str, dict[str, object]] = {}
        for part in _rels(self.archive, self.part(sheet)).values():
            if not part.startswith("xl/pivotTables/"):
                continue
            table = _xml(self.archive, part)
            cache_parts = [p for p in _rels(self.archive, part).values() if "pivotCacheDefinition" in p]
            if not cache_parts:
                continue
            key, info = _pivot(table, _xml(self.archive, cache_parts[0]), props)
            out[key] = info
        return out


def _color(node: ET.Element | None) -> str | None:
    if node is None:
        return None
    if node.get("rgb"):
        return node.get("rgb")
    for kind in ("theme", "indexed", "auto"):
        if node.get(kind) is not None:
            return f"{kind}:{node.get(kind)}"
    return None


def position(ref: str) -> tuple[int, int]:
    """A cell reference (``B3``, ``$B$3``) as (row, column), both from 1."""
    m = re.fullmatch(r"\$?([A-Z]+)\$?(\d+)", ref.upper())
    if not m:
        raise OfficeError(f"not a cell reference: {ref!r}")
    col = 0
    for ch in m.group(1):
        col = col * 26 + ord(ch) - 64
    return int(m.group(2)), col


def _letters(col: int) -> str:
    out = ""
    while col:
        col, rem = divmod(col - 1, 26)
        out = chr(65 + rem) + out
    return out


def ranges(text: str) -> list[tuple[int, int, int, int]]:
    """A space-separated multi-range (``A1:B3 D4``) as (min_row, min_col, max_row, max_col) boxes."""
    boxes = []
    for part in str(text).replace(",", " ").split():
        a, _, b = part.partition(":")
        (r1, c1), (r2, c2) = position(a), position(b or a)
        boxes.append((min(r1, r2), min(c1, c2), max(r1, r2), max(c1, c2)))
    return boxes


def ranges_within(inner: list[tuple[int, int, int, int]], outer: list[tuple[int, int, int, int]]) -> bool:
    """Every box of ``inner`` lies inside some box of ``outer`` (openpyxl's ``MultiCellRange`` containment)."""
    return all(any(o[0] <= i[0] and o[1] <= i[1] and i[2] <= o[2] and i[3] <= o[3] for o in outer) for i in inner)


def _ref_text(node: ET.Element | None) -> str:
    if node is None:
        return ""
    for kind in ("numRef", "strRef"):
        f = node.find(f"{_C}{kind}/{_C}f")
        if f is not None:
            return f.text or ""
    return ""


def _title(node: ET.Element | None) -> str | None:
    """The first run of the first paragraph of a rich title, as OSWorld reads it."""
    if node is None:
        return None
    para = node.find(f"{_C}tx/{_C}rich/{_A}p")
    run = para.find(f"{_A}r/{_A}t") if para is not None else None
    return run.text if run is not None else None


def _chart(space: ET.Element, props: list[str]) -> tuple[str, dict[str, object]]:
    chart = space.find(f"{_C}chart")
    plot = chart.find(f"{_C}plotArea") if chart is not None else None
    kinds = [c for c in (plot if plot is not None else []) if c.tag.endswith("Chart")]
    if chart is None or not kinds:
        raise OfficeError("a chart part without a chart")
    first = kinds[0]
    series = ";".join(
        f"{_ref_text(s.find(f'{_C}val'))},{_ref_text(s.find(f'{_C}cat'))}" for s in first.findall(f"{_C}ser")
    )
    info: dict[str, object] = {}
    for prop in props:
        if prop == "type":
            info["type"] = first.tag.split("}")[1]
        elif prop == "title":
            info["title"] = _title(chart.find(f"{_C}title"))
        elif prop == "direction":
            bar_dir = first.find(f"{_C}barDir")
            info["direction"] = bar_dir.get("val") if bar_dir is not None else None
        elif prop == "legend":
            pos = chart.find(f"{_C}legend/{_C}legendPos")
            info["legend"] = (pos.get("val", "r") if pos is not None else "r") if chart.find(f"{_C}legend") is not None else None  # fmt: skip
        elif prop in ("xtitle", "ytitle"):
            axes = [a for a in plot if a.tag in (f"{_C}catAx", f"{_C}valAx", f"{_C}dateAx")]  # type: ignore[union-attr]
            axis = axes[0 if prop == "xtitle" else 1] if len(axes) > (prop == "ytitle") else None
            info[prop] = _title(axis.find(f"{_C}title")) if axis is not None else None
        else:
            raise OfficeError(f"unsupported chart prop {prop!r}")
    return series, info


def _pivot(table: ET.Element, cache: ET.Element, props: list[str]) -> tuple[str, dict[str, object]]:
    raw = [
        [(item.get("h"), int(item.get("x"))) for item in field.iter(f"{_MAIN}item") if item.get("x") is not None]  # type: ignore[arg-type]
        for field in table.findall(f"{_MAIN}pivotFields/{_MAIN}pivotField")
    ]
    left = next((i for i, r in enumerate(raw) if r), len(raw))
    trimmed = raw[left:]
    right = next((i for i, r in enumerate(reversed(trimmed)) if r), len(trimmed))
    selection = trimmed[: len(trimmed) - right]
    source = cache.find(f"{_MAIN}cacheSource")
    ws = source.find(f"{_MAIN}worksheetSource") if source is not None else None
    if source is None or ws is None:
        raise OfficeError("a pivot cache without a worksheet source")
    a, _, b = ws.get("ref", "A1:A1").partition(":")
    (r1, c1), (r2, c2) = position(a), position(b or a)
    key = f"{source.get('type', 'worksheet')};{(r1, c1 + left)}:{(r2, c2 - right)};{ws.get('sheet')}"
    info: dict[str, object] = {}
    if "name" in props:
        info["name"] = table.get("name")
    if "location" in props:
        loc = table.find(f"{_MAIN}location")
        info["location"] = loc.get("ref") if loc is not None else None
    if "filter" in props or "selection" in props:
        info["selection"] = selection if "ordered" in props else [set(r) for r in selection]
    if "filter" in props:
        info["filter_fields"] = {int(f.get("fld", -1)) for f in table.iter(f"{_MAIN}pageField")}
    for prop, tag in (("col_fields", "colFields"), ("row_fields", "rowFields")):
        if prop in props:
            info[prop] = [int(f.get("x", 0)) - left for f in table.findall(f"{_MAIN}{tag}/{_MAIN}field")]
    if "data_fields" in props:
        named = "data_fields_name" in props
        info["data_fields"] = [
            f"{int(f.get('fld', 0)) - left};{f.get('name') if named else ''};{f.get('subtotal', 'sum')};{f.get('showDataAs', 'normal')}"  # fmt: skip
            for f in table.findall(f"{_MAIN}dataFields/{_MAIN}dataField")
        ]
    return key, info
