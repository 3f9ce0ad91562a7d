"""What the weak-grader attacks read from a grader (``grader_text``), on task JSON written for this test."""

from __future__ import annotations

import re

import pytest

from agentenvs.envs.gui import grader_text


def graded(command: object, wanted: dict, postconfig: list | None = None, instruction: str = "") -> dict:
    return {
        "instruction": instruction,
        "evaluator": {
            "func": "check_include_exclude",
            "postconfig": postconfig or [],
            "result": {"type": "vm_command_line", "command": command, "shell": True},
            "expected": {"type": "rule", "rules": wanted},
        },
    }


def test_programs_are_the_commands_run_and_looked_for_not_builtins_quoted_text_or_key_presses():
    ctrl_s = {"type": "execute", "parameters": {"command": ["python", "-c", "import pyautogui; pyautogui.hotkey('ctrl', 's')"]}}  # fmt: skip
    data = graded(
        "X=1; which mdview && command -v tidy | grep -c 'a; b' || echo no; ok=$(/usr/bin/stat -c %a f)",
        {"include": ["mdview"]},
        [ctrl_s, {"type": "execute", "parameters": {"command": ["bash", "-c", "bash check.sh > out"]}}],
        "Please install the viewer, then install Tidy.",
    )
    names = grader_text.program_names(data)
    assert names == ["mdview", "tidy", "which", "grep", "stat", "bash", "viewer"]
    assert grader_text.wanted_text(data) == ["mdview"]


def test_a_shell_the_grader_starts_on_a_quoted_command_is_read_too():
    data = graded("bash -ic 'conda --version' 2>/dev/null", {"include": ["conda"]})
    assert grader_text.program_names(data) == ["bash", "conda"]


def test_dotfiles_are_those_the_grader_names_or_the_usual_ones():
    assert grader_text.dotfiles(graded("grep -q 'x' ~/.bashrc; cat /home/user/.config/app/rc", {})) == [
        ".bashrc",
        ".config/app/rc",
    ]
    assert grader_text.dotfiles(graded("bash eval.sh", {})) == grader_text.USUAL_DOTFILES


@pytest.mark.parametrize(
    ("pattern", "flags"),
    [
        ("conda initialize", ""),
        ("[k]ill", ""),
        (r"\(soffice\|libreoffice\).\+--convert-to\s\+csv", ""),
        (r"^[[:space:]]Volume:", ""),
        (r"openjdk-\d+-(jre|jdk)", "-E"),
        ("a.b(c", "-F"),
    ],
)
def test_each_grep_pattern_gets_a_line_grep_matches(pattern: str, flags: str):
    data = graded(f"cat ~/.bash_history | grep {flags} '{pattern}'", {})
    [line] = grader_text.grep_lines(data)
    if flags == "-F":
        assert pattern in line
    else:
        extended = flags == "-E"
        regex = pattern.replace("[[:space:]]", r"\s")
        if not extended:
            regex = re.sub(r"\\([(){}|+?])|([(){}|+?])", lambda m: m[1] or "\\" + m[2], regex)
        assert re.search(regex, line), line


def test_postconfig_downloads_and_results_are_absolute_paths():
    step = {"type": "download", "parameters": {"files": [{"url": "https://x.invalid/e.sh", "path": "eval.sh"}]}}
    data = graded("bash eval.sh", {"include": ["ok\n"]}, [step])
    data["evaluator"]["result"] = {"type": "vm_file", "path": "Desktop/a.xlsx"}
    assert grader_text.postconfig_downloads(data) == ["/home/user/eval.sh"]
    assert grader_text.result_files(data) == ["/home/user/Desktop/a.xlsx"]
    assert grader_text.wanted_text(data) == ["ok"]
