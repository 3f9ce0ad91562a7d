"""Which of the agent's file changes reach the verifier, and with what environment it runs.

The verifier runs on a toolchain the agent could not have touched: on docker
a fresh container from the pristine image, into which the agent's changes
are copied as data; on local the host's read-only system directories, or
the image's overlay with such changes undone (:func:`agentenvs.sandbox.layers.seal_system`). A
change that would alter the verifier's own tools (interpreters, libraries,
the loader, shell start-up files, Python's import machinery) is never copied:
:func:`protected_reason` says why, and the verifier's result lists what was
left out. Everything else the agent changed (its work, configuration it was
asked to edit, programs it built) is the state under test and is copied.
"""

from __future__ import annotations

import posixpath
import re

#: Directories holding the system's programs and libraries: no change in them reaches the verifier.
TOOLCHAIN_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt/agentenvs")
#: Added programs may live here if they do not shadow a command the image already has.
PROGRAM_DIRS = ("/usr/local/bin", "/usr/local/sbin")
#: Files under /etc that configure the loader, shells, interpreters and package tools.
ETC_TOOL_CONFIG = (
    "/etc/ld.so.preload",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/ld.so.cache",
    "/etc/alternatives",
    "/etc/environment",
    "/etc/profile",
    "/etc/profile.d",
    "/etc/bash.bashrc",
    "/etc/bash.bash_logout",
    "/etc/inputrc",
    "/etc/pip.conf",
    "/etc/gitconfig",
    "/etc/npmrc",
    "/etc/wgetrc",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/security",
    "/etc/pam.d",
    "/etc/nsswitch.conf",
)
#: The verifier's search path; an image's own program directories come after it (:func:`image_program_dirs`).
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#: Paths the verifier owns: it recreates them itself.
VERIFIER_OWNED = ("/tests", "/logs/verifier", "/proc", "/sys", "/dev", "/run/agentenvs")
_PYTHON_ETC = re.compile(r"^/etc/python[0-9.]*(/|$)")
_IMPORT_HOOKS = re.compile(r"(^|/)(sitecustomize|usercustomize)(\.py[co]?|/|$)|\.pth$")
_SITE_DIRS = re.compile(r"(^|/)(site-packages|dist-packages)(/|$)")


def _under(path: str, roots: tuple[str, ...]) -> str | None:
    for root in roots:
        if path == root or path.startswith(root + "/"):
            return root
    return None


def image_program_dirs(image_env: dict[str, str], workdir: str | None = None) -> tuple[str, ...]:
    """The directories an image's ``PATH`` adds to the standard ones (a venv's ``bin``, ``/go/bin``).

    The verifier searches them after the standard ones. With ``workdir`` (the image's), only those
    outside it: their contents are the verifier's tools, while the workdir is the agent's to change.
    """
    standard = set(DEFAULT_PATH.split(":"))
    dirs = (posixpath.normpath(d) for d in image_env.get("PATH", "").split(":") if d.startswith("/"))
    kept = (d for d in dirs if d not in standard and d != "/" and not _under(d, VERIFIER_OWNED))
    if workdir and workdir != "/":
        kept = (d for d in kept if not _under(d, (posixpath.normpath(workdir),)))
    return tuple(dict.fromkeys(kept))


def protected_reason(
    path: str,
    *,
    added: bool,
    is_dir: bool = False,
    shadowed_commands: frozenset[str] = frozenset(),
    image_dirs: tuple[str, ...] = (),
) -> str | None:
    """Why the agent's change to ``path`` must not reach the verifier, or None if it may.

    ``added`` is True for a file the pristine image did not have.
    ``shadowed_commands`` are the command names on the image's ``PATH``: an added
    program with one of those names in a program directory would shadow it.
    ``image_dirs`` are the image's own program directories (:func:`image_program_dirs`): the
    verifier runs what is in them, so no change there reaches it.
    """
    path = posixpath.normpath("/" + path.lstrip("/"))
    owned = _under(path, VERIFIER_OWNED)
    if owned:
        return f"{owned} belongs to the verifier"
    on_path = _under(path, image_dirs)
    if on_path and not (path == on_path and is_dir):
        return f"{on_path} is on the image's PATH: the verifier runs the programs there"
    program_dir = _under(path, PROGRAM_DIRS)
    if program_dir and added and path != program_dir:
        name = path[len(program_dir) + 1 :].split("/")[0]
        if name in shadowed_commands:
            return f"would shadow the image's command {name!r}"
        if name.endswith((".py", ".pyc", ".pth")) or "/" in path[len(program_dir) + 1 :]:
            return "a Python module or directory beside the image's scripts would be imported by them"
        return None
    toolchain = _under(path, TOOLCHAIN_DIRS)
    if toolchain:
        return f"{toolchain} holds the system's programs and libraries"
    etc = _under(path, ETC_TOOL_CONFIG)
    if etc:
        return f"{etc} configures the loader, shells or tools the verifier uses"
    if _PYTHON_ETC.match(path):
        return "Python's system configuration"
    if _IMPORT_HOOKS.search(path):
        return "a Python start-up hook (.pth, sitecustomize, usercustomize)"
    if _SITE_DIRS.search(path):
        return "an installed Python package directory"
    if added and not is_dir and posixpath.dirname(path) == "/":
        return "a new file at / would be read as configuration by tools run from /tests (pytest.ini, conftest.py)"
    return None


def verifier_env(
    home: str, tmp: str, extra: dict[str, str] | None = None, image_dirs: tuple[str, ...] = ()
) -> dict[str, str]:
    """The verifier's whole environment: nothing is inherited from the agent or the image.

    Python runs without the user site (the working directory stays on
    ``sys.path`` for ``python -m``, as test scripts expect: our own checkers
    run isolated through ``_entry.py``); per-user configuration of the usual
    tools (pip, git, curl, wget, npm, uv) is switched off, and HOME and TMPDIR
    are directories made fresh for this run. ``image_dirs``, the image's own
    program directories, are searched after the standard ones, so a program
    there can never shadow a system command.
    """
    env = {
        "PATH": ":".join((DEFAULT_PATH, *image_dirs)),
        "HOME": home,
        "TMPDIR": tmp,
        "USER": "root",
        "LOGNAME": "root",
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "XDG_CONFIG_HOME": f"{home}/.config",
        "XDG_CACHE_HOME": f"{home}/.cache",
        "XDG_DATA_HOME": f"{home}/.local/share",
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PIP_CONFIG_FILE": "/dev/null",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "CURL_HOME": home,
        "WGETRC": "/dev/null",
        "NPM_CONFIG_USERCONFIG": "/dev/null",
        "UV_NO_CONFIG": "1",
    }
    # The task's own [verifier] env comes from the task author, not the agent.
    env.update(extra or {})
    return env
