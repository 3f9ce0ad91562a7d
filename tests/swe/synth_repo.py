"""A small repository the synthesizer tests build for themselves: two modules, their tests, and a
test file that needs a package nobody installed (it fails on the clean tree and must be left out)."""

from __future__ import annotations

from pathlib import Path

FILES = {
    "minilib/__init__.py": "",
    "minilib/nums.py": '''"""Numbers."""


def clamp(value, low, high):
    """Limit value to [low, high]."""
    if value < low:
        return low
    if value > high:
        return high
    return value


def mean(values):
    if not values:
        raise ValueError("mean of nothing")
    return sum(values) / len(values)


def window(items, size):
    return [items[i : i + size] for i in range(0, len(items) - size + 1)]
''',
    "minilib/text.py": '''"""Text."""


def shout(text, times=1):
    return (text.upper() + "!") * times


def initials(name, sep=""):
    parts = [part[0] for part in name.split() if part]
    return sep.join(parts)
''',
    "tests/__init__.py": "",
    "tests/test_nums.py": """import pytest

from minilib.nums import clamp, mean, window


def test_clamp_low():
    assert clamp(-5, 0, 10) == 0


def test_clamp_high():
    assert clamp(50, 0, 10) == 10


def test_clamp_inside():
    value = 7
    assert clamp(value, 0, 10) == 7


def test_mean():
    assert mean([1, 2, 3, 6]) == 3


def test_mean_empty():
    with pytest.raises(ValueError):
        mean([])


def test_window():
    assert window([1, 2, 3, 4], 2) == [[1, 2], [2, 3], [3, 4]]
""",
    "tests/test_text.py": """from minilib.text import initials, shout


def test_shout():
    assert shout("hi") == "HI!"


def test_shout_twice():
    assert shout("a", 2) == "A!A!"


def test_initials():
    assert initials("Ada Lovelace") == "AL"


def test_initials_sep():
    assert initials("Ada Lovelace", ".") == "A.L"
""",
    "tests/test_needs_pkg.py": """import not_an_installed_package


def test_uses_it():
    assert not_an_installed_package.ok()
""",
}


def make_repo(root: Path) -> Path:
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root
