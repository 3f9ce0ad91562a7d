"""Source mutations for the bug synthesizer: small, plausible bugs in one function.

A mutation edits the source text only where the bug is (an operator token,
a literal, an operand, a statement's lines), so the rest of the file stays
byte-identical and the diff shows nothing a person would not have typed: no
re-printed expressions, no added parentheses. Every edit is checked by
parsing the result and comparing the function's AST with the intended one;
an edit that would parse differently (precedence, a comment in the way) is
dropped. Operators (``category``): comparison flips, arithmetic swaps,
``and``/``or`` swaps, off-by-one integers (slices and indices included),
dropped conditions, removed ``if`` branches, swapped call arguments and
wrong return values.
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass

from agentenvs.core.pyparse import parse_module

CMP_TEXT: dict[type, str] = {
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Is: "is",
    ast.IsNot: "is not",
}
CMP_SWAPS: dict[type, tuple[type, ...]] = {
    ast.Lt: (ast.LtE, ast.Gt),
    ast.LtE: (ast.Lt,),
    ast.Gt: (ast.GtE, ast.Lt),
    ast.GtE: (ast.Gt,),
    ast.Eq: (ast.NotEq,),
    ast.NotEq: (ast.Eq,),
    ast.In: (ast.NotIn,),
    ast.NotIn: (ast.In,),
    ast.Is: (ast.IsNot,),
    ast.IsNot: (ast.Is,),
}
BINOP_TEXT: dict[type, str] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
}
BINOP_SWAPS: dict[type, tuple[type, ...]] = {
    ast.Add: (ast.Sub,),
    ast.Sub: (ast.Add,),
    ast.Mult: (ast.FloorDiv, ast.Add),
    ast.Div: (ast.Mult, ast.FloorDiv),
    ast.FloorDiv: (ast.Div, ast.Mult),
    ast.Mod: (ast.FloorDiv,),
    ast.Pow: (ast.Mult,),
}
#: Calls whose swapped arguments raise at once (a TypeError), which is no puzzle.
NO_SWAP = frozenset({"isinstance", "issubclass", "getattr", "setattr", "hasattr", "delattr", "super", "print"})
CATEGORIES = (
    "compare",
    "binop",
    "boolop",
    "off-by-one",
    "drop-condition",
    "drop-branch",
    "swap-args",
    "wrong-return",
)


@dataclass(frozen=True)
class Edit:
    """Replace ``text[start:end]`` with ``replacement``."""

    start: int
    end: int
    replacement: str

    def apply(self, text: str) -> str:
        return text[: self.start] + self.replacement + text[self.end :]


@dataclass(frozen=True)
class Mutation:
    """One bug: where it is, what kind, the edit and the mutated file text."""

    path: str
    function: str
    line: int
    category: str
    kind: str
    site: str  # the mutated node's span: mutants of one site stand in as wrong fixes for each other
    edit: Edit
    source: str

    @property
    def key(self) -> str:
        """Stable across processes (a resumed run skips what an earlier one tried)."""
        return hashlib.sha256(f"{self.path}\0{self.source}".encode()).hexdigest()[:16]


def _offsets(text: str) -> list[int]:
    starts, total = [0], 0
    for line in text.splitlines(keepends=True):
        total += len(line)
        starts.append(total)
    return starts


class _Source:
    """A module's text with AST positions turned into string offsets (ast columns are UTF-8 bytes)."""

    def __init__(self, text: str):
        self.text = text
        self.starts = _offsets(text)

    def pos(self, line: int, col: int) -> int:
        line_text = self.text[self.starts[line - 1] : self.starts[line]]
        return self.starts[line - 1] + len(line_text.encode("utf-8")[:col].decode("utf-8", "replace"))

    def span(self, node: ast.AST) -> tuple[int, int]:
        return (
            self.pos(node.lineno, node.col_offset),  # type: ignore[attr-defined]
            self.pos(node.end_lineno, node.end_col_offset),  # type: ignore[attr-defined]
        )

    def segment(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.text[start:end]

    def whole_lines(self, stmt: ast.stmt) -> tuple[int, int] | None:
        """The span of the lines ``stmt`` occupies, if nothing else shares them."""
        start, end = self.span(stmt)
        line_start, line_end = self.starts[stmt.lineno - 1], self.starts[stmt.end_lineno]  # type: ignore[index]
        before, after = self.text[line_start:start], self.text[end:line_end]
        if before.strip() or (after.strip() and not after.strip().startswith("#")):
            return None
        return line_start, line_end


def _token_edit(src: _Source, start: int, end: int, old: str, new: str) -> Edit | None:
    """Replace the one occurrence of the operator ``old`` between two operands."""
    gap = src.text[start:end]
    if old[0].isalpha():
        pattern = r"\b" + r"\s+".join(old.split()) + r"\b"
        if old == "in":
            pattern = r"(?<!not )\bin\b"
        elif old == "is":
            pattern = r"\bis\b(?!\s+not\b)"
    else:
        pattern = r"(?<![<>=!*/+%-])" + re.escape(old) + r"(?![<>=*/])"
    found = [m for m in re.finditer(pattern, gap)]
    if len(found) != 1:
        return None
    m = found[0]
    return Edit(start + m.start(), start + m.end(), new)


def _expression_edits(node: ast.expr, src: _Source) -> Iterator[tuple[str, str, ast.expr, Edit | None]]:
    """(category, kind, the intended new node, the text edit) for each variant of one expression."""
    if isinstance(node, ast.BinOp) and type(node.op) in BINOP_TEXT:
        gap = (src.span(node.left)[1], src.span(node.right)[0])
        for new in BINOP_SWAPS.get(type(node.op), ()):
            edit = _token_edit(src, *gap, BINOP_TEXT[type(node.op)], BINOP_TEXT[new])
            yield "binop", f"{type(node.op).__name__}->{new.__name__}", ast.BinOp(node.left, new(), node.right), edit
    elif isinstance(node, ast.Compare) and len(node.ops) == 1:
        gap = (src.span(node.left)[1], src.span(node.comparators[0])[0])
        old = type(node.ops[0])
        for new in CMP_SWAPS.get(old, ()):
            edit = _token_edit(src, *gap, CMP_TEXT[old], CMP_TEXT[new])
            yield "compare", f"{old.__name__}->{new.__name__}", ast.Compare(node.left, [new()], node.comparators), edit
    elif isinstance(node, ast.BoolOp) and len(node.values) == 2:
        other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        old_word, new_word = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
        gap = (src.span(node.values[0])[1], src.span(node.values[1])[0])
        yield (
            "boolop",
            f"{old_word}->{new_word}",
            ast.BoolOp(other, node.values),
            _token_edit(src, *gap, old_word, new_word),
        )
        start, end = src.span(node)
        for i, kept in enumerate(node.values):
            yield "drop-condition", f"drop operand {1 - i}", kept, Edit(start, end, src.segment(kept))
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        start, end = src.span(node)
        yield "drop-condition", "drop not", node.operand, Edit(start, end, src.segment(node.operand))
    elif isinstance(node, ast.Constant) and type(node.value) is int and 0 <= node.value <= 16:
        start, end = src.span(node)
        if src.text[start:end] != str(node.value):
            return  # 0x10, 1_0: not worth spelling differently
        yield "off-by-one", "+1", ast.Constant(node.value + 1), Edit(start, end, str(node.value + 1))
        if node.value > 0:
            yield "off-by-one", "-1", ast.Constant(node.value - 1), Edit(start, end, str(node.value - 1))
    elif (
        isinstance(node, ast.Call)
        and len(node.args) >= 2
        and not any(isinstance(a, ast.Starred) for a in node.args)
        and not (isinstance(node.func, ast.Name) and node.func.id in NO_SWAP)
    ):
        first, second = node.args[0], node.args[1]
        a, b = src.segment(first), src.segment(second)
        if a != b and "\n" not in a + b:
            (s1, e1), (s2, e2) = src.span(first), src.span(second)
            new = ast.Call(node.func, [second, first, *node.args[2:]], node.keywords)
            yield "swap-args", "swap arguments 1 and 2", new, Edit(s1, e2, b + src.text[e1:s2] + a)


NUMERIC_PARENTS = (ast.Compare, ast.BinOp, ast.Subscript, ast.Slice, ast.Call, ast.UnaryOp, ast.Return)


def _params(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    args = func.args
    return [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs) if a.arg not in ("self", "cls")]


def _return_edits(
    stmt: ast.Return, func: ast.FunctionDef | ast.AsyncFunctionDef, src: _Source
) -> Iterator[tuple[str, ast.expr]]:
    """A wrong value returned: the other boolean, or another of the function's parameters."""
    value = stmt.value
    if isinstance(value, ast.Constant) and isinstance(value.value, bool):
        yield str(not value.value), ast.Constant(not value.value)
    elif isinstance(value, ast.Name):
        other = next((p for p in _params(func) if p != value.id), None)
        if other is not None:
            yield other, ast.Name(other, ast.Load())


@dataclass
class _Site:
    """Where a node hangs in its function, so the intended AST can be built by swapping it in."""

    parent: ast.AST
    field: str
    index: int | None


def _sites(func: ast.AST) -> dict[int, _Site]:
    sites: dict[int, _Site] = {}
    for parent in ast.walk(func):
        for field, value in ast.iter_fields(parent):
            if isinstance(value, list):
                for i, child in enumerate(value):
                    if isinstance(child, ast.AST):
                        sites[id(child)] = _Site(parent, field, i)
            elif isinstance(value, ast.AST):
                sites[id(value)] = _Site(parent, field, None)
    return sites


def _intended_dump(func: ast.AST, site: _Site, new: ast.AST | None) -> str:
    """The function's AST dump with the node at ``site`` replaced (``None``: the statement removed)."""
    holder = getattr(site.parent, site.field)
    old = holder[site.index] if site.index is not None else holder
    if site.index is None:
        setattr(site.parent, site.field, new)
    elif new is None:
        holder.pop(site.index)
    else:
        holder[site.index] = new
    try:
        return ast.dump(func)
    finally:
        if site.index is None:
            setattr(site.parent, site.field, old)
        elif new is None:
            holder.insert(site.index, old)
        else:
            holder[site.index] = old


def _functions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [f for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]


def function_mutations(path: str, text: str) -> list[Mutation]:
    """Every mutation of every function in one module, each verified to parse as intended."""
    try:
        tree = parse_module(text)
    except SyntaxError:
        return []
    src = _Source(text)
    out: list[Mutation] = []
    for func in _functions(tree):
        sites = _sites(func)
        candidates: list[tuple[ast.AST, str, str, ast.AST | None, Edit | None]] = []
        for node in _own_nodes(func):
            if isinstance(node, ast.expr) and not _inside_fstring(node, sites):
                if isinstance(node, ast.Constant) and not isinstance(sites[id(node)].parent, NUMERIC_PARENTS):
                    continue
                for category, kind, new, edit in _expression_edits(node, src):
                    candidates.append((node, category, kind, new, edit))
            elif isinstance(node, ast.Return) and node.value is not None:
                start, end = src.span(node.value)
                for spelled, new_value in _return_edits(node, func, src):
                    candidates.append(
                        (node, "wrong-return", f"return {spelled}", ast.Return(new_value), Edit(start, end, spelled))
                    )
            elif isinstance(node, ast.If) and not node.orelse:
                body = getattr(sites[id(node)].parent, sites[id(node)].field)
                lines = src.whole_lines(node)
                if lines is not None and len(body) > 1:
                    candidates.append((node, "drop-branch", "remove if", None, Edit(*lines, "")))
        region = _region(func, src)
        for node, category, kind, new, edit in candidates:
            if edit is None or not region[0] <= edit.start <= edit.end <= region[1]:
                continue
            shifted = Edit(edit.start - region[0], edit.end - region[0], edit.replacement)
            if not _parses_as(shifted.apply(text[region[0] : region[1]]), _intended_dump(func, sites[id(node)], new)):
                continue
            start, end = src.span(node)
            line = node.lineno  # type: ignore[attr-defined]
            site = f"{path}:{start}:{end}"
            out.append(Mutation(path, func.name, line, category, f"{category} {kind}", site, edit, edit.apply(text)))
    return out


def _region(func: ast.FunctionDef | ast.AsyncFunctionDef, src: _Source) -> tuple[int, int]:
    """The whole lines of a function, decorators included."""
    first = min([func.lineno, *(d.lineno for d in func.decorator_list)])
    return src.starts[first - 1], src.starts[func.end_lineno]  # type: ignore[index]


def _own_nodes(func: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``func`` that are not inside a nested function or lambda (those are mutated on their own)."""
    stack = list(ast.iter_child_nodes(func))
    while stack:
        node = stack.pop(0)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def _inside_fstring(node: ast.AST, sites: dict[int, _Site]) -> bool:
    current: ast.AST | None = node
    while current is not None and id(current) in sites:
        if isinstance(current, ast.JoinedStr):
            return True
        current = sites[id(current)].parent
    return False


def _parses_as(region: str, intended: str) -> bool:
    """Whether a function's mutated lines parse to the intended AST (parsing only the function is fast)."""
    indented = region[:1].isspace()
    try:
        tree = parse_module("if 1:\n" + region if indented else region)
    except (SyntaxError, ValueError):
        return False
    body = tree.body[0].body if indented else tree.body  # type: ignore[attr-defined]
    return len(body) == 1 and ast.dump(body[0]) == intended
