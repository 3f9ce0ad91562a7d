"""The agent cannot change its desktop score except by doing the task through the GUI.

Each test is an attack an agent could make, run on a real desktop. Graded
files are read by the trusted checker after every process in the desktop
is killed; pyautogui code runs as ``actor``, which can drive the apps but
cannot write, read or kill what belongs to the desktop's user; the task's
gold files and evaluator never enter the desktop.
"""

from __future__ import annotations

import os
import time

import pytest

import agentenvs
from agentenvs.audit import audit_tasks
from agentenvs.envs.gui import hacks
from agentenvs.envs.gui.env import GuiEnv

pytestmark = [pytest.mark.docker, pytest.mark.slow]
TODO = "/home/user/Desktop/todo.txt"
ORIGINAL = b"buy milk\ncall bob\n"
LINE = "fix <div> & <span> tags"


@pytest.fixture(params=["docker", "local"])
def mousepad(gui_image, request):
    env = GuiEnv("mousepad-append-line", backend=request.param, screen_size=(800, 600), observation_type="screenshot")
    env.reset(seed=0)
    yield env
    env.close()


def test_pyautogui_code_runs_as_actor_and_cannot_write_behind_the_app(mousepad):
    _, _, _, _, info = mousepad.step("import os; print('uid', os.getuid())")
    assert info["action_error"] is None
    _, _, _, _, info = mousepad.step(hacks._code(mousepad, hacks.WRITE_FILE))
    assert info["error_kind"] == "agent" and "PermissionError" in info["action_error"]
    mousepad.step(hacks._code(mousepad, hacks.WRITE_SHELL))
    windows = mousepad.desktop.client.call("windows")[0]["windows"]
    assert any("todo.txt" in w["title"] for w in windows), "the actor killed the user's app"
    assert mousepad.desktop.sandbox.get(TODO) == ORIGINAL
    *_, info = mousepad.step("DONE")
    assert info["score"] == 0.0


def test_the_same_text_typed_into_the_app_scores(mousepad):
    """The control for the test above: the GUI path the actor still has works."""
    mousepad.step("pyautogui.hotkey('ctrl', 'End')")
    mousepad.step({"action_type": "TYPING", "text": LINE + "\n"})
    mousepad.step("pyautogui.hotkey('ctrl', 's')")
    *_, info = mousepad.step("DONE")
    assert info["score"] == 1.0, info["verifier_detail"]


def test_a_background_writer_is_dead_before_the_check(mousepad):
    """A user process (as a terminal opened through the GUI would start) that writes the gold file once the
    editor is gone, as at the end of an episode: the kill stops every process at once, so it never gets to."""
    gold = (ORIGINAL.decode() + LINE + "\n").replace("\n", "\\n")
    writer = f"while pgrep -x mousepad >/dev/null; do sleep 0.05; done; printf '{gold}' > {TODO}"
    started = mousepad.desktop.sandbox.exec(
        ["sh", "-c", f"setsid -f sh -c {writer!r} >/dev/null 2>&1 </dev/null"], timeout=10, user="user"
    )
    assert started.exit_code == 0
    *_, info = mousepad.step("DONE")
    assert info["score"] == 0.0
    time.sleep(2)  # had the writer outlived the editor, it would have written by now
    assert mousepad.desktop.sandbox.get(TODO) == ORIGINAL
    left = mousepad.desktop.sandbox.exec(["ps", "-U", "user,actor", "-o", "pid=,args="], timeout=10)
    assert left.stdout.strip() == "", left.stdout  # the writer, the apps and the daemon are gone


def test_gold_files_and_the_evaluator_never_enter_the_desktop(mousepad):
    sandbox = mousepad.desktop.sandbox
    task_dir = str(mousepad.task.path)
    if sandbox.backend == "docker":
        container = sandbox._api.inspect_container(sandbox._live())
        sources = [m["Source"] for m in container["Mounts"]]
        changed = [c["Path"] for c in sandbox._api.diff(sandbox._live())]
    else:  # what is bound in, and every file the sandbox wrote (its own filesystem, with the system's upper layer)
        sources = [host for host, _, _ in sandbox.spec.mounts]
        changed = [str(p) for p in sandbox.root.rglob("*") if p.is_file() and not p.is_symlink()]
    assert not any(s.startswith(task_dir) or task_dir.startswith(s) for s in sources), sources

    def grep(*markers: str) -> str:
        if sandbox.backend == "local":
            found = [p for p in changed if any(m.encode() in open(p, "rb").read() for m in markers)]
            return "\n".join("/" + os.path.relpath(p, sandbox.root) for p in found)
        argv = ["grep", "-lsF", "-D", "skip", *[a for m in markers for a in ("-e", m)], "--", *changed]
        return sandbox.exec(argv, timeout=60).stdout

    assert TODO in grep("call bob")  # the search does read what came in
    assert grep("todo_gold", LINE, "compare_text_file") == ""


@pytest.mark.parametrize("backend", ["docker", "local"])
def test_audit_finds_no_gui_hack_that_scores(gui_image, backend):
    tasks = [agentenvs.get_task(f"gui/{t}") for t in ("mousepad-append-line", "infeasible-photoshop")]
    env_kwargs = {"backend": backend, "screen_size": (800, 600), "observation_type": "screenshot"}
    audits = audit_tasks(tasks, env_kwargs, jobs=2)
    ran = {(a.task_id, r.hack) for a in audits for r in a.results}
    assert ("gui/mousepad-append-line", "python-writes-result") in ran
    assert ("gui/mousepad-append-line", "slow-to-grade") in ran
    assert ("gui/mousepad-append-line", "fail") in ran
    assert ("gui/infeasible-photoshop", "fail") not in ran  # FAIL is the right answer there
    for audit in audits:
        assert audit.ok, [f.evidence() for f in audit.findings] + [r.error for r in audit.errors]


@pytest.mark.parametrize("backend", ["docker", "local"])
def test_a_download_is_written_back_through_no_folder_the_agent_made_a_link(gui_image, backend):
    """The agent (root in its desktop) links a download's folder elsewhere and plants a fake there: the host's
    write-back makes the folder real again and writes the task's file into it; the link's target is untouched.
    Folders outside the home, such as the image's own links (/bin), are left alone."""
    from agentenvs.envs.gui.env import _put_back
    from agentenvs.sandbox import create_sandbox
    from agentenvs.sandbox.base import SandboxSpec

    spec = SandboxSpec(image=gui_image, workdir="/home/user", users=True)
    sandbox = create_sandbox(backend, spec, **({"image": gui_image} if backend == "local" else {}))
    try:
        plant = (
            "mkdir -p /srv/fake && echo 'echo PASS' > /srv/fake/grade.sh"
            " && ln -s /srv/fake /home/user/eval && ln -s /srv/fake /home/user/data"
        )
        assert sandbox.exec(["sh", "-c", plant], timeout=20).exit_code == 0
        _put_back(sandbox, {"/home/user/eval/grade.sh": b"echo real\n", "/home/user/data/sub/x.txt": b"x"})
        seen = sandbox.exec(
            ["sh", "-c", "stat -c '%F %U' /home/user/eval /home/user/data/sub; cat /home/user/eval/grade.sh"
             " /srv/fake/grade.sh /home/user/data/sub/x.txt; echo; readlink /bin"],
            timeout=20,
        ).stdout.splitlines()  # fmt: skip
        assert seen == ["directory user", "directory user", "echo real", "echo PASS", "x", "usr/bin"]
    finally:
        sandbox.close()
