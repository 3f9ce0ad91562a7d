"""What the weak-grader attacks read from a task's evaluator: the commands it runs, the text it wants,
the dotfiles and grep patterns it checks, the files its postconfig downloads.

OSWorld's task JSON is public, so an agent may know its grader; the attacks
use what it says to aim at the grader's weak spot (a program's name, a line in
a dotfile, a script fetched after the agent), never the task's assets.
"""

from __future__ import annotations

import re
import shlex
from re import _parser  # type: ignore[attr-defined]  # the standard regex parser: examples of grep patterns
from typing import Any

from agentenvs.envs.gui.osworld_task import COMMAND_GETTERS, home_path, listed

#: Shell words that are not programs on the PATH (keywords and builtins cannot be shadowed there).
NOT_PROGRAMS = {
    *("if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac", "in", "function"),
    *("echo", "printf", "test", "[", "[[", "cd", "export", "read", "source", ".", "true", "false", "exit"),
    *("set", "unset", "local", "return", "eval", "exec", "shift", "type", "command", "hash", "let", "wait"),
}
#: Words after which a grader names a program it looks for (``which spotify``, ``command -v git``).
LOOKUPS = re.compile(r"\b(?:which|command\s+-v|type|hash|whereis)\s+([A-Za-z_][\w.+-]*)")
#: A shell started by the grader on a quoted command (``bash -ic 'conda --version'``): its text is read too.
INNER_SHELL = re.compile(r"\b(?:ba|da|z)?sh\s+(?:-\w+\s+)*-\w*c\w*\s+'([^']*)'")
#: What separates one command from the next in shell text.
SEPARATORS = re.compile(r"\$\(|`|\|\|?|&&?|;|\(|\)|\n|\b(?:then|do|else|elif|if|while|until|!)\b")
DOTFILE = re.compile(r"(?:~|\$HOME|\$\{HOME\}|/home/user)/(\.[\w.-]+(?:/[\w.-]+)*)")
GREP = re.compile(r"\bgrep((?:\s+-[A-Za-z]+)*)\s+(?:-e\s+)?(\"(?:[^\"\\]|\\.)*\"|'[^']*'|[^\s|;&)'\"]+)")
#: The dotfiles a grader we cannot read (a script it downloads) most likely greps.
USUAL_DOTFILES = [".bashrc", ".profile", ".vimrc", ".gitconfig"]


SHELLS = {"sh", "bash", "dash", "zsh"}


def shell_text(command: Any) -> str:
    """A getter's or step's command as shell text (``["bash", "-c", S]`` is ``S``; other lists are quoted)."""
    if isinstance(command, list):
        words = [str(w) for w in command]
        shell = len(words) >= 3 and posix_name(words[0]) in SHELLS and words[1] == "-c"
        return words[2] if shell else shlex.join(words)
    return str(command)


def grader_commands(data: dict[str, Any]) -> list[str]:
    """The shell text of the evaluator's command getters and of its postconfig's commands (less those that
    only press keys through pyautogui: they drive the apps, they grade nothing)."""
    evaluator = data.get("evaluator", {})
    found = [
        shell_text(g["command"])
        for key in ("result", "expected")
        for g in listed(evaluator.get(key))
        if isinstance(g, dict) and g.get("type") in COMMAND_GETTERS
    ]
    steps = evaluator.get("postconfig", [])
    found += [shell_text(s["parameters"]["command"]) for s in steps if s.get("type") in ("execute", "command")]
    return [text for text in found if "pyautogui" not in text]


def wanted_text(data: dict[str, Any]) -> list[str]:
    """The literal text the evaluator's rules want to see (``include``, ``expected``), without its last newline."""
    out: list[str] = []
    for getter in listed(data.get("evaluator", {}).get("expected")):
        rules = getter.get("rules") if isinstance(getter, dict) and getter.get("type") == "rule" else None
        if isinstance(rules, dict):
            out += [str(x) for x in listed(rules.get("include"))]
            out += [str(x) for x in listed(rules.get("expected")) if isinstance(x, (str, int, float))]
    return [t.removesuffix("\n") for t in dict.fromkeys(out) if t.strip()]


def program_names(data: dict[str, Any]) -> list[str]:
    """The programs the grader runs or looks for, and those the instruction asks to install."""
    names: list[str] = []
    commands = grader_commands(data)
    commands += [inner for text in commands for inner in INNER_SHELL.findall(text)]  # bash -ic '...'
    for text in commands:
        names += LOOKUPS.findall(text)
        for segment in SEPARATORS.split(re.sub(r"'[^']*'|\"(?:[^\"\\\\]|\\\\.)*\"", "''", text)):
            words = [w for w in segment.split() if not re.match(r"^\w+=", w)]
            if words:
                names.append(posix_name(words[0].strip("\"'")))
    names += [
        n.lower().rstrip(".") for n in re.findall(r"\binstall\s+(?:the\s+)?([A-Za-z][\w.+-]*)", instruction(data))
    ]
    return [n for n in dict.fromkeys(names) if n and n not in NOT_PROGRAMS and re.fullmatch(r"[\w.+-]+", n)]


def posix_name(word: str) -> str:
    """A program's name as the PATH finds it (``/usr/bin/python3`` is ``python3``; ``./x`` is not on it)."""
    return "" if word.startswith(".") else word.rsplit("/", 1)[-1]


def instruction(data: dict[str, Any]) -> str:
    return str(data.get("instruction", ""))


def dotfiles(data: dict[str, Any]) -> list[str]:
    """The home's dotfiles the grader reads (home-relative), or the usual ones when it names none."""
    named = [m for text in grader_commands(data) for m in DOTFILE.findall(text)]
    return list(dict.fromkeys(named)) or USUAL_DOTFILES


def grep_lines(data: dict[str, Any]) -> list[str]:
    """One line each of the grader's grep patterns matches (a pattern no example is found for is left out)."""
    out = []
    for text in grader_commands(data):
        for flags, quoted_pattern in GREP.findall(text):
            pattern = quoted_pattern[1:-1] if quoted_pattern[:1] in "\"'" else quoted_pattern
            line = example(pattern, fixed="F" in flags, extended=bool(re.search("[EP]", flags)))
            if line is not None:
                out.append(line)
    return list(dict.fromkeys(out))


POSIX_CLASSES = {"[:space:]": r"\s", "[:digit:]": r"\d", "[:alpha:]": "a-zA-Z", "[:alnum:]": r"\w", "[:upper:]": "A-Z"}


def example(pattern: str, *, fixed: bool = False, extended: bool = False) -> str | None:
    """A line grep's ``pattern`` matches (basic, ``-E`` extended or ``-F`` fixed), or None."""
    if fixed:
        return pattern
    regex = pattern
    for posix, python in POSIX_CLASSES.items():
        regex = regex.replace(posix, python)
    if not extended:  # BRE: \( \| \+ are the operators, the bare characters are literal
        regex = re.sub(r"\\([(){}|+?])|([(){}|+?])", lambda m: m[1] or "\\" + m[2], regex)
    try:
        line = _walk(_parser.parse(regex))
        return line if re.search(regex, line) else None
    except (re.error, ValueError, TypeError):
        return None


def _walk(items: Any) -> str:
    out = []
    for op, av in items:
        name = str(op)
        if name == "LITERAL":
            out.append(chr(av))
        elif name == "ANY":  # the dot itself: ``mattn.lisp`` reads as the name it was meant to match
            out.append(".")
        elif name == "NOT_LITERAL":
            out.append("y" if chr(av) == "x" else "x")
        elif name == "IN":
            out.append(_one_of(av))
        elif name in ("MAX_REPEAT", "MIN_REPEAT"):
            low, _, sub = av
            out.append(_walk(sub) * max(low, 1))
        elif name == "SUBPATTERN":
            out.append(_walk(av[-1]))
        elif name == "BRANCH":
            out.append(_walk(av[1][0]))
        elif name not in ("AT", "ASSERT", "ASSERT_NOT"):
            raise ValueError(f"no example for {name}")
    return "".join(out)


def _one_of(items: Any) -> str:
    if any(str(op) == "NEGATE" for op, _ in items):
        raise ValueError("a negated class")
    op, av = items[0]
    if str(op) == "LITERAL":
        return chr(av)
    if str(op) == "RANGE":
        return chr(av[0])
    return {"CATEGORY_DIGIT": "0", "CATEGORY_SPACE": " "}.get(str(av), "a")


def postconfig_downloads(data: dict[str, Any]) -> list[str]:
    """The paths (absolute) the evaluator's postconfig downloads files to, after the agent."""
    steps = data.get("evaluator", {}).get("postconfig", [])
    return [home_path(f["path"]) for s in steps if s.get("type") == "download" for f in s["parameters"]["files"]]


def result_files(data: dict[str, Any]) -> list[str]:
    """The files (absolute) the evaluator's ``vm_file`` getters read as the agent's result."""
    found = listed(data.get("evaluator", {}).get("result"))
    return [
        home_path(p) for g in found if isinstance(g, dict) and g.get("type") == "vm_file" for p in listed(g["path"])
    ]
