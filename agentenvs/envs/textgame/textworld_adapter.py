"""TextWorld games behind the same game interface as our engine (extra ``agentenvs[textworld]``).

Games are generated offline by TextWorld's own challenge generators (coin
collector, treasure hunter, the cooking games of the First TextWorld Problems
competition, and its simple game) with its bundled Inform7 compiler
(``tw-make``), and cached under ``~/.cache/agentenvs/textworld`` (or
``$AGENTENVS_TEXTWORLD_CACHE``); they are never committed. TextWorld's step
returns the cumulative score, which we turn into a per-step reward
(``score_delta``); its ``intermediate_reward`` (+1 closer to the goal, 0,
-1 farther, from its own replanning) becomes our ``distance_delta``, and the
length of its ``policy_commands`` our ``distance``.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentenvs.core.errors import ActionError, InfraError
from agentenvs.envs.textgame.engine import NO_PLAN, StepResult
from agentenvs.envs.textgame.parser import MAX_COMMAND_CHARS

MAKE_TIMEOUT_SEC = 180.0
#: TextWorld's generator cannot make every quest from every seed ("Try using a different value for the
#: `--seed` argument"): the seeds tried for an id are its own, then one past our ids' range per stride.
QUEST_ATTEMPTS = 5
SEED_STRIDE = 3_000_000
#: TextWorld parses a game's logic with one module-wide tatsu parser, whose rule stack two threads corrupt
#: ("IndexError: pop from empty list" in two games loaded at once: validate's jobs, the harness's lanes, the
#: server's sessions), so every call into TextWorld holds this lock.
_TEXTWORLD = threading.Lock()
#: One lock per game being generated, so two threads never run ``tw-make`` into the same temporary file.
_MAKING: dict[Path, threading.Lock] = {}
_MAKING_GUARD = threading.Lock()


@dataclass(frozen=True)
class Challenge:
    """One of TextWorld's challenges: the ``tw-make`` arguments of each difficulty and of each split."""

    command: str
    #: what each difficulty asks of ``tw-make`` (easy, medium, hard), and what it means in words
    options: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]
    described: tuple[str, str, str]
    max_steps: tuple[int, int, int]
    #: the arguments that draw a split's games, where TextWorld holds some out (its own test sets)
    splits: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def arguments(self, difficulty_index: int, split: str) -> list[str]:
        return [self.command, *self.options[difficulty_index], *self.splits.get(split, ())]


def _levels(levels: tuple[int, int, int]) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    return (("--level", str(levels[0])), ("--level", str(levels[1])), ("--level", str(levels[2])))


#: our family name -> TextWorld's challenge
CHALLENGES: dict[str, Challenge] = {
    "twcoin": Challenge(
        "tw-coin_collector", _levels((5, 10, 30)), ("level 5", "level 10", "level 30"), (150, 200, 400)
    ),
    "twtreasure": Challenge(
        "tw-treasure_hunter", _levels((1, 10, 20)), ("level 1", "level 10", "level 20"), (110, 200, 300)
    ),
    "twcooking": Challenge(
        "tw-cooking",
        (
            ("--recipe", "1", "--take", "1", "--go", "1"),
            ("--recipe", "2", "--take", "2", "--go", "6", "--open", "--cut"),
            ("--recipe", "3", "--take", "3", "--go", "9", "--open", "--cook", "--cut", "--drop"),
        ),
        (
            "one ingredient, one room",
            "two ingredients to find and cut, six rooms, closed doors and containers",
            "three ingredients to find, cut and cook, nine rooms, closed doors, a small inventory",
        ),
        (50, 100, 150),
        {split: ("--split", split) for split in ("train", "valid", "test")},
    ),
    "twsimple": Challenge(
        "tw-simple",
        (
            ("--rewards", "dense", "--goal", "detailed"),
            ("--rewards", "balanced", "--goal", "brief"),
            ("--rewards", "sparse", "--goal", "none"),
        ),
        ("dense rewards, the goal told", "balanced rewards, the goal in brief", "sparse rewards, no goal given"),
        (100, 100, 100),
        {"test": ("--test",)},
    ),
}


def cache_dir() -> Path:
    override = os.environ.get("AGENTENVS_TEXTWORLD_CACHE")
    return Path(override) if override else Path.home() / ".cache" / "agentenvs" / "textworld"


def _tw_make() -> str:
    candidate = Path(sys.executable).parent / "tw-make"
    if candidate.is_file():
        return str(candidate)
    raise InfraError("tw-make not found next to this Python; install the extra: pip install 'agentenvs[textworld]'")


def make_game(arguments: list[str], seed: int) -> Path:
    """Generate (once) and return the path of the compiled game ``tw-make`` makes from ``arguments`` and ``seed``.

    Threads asking for the same game wait for one ``tw-make``; other processes write their own temporary
    files and the last rename wins (the game is the same)."""
    key = hashlib.sha256(" ".join([*arguments, str(seed)]).encode()).hexdigest()[:12]
    path = cache_dir() / f"{arguments[0]}-{seed}-{key}.z8"
    with _MAKING_GUARD:
        making = _MAKING.setdefault(path, threading.Lock())
    with making:
        if not path.is_file():
            _generate(arguments, seed, path)
    return path


def _generate(arguments: list[str], seed: int, path: Path) -> None:
    """Run ``tw-make``; when TextWorld's generator says the seed cannot give its quest (it asks for another
    seed), the next of a fixed sequence of seeds outside our ids' range, so every id names one game."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}-{os.getpid()}.z8")
    what = f"{' '.join(arguments)} seed {seed}"
    for attempt in range(QUEST_ATTEMPTS):
        tw_seed = seed + attempt * SEED_STRIDE
        cmd = [_tw_make(), *arguments, "--seed", str(tw_seed), "--output", str(tmp), "-f", "--silent"]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=MAKE_TIMEOUT_SEC, check=False)
        except subprocess.TimeoutExpired:
            raise InfraError(f"tw-make took longer than {MAKE_TIMEOUT_SEC:.0f}s for {what}") from None
        if done.returncode == 0 and tmp.is_file():
            break
        if "QuestGenerationError" not in done.stderr:
            raise InfraError(f"tw-make failed for {what}: {done.stderr.strip()[-500:]}")
    else:
        raise InfraError(
            f"TextWorld's generator could not make a quest for {what} or the {QUEST_ATTEMPTS - 1} seeds after it "
            f"(every {SEED_STRIDE:,}th); pick another seed"
        )
    for suffix in (".json", ".ni"):
        side = tmp.with_suffix(suffix)
        if side.is_file():
            side.replace(path.with_suffix(suffix))
    tmp.replace(path)


def _metadata(game: Path) -> dict[str, Any]:
    """The ``metadata`` tw-make saved beside the game (``.json``); empty when there is none."""
    try:
        data = json.loads(game.with_suffix(".json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    metadata = data.get("metadata") if isinstance(data, dict) else None
    return metadata if isinstance(metadata, dict) else {}


class TextWorldGame:
    """A TextWorld game with the methods ``TextGameEnv`` uses on our own ``Game``."""

    def __init__(self, path: Path):
        import textworld

        infos = textworld.EnvInfos(
            admissible_commands=True,
            intermediate_reward=True,
            policy_commands=True,
            score=True,
            max_score=True,
            won=True,
            lost=True,
            moves=True,
            objective=True,
        )
        with _TEXTWORLD:
            self._env = textworld.start(str(path), request_infos=infos)
        self._state: Any = None
        self.moves = 0
        self.score = 0
        self.intermediate_reward = 0
        #: The generator's own solution from the start, where it wrote one (the cooking games do). TextWorld's
        #: planner gives no ``policy_commands`` for some games (a cooking game with a small inventory).
        self._walkthrough = _metadata(path).get("walkthrough") or []

    def reset(self) -> str:
        with _TEXTWORLD:
            self._state = self._env.reset()
        self.moves = 0
        self.score = int(self._state.score or 0)
        self.intermediate_reward = 0
        return str(self._state.feedback)

    @property
    def objective(self) -> str:
        return str(self._state.objective) if self._state is not None else ""

    @property
    def max_score(self) -> int:
        return int(self._state.max_score)

    @property
    def admissible_commands(self) -> list[str]:
        return list(self._state.admissible_commands or [])

    @property
    def admissible_text(self) -> str:
        return "\n".join(self.admissible_commands)

    def step(self, command: str) -> StepResult:
        if len(command) > MAX_COMMAND_CHARS:
            raise ActionError(
                f"command is {len(command)} characters; game commands are short (at most {MAX_COMMAND_CHARS})"
            )
        command = " ".join(command.split())
        if not command:
            raise ActionError("empty command; type a command such as 'look', or pick one from admissible_commands")
        admissible = command in self.admissible_commands
        with _TEXTWORLD:
            self._state, score, _ = self._env.step(command)
        self.moves += 1
        self.score_delta = int(score) - self.score
        self.score = int(score)
        self.intermediate_reward = int(self._state.intermediate_reward or 0)
        return StepResult(str(self._state.feedback), admissible=admissible, valid=admissible)

    @property
    def won(self) -> bool:
        return bool(self._state.won)

    @property
    def lost(self) -> bool:
        return bool(self._state.lost)

    def checks(self) -> dict[str, bool]:
        return {f"score-{k}": self.score >= k for k in range(1, self.max_score + 1)}

    def distance(self) -> int:
        if self.won:
            return 0
        policy = self._state.policy_commands
        return len(policy) if policy else NO_PLAN

    def walkthrough(self) -> list[str]:
        """TextWorld's plan from here; from the start, the generator's own solution where the planner has none."""
        plan = list(self._state.policy_commands or [])
        if not plan and self.moves == 0 and not self.won:
            plan = [str(command) for command in self._walkthrough]
        return plan

    def state_hash(self) -> str:
        text = f"{self._state.feedback}|{self.score}|{self.moves}|{sorted(self.admissible_commands)}"
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def close(self) -> None:
        with _TEXTWORLD:
            self._env.close()
