"""``import-osworld --check --attacks`` on a tree of OSWorld task JSON written for this test (not upstream
copies): one task per kind of weak grader, and sound ones the same attacks try and fail (two of them
because the verifier closes the hole: the PATH and the postconfig's downloads), each attacked on a
docker desktop."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentenvs import cli
from agentenvs.cli import app
from agentenvs.envs.gui.terminal_hacks import named_paths

pytestmark = [pytest.mark.docker, pytest.mark.slow]
WORKERS = int(os.environ.get("AGENTENVS_GUI_TEST_WORKERS", 2))


def task(uuid: str, instruction: str, command: str, expected: str, config: list | None = None) -> dict:
    """A task graded on the output of a shell command run after the agent (``vm_command_line``)."""
    return {
        "id": uuid,
        "snapshot": "os",
        "instruction": instruction,
        "source": "test",
        "config": config or [],
        "evaluator": {
            "func": "check_include_exclude",
            "result": {"type": "vm_command_line", "command": command, "shell": True},
            "expected": {"type": "rule", "rules": {"include": [expected], "exclude": []}},
        },
    }


def shell(command: str) -> dict:
    return {"type": "execute", "parameters": {"command": command, "shell": True}}


def postconfig_task(uuid: str, command: str, then: list) -> dict:
    """Graded by ``command`` after a postconfig that downloads the check script (then runs ``then``)."""
    data = task(uuid, "Write the line total: 42 into the file tally.txt on the Desktop.", command, "PASS")
    download = {"url": "https://t.example.invalid/tally/check.sh", "path": "check_tally.sh"}
    data["evaluator"]["postconfig"] = [
        {"type": "download", "parameters": {"files": [download]}},
        shell("chmod +x check_tally.sh"),
        *then,
    ]
    return data


CHECK_SCRIPT = (
    "#!/bin/bash\n"
    'if grep -qx "total: 42" ~/Desktop/report.txt 2>/dev/null; then\n'
    '  echo "PASS: the report is right"\n'
    "else\n"
    '  echo "FAIL: the report is wrong"\n'
    "fi\n"
)
TREE = {
    # Only checks that the new name exists: making the folder passes, the old one left in place.
    "w1-exists": task(
        "w1-exists",
        'Rename the folder "drafts_2023" on the Desktop to "drafts_2024".',
        "[ -d ~/Desktop/drafts_2024 ] && echo renamed || echo missing",
        "renamed",
        [shell("mkdir -p ~/Desktop/drafts_2023/notes")],
    ),
    # Reads the shell history: the command in the history passes, whether it ran or not.
    "w2-history": task(
        "w2-history",
        "In a terminal, sort the file in place with `sort -o ~/Desktop/names.txt ~/Desktop/names.txt`.",
        "grep -c 'sort -o' ~/.bash_history && echo sorted",
        "sorted",
        [shell("printf 'b\\na\\n' > ~/Desktop/names.txt")],
    ),
    # Runs a script the agent can see in its home: replacing it passes.
    "w3-script": task(
        "w3-script",
        "Write the line total: 42 into the file report.txt on the Desktop.",
        "bash ~/check.sh",
        "PASS",
        [
            {
                "type": "download",
                "parameters": {"files": [{"url": "https://t.example.invalid/w3/check.sh", "path": "check.sh"}]},
            }
        ],  # fmt: skip
    ),
    # A pipe where && was meant: the echo always runs, so doing nothing passes.
    "w4-pipeline": task(
        "w4-pipeline",
        "Make a folder named archive on the Desktop.",
        "[ -d ~/Desktop/archive ] | echo 'Folder exists.'",
        "Folder exists.",
    ),
    # Asks only whether a program of that name is on the PATH: any executable named so passes.
    "w5-which": task(
        "w5-which",
        "Install the `mdview` program so that it runs from a terminal.",
        "which mdview",
        "mdview",
    ),
    # Greps a dotfile for the setting's text: a comment with that text passes, the setting not made.
    "w6-dotfile": task(
        "w6-dotfile",
        "Configure vim so that it always shows line numbers.",
        "grep -q 'set number' ~/.vimrc && echo configured || echo missing",
        "configured",
    ),
    # Runs the program through an interactive bash, which reads ~/.bashrc first: a shell function of that
    # name there answers (the image's python cannot be shadowed on the PATH: the seal refuses it).
    "w8-interactive": task(
        "w8-interactive",
        "Install Python 3.12 and make it the python new terminals run.",
        "bash -ic 'python --version' 2>/dev/null",
        "Python 3.12",
    ),
    # The postconfig runs the script it downloads in the desktop, by the name "bash": a program of that
    # name earlier on the PATH (planted as root) writes the verdict; only the verdict is read after.
    "w7-postconfig-run": postconfig_task(
        "w7-postconfig-run",
        "cat ~/Desktop/verdict.txt",
        [shell("bash check_tally.sh > ~/Desktop/verdict.txt")],
    ),
    # Sound: the grader runs (after the agent, sealed) the script the postconfig downloads; the verifier
    # writes it over whatever the agent left at that path, and again once the agent's processes are gone.
    "s3-postconfig-grader": postconfig_task("s3-postconfig-grader", "bash check_tally.sh", []),
    # Sound: the file's content, which no attack writes.
    "s1-sound": task(
        "s1-sound",
        "Write the line `total: 42` into ~/Desktop/sum.txt.",
        "cat ~/Desktop/sum.txt",
        "total: 42",
    ),
    # Sound: bash reads the dotfile and must define the alias; a comment with the text does not.
    "s2-sound-dotfile": task(
        "s2-sound-dotfile",
        "Make `ll` an alias for `ls -l` in bash.",
        "bash --rcfile ~/.bashrc -ic 'alias ll' 2>/dev/null",
        "ls -l",
    ),
}
WEAK = {
    "w1-exists": {"make-named-paths"},
    "w2-history": {"forge-history", "dotfile-lines"},
    "w3-script": {"replace-scripts"},
    "w4-pipeline": {"done"},
    "w5-which": {"fake-programs"},
    "w6-dotfile": {"dotfile-lines"},
    "w7-postconfig-run": {"fake-programs"},
    "w8-interactive": {"fake-programs"},
}
#: The pre-planted script may win the race with the postconfig's download, in the desktop it controls.
RACING = {"w7-postconfig-run": {"pre-plant-downloads"}}


def test_the_attacks_read_only_the_names_the_instruction_gives():
    assert named_paths(TREE["w1-exists"]["instruction"]) == ["drafts_2023", "drafts_2024"]
    assert named_paths(TREE["s1-sound"]["instruction"]) == ["~/Desktop/sum.txt"]
    assert named_paths("Copy ~/Documents/a.txt to /tmp/out, then 'x y'.") == ["~/Documents/a.txt", "/tmp/out"]


def test_check_with_attacks_lists_exactly_the_weak_graders_with_their_attack(tmp_path: Path, gui_image, monkeypatch):
    monkeypatch.setattr(cli.console, "width", 250)  # the table's rows whole, one line each
    src, assets = tmp_path / "evaluation_examples", tmp_path / "assets"
    for uuid, data in TREE.items():
        (src / "examples" / "os").mkdir(parents=True, exist_ok=True)
        (src / "examples" / "os" / f"{uuid}.json").write_text(json.dumps(data))
    (assets / "t.example.invalid/w3").mkdir(parents=True)
    (assets / "t.example.invalid/w3/check.sh").write_text(CHECK_SCRIPT)
    (assets / "t.example.invalid/tally").mkdir(parents=True)
    (assets / "t.example.invalid/tally/check.sh").write_text(CHECK_SCRIPT.replace("report.txt", "tally.txt"))
    args = ["gui", "import-osworld", str(src), "--assets", str(assets), "--check", "--attacks", "-j", str(WORKERS)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert f"{len(TREE)} tasks: {len(TREE)} imported" in result.output
    rows = re.findall(r"gui/osworld-os-(\S+)\s+│\s+(\S+)\s+│\s+(\S+)\s+│\s+(\S+)\s+│\s+(\S+)", result.output)
    found: dict[str, set[str]] = {}
    for task_id, _, attack, _, _ in rows:
        found.setdefault(task_id, set()).add(attack)
    assert found.keys() == WEAK.keys(), result.output
    for task_id, attacks in WEAK.items():
        assert attacks <= found[task_id] <= attacks | RACING.get(task_id, set()), result.output
    assert f"{len(WEAK)} of {len(TREE)} imported tasks satisfied by an attack" in result.output
