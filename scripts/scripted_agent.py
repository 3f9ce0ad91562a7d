"""A scripted agent behind ``--policy http``: the leaderboards' "scripted" example submissions.

No model and no task knowledge: a fixed script per family, so its score is a
floor any learned agent should beat. Text games: look, then do what the
admissible commands and the instruction's words agree on (``take emerald``
when told to take the emerald), else open things and walk exits not yet
tried. Terminal and SWE: inspect the working directory (and run the tests),
then ``done``. Web: scroll the page down and up, then ``done``. Desktop: move
the mouse to the middle of the screen and wait for it to settle, then ``done``. It speaks the
protocol of docs/policy-protocol.md, keeping state per ``episode_id``.

Usage: ``python3 scripts/scripted_agent.py [--port 8300]``, then
``agentenvs run ... --policy http --url http://127.0.0.1:8300``.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from fastapi import FastAPI

#: The fixed scripts: one action per step, then ``done``.
SCRIPTS: dict[str, list[Any]] = {
    "terminal": ["pwd && ls -la", "find . -maxdepth 2 -type f | head -50"],
    "swe": [
        {"name": "bash", "arguments": {"command": "git status --short && git log --oneline -5"}},
        {"name": "bash", "arguments": {"command": "python3 -m pytest -x -q 2>&1 | tail -20"}},
    ],
    "web": ["scroll(0, 500)", "scroll(0, -500)"],
    "gui": ["pyautogui.moveTo(640, 400)", "WAIT"],
}
#: Text-game verbs that only look, move or undo: never the goal itself.
NOT_GOALS = {"look", "inventory", "examine", "go", "help", "drop"}


@dataclass
class Episode:
    family: str
    instruction: str
    step: int = 0
    done: set[str] = field(default_factory=set)
    room: str = ""
    walked: Counter[tuple[str, str]] = field(default_factory=Counter)


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 2}


def textgame_action(episode: Episode, observation: dict[str, Any]) -> str:
    """Look first; then a goal command (its objects named in the instruction); then open; then walk."""
    rooms = re.findall(r"-= (.+?) =-", str(observation.get("text", "")))
    episode.room = rooms[-1] if rooms else episode.room
    if episode.step == 0:
        return "look"
    commands = [c.strip() for c in str(observation.get("admissible_commands", "")).splitlines() if c.strip()]
    wanted = words(episode.instruction)
    goals = [
        (len(words(" ".join(c.split()[1:])) & wanted), c)
        for c in commands
        if c.split()[0] not in NOT_GOALS and c not in episode.done
    ]
    best = max((g for g in goals if g[0] > 0), key=lambda g: g[0], default=None)
    if best is not None:
        episode.done.add(best[1])
        return best[1]
    opens = [c for c in commands if c.startswith("open ") and c not in episode.done]
    if opens:
        episode.done.add(opens[0])
        return opens[0]
    exits = [c for c in commands if c.startswith("go ")]
    if not exits:
        return "done"
    chosen = min(exits, key=lambda c: episode.walked[(episode.room, c)])  # the least walked, in listed order
    episode.walked[(episode.room, chosen)] += 1
    return chosen


def decide(episode: Episode, observation: dict[str, Any]) -> Any:
    if episode.family == "textgame":
        action: Any = textgame_action(episode, observation)
    else:
        script = SCRIPTS.get(episode.family, [])
        action = script[episode.step] if episode.step < len(script) else "done"
    episode.step += 1
    return action


def app() -> FastAPI:
    """The ``/reset`` + ``/act`` server."""
    server = FastAPI()
    episodes: dict[str, Episode] = {}

    @server.post("/reset")
    async def reset(body: dict[str, Any]) -> dict[str, Any]:
        episodes[body["episode_id"]] = Episode(family=body["family"], instruction=body["instruction"])
        return {}

    @server.post("/act")
    async def act(body: dict[str, Any]) -> dict[str, Any]:
        episode = episodes.setdefault(body["episode_id"], Episode(family=body["task_id"].split("/")[0], instruction=""))
        return {"action": decide(episode, body["observation"])}

    return server


@contextlib.contextmanager
def serve(port: int = 0) -> Iterator[str]:
    """Serve the agent on 127.0.0.1 in a thread; yields its base URL."""
    server = uvicorn.Server(uvicorn.Config(app(), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8300)
    uvicorn.run(app(), host="127.0.0.1", port=parser.parse_args().port, log_level="warning")
