"""Dump the desktop's accessibility tree as OSWorld's XML, pruned to what is visible, within a deadline.

Run as its own process (``python3 a11y.py SECONDS``) by the daemon, which
kills it at the deadline: an AT-SPI call can block for about 25 s, and a
process is the one thing that can always be stopped. Only nodes that are
showing and visible are kept (their subtrees are skipped otherwise), with
OSWorld's depth and width caps; a table contributes its showing cells only.
"""

from __future__ import annotations

import sys
import time
from xml.sax.saxutils import quoteattr

NS = {
    "st": "https://accessibility.ubuntu.example.org/ns/state",
    "attr": "https://accessibility.ubuntu.example.org/ns/attributes",
    "cp": "https://accessibility.ubuntu.example.org/ns/component",
    "txt": "https://accessibility.ubuntu.example.org/ns/text",
}
MAX_DEPTH = 50
MAX_WIDTH = 1024
MAX_TABLE_CELLS = 400
MAX_TEXT = 2000
_STATES = ("showing", "visible", "focused", "focusable", "enabled", "selected", "checked", "editable", "active")


def _tag(node) -> str:
    role = node.getRoleName() or "unknown"
    return role.replace(" ", "-")


def _node(pyatspi, node, depth: int, deadline: float, out: list[str]) -> None:
    if time.monotonic() > deadline or depth > MAX_DEPTH:
        return
    try:
        states = node.getState()
        showing = states.contains(pyatspi.STATE_SHOWING) and states.contains(pyatspi.STATE_VISIBLE)
        if depth > 1 and not showing:
            return
        attrs = [f"name={quoteattr(node.name or '')}"]
        for state in _STATES:
            if states.contains(getattr(pyatspi, f"STATE_{state.upper()}")):
                attrs.append(f'st:{state}="true"')
        try:
            comp = node.queryComponent()
            x, y = comp.getPosition(pyatspi.DESKTOP_COORDS)
            w, h = comp.getSize()
            attrs.append(f'cp:screencoord="({x}, {y})" cp:size="({w}, {h})"')
        except NotImplementedError:
            pass
        text = ""
        try:
            itext = node.queryText()
            text = itext.getText(0, min(itext.characterCount, MAX_TEXT))
        except NotImplementedError:
            pass
        tag = _tag(node)
        out.append(f"<{tag} {' '.join(attrs)}>{_escape(text)}")
        count = min(node.childCount, MAX_WIDTH)
        role = node.getRoleName()
        limit = MAX_TABLE_CELLS if role in ("table", "tree table") else count
        kept = 0
        for i in range(count):
            if kept >= limit or time.monotonic() > deadline:
                break
            child = node.getChildAtIndex(i)
            if child is not None:
                before = len(out)
                _node(pyatspi, child, depth + 1, deadline, out)
                kept += len(out) > before
        out.append(f"</{tag}>")
    except Exception:  # a node that vanished mid-walk: skip it, keep the rest
        return


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
    deadline = time.monotonic() + seconds
    import pyatspi

    out: list[str] = []
    desktop = pyatspi.Registry.getDesktop(0)
    for i in range(desktop.childCount):
        app = desktop.getChildAtIndex(i)
        if app is not None:
            _node(pyatspi, app, 1, deadline, out)
    ns = " ".join(f'xmlns:{k}="{v}"' for k, v in NS.items())
    partial = ' partial="true"' if time.monotonic() > deadline else ""
    sys.stdout.write(f"<desktop-frame {ns}{partial}>" + "".join(out) + "</desktop-frame>")


if __name__ == "__main__":
    main()
