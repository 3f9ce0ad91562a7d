"""Fork and snapshot/restore on a desktop: the family replays (a new desktop, the recorded actions again)."""

from __future__ import annotations

import pytest

import agentenvs
from agentenvs.validate import play

pytestmark = [pytest.mark.docker, pytest.mark.slow]

SAVE = ["pyautogui.hotkey('ctrl', 's')", "WAIT", "DONE"]


def test_fork_and_restore_bring_back_typed_text_on_a_desktop_of_their_own(gui_image) -> None:
    env = agentenvs.make("gui/mousepad-append-line", screen_size=(800, 600), observation_type="screenshot")
    parent = env.unwrapped
    child = None
    try:
        parent.reset(seed=0)
        plan = parent.oracle_actions()
        assert plan[3:] == SAVE, "the oracle clicks, goes to the end, types the line, then saves"
        for action in plan[:3]:
            parent.step(action)
        at_k = parent._state_hash()
        ref = parent.snapshot()
        child = parent.fork()
        assert child.desktop is not parent.desktop and child._state_hash() == at_k
        saved, _ = play(child, SAVE)
        assert saved["score"] == 1.0, "the typed line was replayed in the fork, which saves it"
        on_disk = parent.desktop.sandbox.exec(["cat", "/home/user/Desktop/todo.txt"], timeout=30).stdout
        assert "call bob" in on_disk and "fix <div>" not in on_disk, "the fork's save never reaches the parent"
        junk, _ = play(parent, ["pyautogui.write('not the line')", *SAVE])
        assert junk["score"] == 0.0
        obs, info = parent.restore(ref)
        assert info["state_hash"] == at_k and info["step"] == 3 and info["restored"]["strategy"] == "replay"
        assert obs["screenshot"].shape == (600, 800, 3)
        again, _ = play(parent, SAVE)
        assert again["score"] == 1.0
    finally:
        if child is not None:
            child.close()
        env.close()
