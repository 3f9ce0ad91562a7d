"""pyautogui as the agent's code runs it: no pauses, no fail-safe, and typing that types what it says.

Fixes, each a known pyautogui bug on X11: ``write('<')`` typed ``>`` (the
``less`` keysym sits on the 102nd key, whose shifted symbol is ``>``), so
``<`` and ``>`` are pressed as shift+comma and shift+period; characters
pyautogui has no key for (accents, CJK) were dropped silently, so such text
goes through ``xdotool type``. ``reconnect`` gives a forked child its own X
connection (sharing the parent's would corrupt both).
"""

from __future__ import annotations

import os
import subprocess
from typing import Any


def load() -> Any:
    """Import and configure pyautogui (DISPLAY must be set)."""
    import pyautogui

    pyautogui.PAUSE = 0
    pyautogui.FAILSAFE = False
    pyautogui.MINIMUM_DURATION = 0
    return pyautogui


def reconnect(pyautogui: Any) -> None:
    """Open a fresh X connection for this process and repair the key map on it."""
    from pyautogui import _pyautogui_x11 as x11
    from Xlib import XK
    from Xlib.display import Display

    x11._display = Display(os.environ["DISPLAY"])
    mapping = x11.keyboardMapping
    for char, keysym in (("<", "comma"), (">", "period")):
        code = x11._display.keysym_to_keycode(XK.string_to_keysym(keysym))
        if code:
            mapping[char] = code
    original = pyautogui.write

    def write(message: Any, interval: float = 0.0, *args: Any, **kwargs: Any) -> None:
        if not isinstance(message, str) or all(c in mapping or c in "\n\t" for c in message):
            original(message, interval, *args, **kwargs)
            return
        x11._display.sync()
        delay = str(int(max(interval, 0.0) * 1000))
        for i, line in enumerate(message.split("\n")):  # xdotool drops a newline typed last
            if i:
                original("\n")
                x11._display.sync()
            if line:
                subprocess.run(["xdotool", "type", "--delay", delay, "--", line], check=False, timeout=120)

    pyautogui.write = pyautogui.typewrite = write
