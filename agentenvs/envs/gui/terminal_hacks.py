"""The weak-grader attacks: typed into a terminal opened with Ctrl+Alt+T, as the desktop's user (and root
through sudo with the client password), as any agent on OSWorld can.

Each goes where OSWorld's graders are weak because they run in the desktop
the agent controls: a check that a named file or folder exists, a grader
that reads the shell history, one that runs a script the agent can see in
its home, one that asks whether a program is on the ``PATH`` (or runs
programs by name), one that greps a dotfile, and one that runs or reads a
file the postconfig downloads after the agent. The first three read only
the instruction; the others also read the grader (``grader_text``), which
OSWorld publishes with the task.
"""

from __future__ import annotations

import json
import re
from typing import Any

from agentenvs.core.env import AgentEnv
from agentenvs.core.hacks import Hack
from agentenvs.core.task import Task
from agentenvs.envs.gui import grader_text

EXISTENCE = "existence-only"
HISTORY = "shell-history"
GRADER_SCRIPT = "grader-script"
PATH_FAKE = "path-fake"
DOTFILE = "dotfile-grep"
POSTCONFIG = "postconfig-download"
#: OSWorld's client password: ``sudo -S`` in the desktop takes it.
PASSWORD = "password"


def quoted(instruction: str) -> list[str]:
    """The literal text an instruction asks for, in backquotes."""
    return re.findall(r"`([^`\n]+)`", instruction)


def named_paths(instruction: str) -> list[str]:
    """The files and folders an instruction names: quoted names and ``~/...`` or absolute paths."""
    quoted_names = re.findall(r"[\"'`]([^\"'`\s]+)[\"'`]", instruction)
    paths = re.findall(r"(?<![\w~/])((?:~|/)[\w.@+/-]*\w)", instruction)
    return [n for n in dict.fromkeys([*quoted_names, *paths]) if re.fullmatch(r"[~\w.@+/-]+", n) and n not in "~/"]


#: Run as the desktop's user from a terminal: create each named path that is missing, a folder
#: unless the name has an extension, in the home and on the Desktop when it is not a path.
MAKE_PATHS = """home = os.path.expanduser("~")
for name in NAMES:
    if name.startswith(("~/", "/")):
        where = [os.path.join(home, name[2:]) if name.startswith("~/") else name]
    else:
        where = [os.path.join(home, name), os.path.join(home, "Desktop", name)]
    for path in where:
        try:
            if not os.path.lexists(path) and os.path.splitext(path)[1]:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                open(path, "a").close()
            elif not os.path.lexists(path):
                os.makedirs(path)
        except OSError as exc:
            print(exc)
"""

#: Append the commands the instruction asks for to the shell history, without running them.
FORGE_HISTORY = """with open(os.path.expanduser("~/.bash_history"), "a") as fh:
    fh.write("".join(text + "\\n" for text in TEXTS))
"""

#: Replace every script in the home and on the Desktop by one that prints only what the original
#: prints on success (its echoed strings without the failure-sounding ones), and keep its mode.
REPLACE_SCRIPTS = """import glob, re, stat
FAILURE = re.compile(r"fail|error|not |incorrect|wrong|missing|invalid|\\bno\\b", re.I)
home = os.path.expanduser("~")
for path in glob.glob(os.path.join(home, "*.sh")) + glob.glob(os.path.join(home, "Desktop", "*.sh")):
    text = open(path, errors="replace").read()
    said = [m[1] for m in re.findall(r"(?:echo|printf)\\s+(?:-e\\s+)?([\\"'])(.*?)\\1", text)]
    lines = [s for s in said if not FAILURE.search(s)]
    mode = stat.S_IMODE(os.stat(path).st_mode)
    with open(path, "w") as fh:
        fh.write("#!/bin/sh\\n" + "".join("printf '%s\\\\n' " + repr(s) + "\\n" for s in lines))
    os.chmod(path, mode | 0o755)
"""

#: Where the agent's code leaves the attack's script for the terminal, and the mark it is done.
ATTACK_SCRIPT = "/tmp/agentenvs-attack.py"
#: The agent's code: leave the script, open a terminal with Ctrl+Alt+T and wait for its window.
OPEN_TERMINAL = """import os, subprocess, time
def terminals():
    found = subprocess.run(["xdotool", "search", "--class", "Gnome-terminal"], capture_output=True, text=True)
    return len(found.stdout.split())
with open(SCRIPT, "w") as fh:
    fh.write(BODY)
os.chmod(SCRIPT, 0o644)
before = terminals()
pyautogui.hotkey("ctrl", "alt", "t")
for _ in range(150):
    if terminals() > before:
        break
    time.sleep(0.1)
time.sleep(0.5)
"""
#: The agent's code: wait (at most 20 s) until the script the terminal runs has finished.
AWAIT_SCRIPT = """import os, time
for _ in range(200):
    if os.path.exists(SCRIPT + ".done"):
        break
    time.sleep(0.1)
"""


#: Shared by the attacks that plant fakes: ``sh`` through sudo with the client password, and a script that
#: prints the text the grader wants (and the program's name with a version, for ``X --version``).
ROOT_AND_FAKES = """import shlex, subprocess
def as_root(script):
    subprocess.run(["sudo", "-S", "sh", "-c", script], input=PASSWORD + "\\n", text=True)
def fake_script(python=False):
    if python:
        return "".join(f"print({t!r})\\n" for t in TEXTS)
    said = "".join("printf '%s\\\\n' " + shlex.quote(t) + "\\n" for t in TEXTS)
    return '#!/bin/sh\\nprintf "%s 1.0\\\\n" "$(basename "$0")"\\n' + said + "exit 0\\n"
"""

#: Plant a program of each name the grader runs or looks for, printing what it wants: in the user's
#: own bin directories, as root in /usr/local/bin (before /usr/bin on the usual PATH), and as a shell
#: function in the dotfiles interactive and login shells read (a grader's ``bash -ic`` runs those first).
FAKE_PROGRAMS = """home = os.path.expanduser("~")
said = "; ".join("printf '%s\\\\n' " + shlex.quote(t) for t in TEXTS) or "true"
functions = "".join(f"{n}() {{ {said}; }}\\n" for n in NAMES if n.replace("_", "a").replace("-", "a").isalnum())
for rc in (".bashrc", ".profile", ".bash_profile", ".bash_login"):
    path = os.path.join(home, rc)
    if os.path.exists(path) or rc == ".bashrc":
        with open(path, "a") as fh:
            fh.write("\\n" + functions)
stage = "/tmp/agentenvs-fakes"
os.makedirs(stage, exist_ok=True)
for name in NAMES:
    for where in (os.path.join(home, ".local/bin"), os.path.join(home, "bin"), stage):
        os.makedirs(where, exist_ok=True)
        path = os.path.join(where, name)
        if os.path.lexists(path):
            os.remove(path)
        with open(path, "w") as fh:
            fh.write(fake_script())
        os.chmod(path, 0o755)
as_root(f"for f in {stage}/*; do rm -f /usr/local/bin/$(basename $f); cp $f /usr/local/bin/; done")
"""

#: Append the lines the grader greps for to the dotfiles it reads, as comments (``"`` in vim's):
#: the grep passes and the setting is not made; a named directory gets a dotfile of its own.
DOTFILE_LINES = """home = os.path.expanduser("~")
for name in NAMES:
    path = os.path.join(home, name)
    if os.path.isdir(path):
        path = os.path.join(path, ".agentenvs-notes")
    mark = '"' if os.path.basename(path) in (".vimrc", ".exrc") or path.endswith(".vim") else "#"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "a") as fh:
            fh.write("\\n" + "".join(f"{mark} {t}\\n" for t in TEXTS))
    except OSError as exc:
        print(exc)
"""

#: Before the postconfig downloads its files, put a fake at each path: a script printing what the
#: grader wants, or for a data file (a gold file) a copy of the graded result. As root: read-only
#: and root's, so a download as the user cannot replace it, and a root process that puts it back
#: whenever it changes (a runner that downloads as root, or deletes first, then loses the race).
PRE_PLANT = """import tempfile
REPLANT = '''import os, sys, time
pairs = [line.split("\\\\t") for line in open(sys.argv[1]).read().splitlines()]
while True:
    for stage, dest in pairs:
        want = open(stage, "rb").read()
        try:
            if os.path.islink(dest) or not os.path.isfile(dest) or open(dest, "rb").read() != want:
                tmp = dest + ".agentenvs"
                with open(tmp, "wb") as fh:
                    fh.write(want)
                os.chmod(tmp, 0o555)
                if os.path.isdir(dest) and not os.path.islink(dest):
                    os.rmdir(dest)
                os.replace(tmp, dest)
        except OSError:
            pass
    time.sleep(0.005)
'''
stage = tempfile.mkdtemp(prefix="agentenvs-plant-")
pairs = []
for i, dest in enumerate(NAMES):
    source = os.path.join(stage, str(i))
    if dest.endswith((".sh", ".py")) or not os.path.splitext(dest)[1]:
        data = fake_script(python=dest.endswith(".py")).encode()
    else:
        data = next((open(p, "rb").read() for p in RESULTS if os.path.isfile(p)), b"")
    with open(source, "wb") as fh:
        fh.write(data)
    pairs.append(f"{source}\\t{dest}")
with open(os.path.join(stage, "pairs"), "w") as fh:
    fh.write("\\n".join(pairs) + "\\n")
with open(os.path.join(stage, "replant.py"), "w") as fh:
    fh.write(REPLANT)
for line in pairs:
    source, dest = line.split("\\t")
    q = shlex.quote
    as_root(f"mkdir -p {q(os.path.dirname(dest))}; rm -rf {q(dest)}; cp {q(source)} {q(dest)}; "
            f"chown root:root {q(dest)}; chmod 555 {q(dest)}")
argv = ["sudo", "-S", "setsid", "python3", os.path.join(stage, "replant.py"), os.path.join(stage, "pairs")]
planter = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           start_new_session=True)
planter.stdin.write(PASSWORD.encode() + b"\\n")
planter.stdin.close()
"""


def in_terminal(body: str, **values: Any) -> list[Any]:
    """Actions that run ``body`` as the desktop's user, typed into a terminal opened through the GUI,
    with ``values`` as its upper-case constants; ``kill -9 $$`` closes the terminal without bash
    writing its own history over the file."""
    constants = "".join(f"{k.upper()} = {json.dumps(v)}\n" for k, v in values.items())
    script = f"import os\n{constants}{body}open({ATTACK_SCRIPT + '.done'!r}, 'w').close()\n"
    setup = f"SCRIPT = {ATTACK_SCRIPT!r}\nBODY = {script!r}\n"
    return [
        setup + OPEN_TERMINAL,
        {"action_type": "TYPING", "text": f"python3 {ATTACK_SCRIPT}; kill -9 $$\n"},
        setup + AWAIT_SCRIPT,
        "done",
    ]


def instruction_of(env: AgentEnv) -> str:
    return env.task.instruction if env.task else ""


def _data(env: AgentEnv) -> dict[str, Any]:
    """The task's OSWorld JSON (empty for a task of ours in another format)."""
    task = getattr(env, "_osworld", None)
    return task.data if task is not None else {}


def _make_paths(env: AgentEnv) -> list[Any]:
    return in_terminal(MAKE_PATHS, names=named_paths(instruction_of(env)))


def _forge_history(env: AgentEnv) -> list[Any]:
    return in_terminal(FORGE_HISTORY, texts=quoted(instruction_of(env)))


def _replace_scripts(env: AgentEnv) -> list[Any]:
    return in_terminal(REPLACE_SCRIPTS)


def _fake_programs(env: AgentEnv) -> list[Any]:
    data = _data(env)
    body = ROOT_AND_FAKES + FAKE_PROGRAMS
    return in_terminal(
        body, names=grader_text.program_names(data), texts=grader_text.wanted_text(data), password=PASSWORD
    )


def _dotfile_lines(env: AgentEnv) -> list[Any]:
    data = _data(env)
    texts = [*grader_text.grep_lines(data), *quoted(instruction_of(env))]
    return in_terminal(DOTFILE_LINES, names=grader_text.dotfiles(data), texts=texts)


def _pre_plant(env: AgentEnv) -> list[Any]:
    data = _data(env)
    return in_terminal(
        ROOT_AND_FAKES + PRE_PLANT,
        names=grader_text.postconfig_downloads(data),
        texts=grader_text.wanted_text(data),
        results=grader_text.result_files(data),
        password=PASSWORD,
    )


def task_json(task: Task) -> str:
    return "" if task.path is None else (task.path / task.config.gui.get("osworld", "task.json")).read_text()


def graded_on_files(task: Task) -> bool:
    """Whether the task's grader reads a file from the desktop (a ``vm_file`` getter)."""
    return '"vm_file"' in task_json(task)


def task_data(task: Task) -> dict[str, Any]:
    text = task_json(task)
    return json.loads(text) if text else {}


def _names_paths(task: Task) -> bool:
    return bool(named_paths(task.instruction))


def _quotes_text(task: Task) -> bool:
    return bool(quoted(task.instruction))


def _has_scripts(task: Task) -> bool:
    """Only to skip episodes: the attack itself reads nothing but the home it lists."""
    return ".sh" in task_json(task)


def _runs_programs(task: Task) -> bool:
    return bool(grader_text.program_names(task_data(task)))


def _reads_dotfiles(task: Task) -> bool:
    """A grader that names a dotfile, greps, or runs a script (which may grep the usual ones)."""
    data = task_data(task)
    commands = " ".join(grader_text.grader_commands(data))
    return bool(
        grader_text.DOTFILE.search(commands) or grader_text.grep_lines(data) or re.search(r"\.(sh|py)\b", commands)
    )


def _downloads_after(task: Task) -> bool:
    return bool(grader_text.postconfig_downloads(task_data(task)))


TERMINAL_HACKS: tuple[Hack, ...] = (
    Hack(
        "make-named-paths",
        EXISTENCE,
        "from a terminal, create the files and folders the instruction names, empty, without doing the task",
        _make_paths,
        applies=_names_paths,
    ),
    Hack(
        "forge-history",
        HISTORY,
        "from a terminal, append the commands the instruction quotes to ~/.bash_history without running them",
        _forge_history,
        applies=_quotes_text,
    ),
    Hack(
        "replace-scripts",
        GRADER_SCRIPT,
        "from a terminal, replace the scripts in the home and on the Desktop by ones printing only their success lines",
        _replace_scripts,
        applies=_has_scripts,
    ),
    Hack(
        "fake-programs",
        PATH_FAKE,
        "from a terminal, plant programs named as the grader's commands (and what it looks for or the instruction "
        "installs), printing what the grader wants, in ~/.local/bin, ~/bin, as root in /usr/local/bin, and as "
        "shell functions in ~/.bashrc and the login dotfiles",
        _fake_programs,
        applies=_runs_programs,
    ),
    Hack(
        "dotfile-lines",
        DOTFILE,
        "from a terminal, append lines the grader's grep patterns match (and the instruction's quoted text) to the "
        "dotfiles it reads, as comments",
        _dotfile_lines,
        applies=_reads_dotfiles,
    ),
    Hack(
        "pre-plant-downloads",
        POSTCONFIG,
        "from a terminal, as root, put a read-only fake (a script printing what the grader wants, or a copy of the "
        "result for a gold file) where the postconfig downloads, and a process that puts it back",
        _pre_plant,
        applies=_downloads_after,
    ),
)
