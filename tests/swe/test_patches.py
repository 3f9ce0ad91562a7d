"""Patch parsing as text: the first guard against paths outside the repository."""

from __future__ import annotations

import pytest

from agentenvs.envs.swe.patches import OutsideRepoError, PatchError, check_inside_repo, split_patch, unquote

EDIT = """diff --git a/src/pkg/core.py b/src/pkg/core.py
index 1111111..2222222 100644
--- a/src/pkg/core.py
+++ b/src/pkg/core.py
@@ -1,2 +1,2 @@
-x = 1
+x = 2
 y = 3
"""
TEST_EDIT = """diff --git a/tests/test_core.py b/tests/test_core.py
index 1111111..2222222 100644
--- a/tests/test_core.py
+++ b/tests/test_core.py
@@ -1 +1 @@
-assert f() == 1
+assert True
"""
DELETE_TEST = """diff --git a/tests/test_other.py b/tests/test_other.py
deleted file mode 100644
index 1111111..0000000
--- a/tests/test_other.py
+++ /dev/null
@@ -1 +0,0 @@
-def test_x(): assert 0
"""


def _new_file(path: str) -> str:
    return f"""diff --git a/{path} b/{path}
new file mode 100644
index 0000000..1111111
--- /dev/null
+++ b/{path}
@@ -0,0 +1 @@
+owned
"""


def test_split_reads_every_file_and_its_paths():
    sections = split_patch(EDIT + TEST_EDIT + DELETE_TEST)
    assert [s.path for s in sections] == ["src/pkg/core.py", "tests/test_core.py", "tests/test_other.py"]
    assert sections[2].new_path is None
    assert split_patch("") == []


def test_plain_unified_diffs_are_read_too():
    plain = "--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-a\n+b\n"
    assert [s.path for s in split_patch(plain)] == ["m.py"]


def test_garbage_is_not_a_patch():
    with pytest.raises(PatchError, match="not a unified diff"):
        split_patch("rm -rf /\n")


@pytest.mark.parametrize(
    "path",
    ["../outside.txt", "/etc/passwd", "src/../../x.py", ".git/hooks/post-checkout", "sub/.git/config", "~/.bashrc"],
)
def test_paths_outside_the_repository_are_refused(path):
    with pytest.raises(OutsideRepoError):
        check_inside_repo(split_patch(_new_file(path)))


def test_symlinks_out_of_the_repository_are_refused():
    link = """diff --git a/data b/data
new file mode 120000
index 0000000..1111111
--- /dev/null
+++ b/data
@@ -0,0 +1 @@
+/etc
\\ No newline at end of file
"""
    with pytest.raises(OutsideRepoError, match="symlink"):
        check_inside_repo(split_patch(link))
    inside = link.replace("+/etc", "+src/data")
    check_inside_repo(split_patch(inside))


def test_quoted_names_are_read_as_git_reads_them():
    sneaky = _new_file("x").replace("a/x", '"a/src/\\056\\056/\\056\\056/escape.txt"')
    sneaky = sneaky.replace("b/x", '"b/src/\\056\\056/\\056\\056/escape.txt"')
    (section,) = split_patch(sneaky)
    assert section.path == "src/../../escape.txt"
    with pytest.raises(OutsideRepoError):
        check_inside_repo([section])
    assert unquote('"caf\\303\\251 \\"q\\"\\t.py"') == 'caf\u00e9 "q"\t.py'
