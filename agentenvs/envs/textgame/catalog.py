"""Task ids, splits and limits of the generated families, and the frozen suites.

An id is ``<family>-<difficulty>-<seed>``. The seed decides the split:
train seeds are 0-999,999, valid 1,000,000-1,999,999 and test
2,000,000-2,999,999, and valid/test games also draw held-out words and
layouts (see ``vocab`` and ``layout``). The suites ``textgame-train`` and
``textgame-test`` are frozen in ``suites/*.json`` with a fingerprint per
game, so a change to a generator that alters a suite game is caught.
"""

from __future__ import annotations

import hashlib
import importlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from agentenvs.core.errors import TaskNotFoundError
from agentenvs.core.task import Checkpoint, LimitsSection, Task, TaskConfig
from agentenvs.envs.textgame.textworld_adapter import CHALLENGES

DIFFICULTIES = ("easy", "medium", "hard")
#: family -> (module:function of the generator, kind tag)
GENERATORS: dict[str, tuple[str, str]] = {
    "coin": ("gen_adventure:make_coin", "world"),
    "keys": ("gen_adventure:make_keys", "world"),
    "cooking": ("gen_home:make_cooking", "world"),
    "household": ("gen_home:make_household", "world"),
    "maze": ("gen_adventure:make_maze", "puzzle"),
    "wordle": ("puzzles:make_wordle", "puzzle"),
    "hanoi": ("puzzles:make_hanoi", "puzzle"),
}
MAX_STEPS: dict[str, tuple[int, int, int]] = {
    "coin": (15, 40, 70),
    "keys": (40, 70, 110),
    "cooking": (30, 60, 90),
    "household": (30, 50, 80),
    "maze": (50, 100, 180),
    "wordle": (14, 12, 10),
    "hanoi": (25, 50, 100),
}
SPLIT_SEEDS = {"train": (0, 1_000_000), "valid": (1_000_000, 2_000_000), "test": (2_000_000, 3_000_000)}
SUITES_DIR = Path(__file__).parent / "suites"
SUITE_NAMES = ("textgame-train", "textgame-test")
HOW_TO_ACT = (
    "Act with short game commands such as 'look', 'go north' or 'take key' (or the act tool). The observation's "
    "admissible_commands lists, one per line, every command that works right now; 'help' lists the verbs."
)


def split_of(seed: int) -> str:
    for split, (low, high) in SPLIT_SEEDS.items():
        if low <= seed < high:
            return split
    raise TaskNotFoundError(
        f"seed {seed} is outside every split; train 0-999999, valid 1000000-1999999, test 2000000-2999999"
    )


def parse_id(task_id: str) -> tuple[str, str, int]:
    """``coin-easy-17`` -> ``("coin", "easy", 17)``, or a ``TaskNotFoundError`` that says what ids look like."""
    family, _, rest = task_id.partition("-")
    difficulty, _, seed_text = rest.partition("-")
    known = (*GENERATORS, *CHALLENGES)
    if family not in known or difficulty not in DIFFICULTIES or not seed_text.isdigit():
        raise TaskNotFoundError(
            f"no textgame task {task_id!r}; ids look like <family>-<difficulty>-<seed>, e.g. 'coin-easy-0', with "
            f"family one of {', '.join(known)} and difficulty one of {', '.join(DIFFICULTIES)}"
        )
    seed = int(seed_text)
    split_of(seed)
    return family, difficulty, seed


@lru_cache(maxsize=1024)
def make_rules(family: str, difficulty: str, seed: int) -> Any:
    """The game's rules, generated from (family, difficulty, seed); cached, they are immutable."""
    module, _, function = GENERATORS[family][0].partition(":")
    generator = getattr(importlib.import_module(f"agentenvs.envs.textgame.{module}"), function)
    return generator(difficulty, seed, split_of(seed))


@lru_cache(maxsize=4096)
def load(task_id: str) -> Task:
    """Build the ``Task`` for a generated game id."""
    family, difficulty, seed = parse_id(task_id)
    if family in CHALLENGES:
        return _textworld_task(task_id, family, difficulty, seed)
    rules = make_rules(family, difficulty, seed)
    split = split_of(seed)
    params = {"family": family, "difficulty": difficulty, "seed": seed}
    config = TaskConfig(
        id=task_id,
        family="textgame",
        split=split,  # type: ignore[arg-type]
        difficulty=difficulty,  # type: ignore[arg-type]
        tags=[family, GENERATORS[family][1]],
        limits=LimitsSection(max_steps=MAX_STEPS[family][DIFFICULTIES.index(difficulty)]),
        checkpoints=[
            Checkpoint(name=g.name, check="textgame.subgoal", args={"id": g.name}, description=g.description)
            for g in rules.subgoals
        ],
        textgame=params,
    )
    return Task(
        id=task_id, family="textgame", instruction=f"{rules.objective}\n\n{HOW_TO_ACT}", config=config, params=params
    )


def _textworld_task(task_id: str, family: str, difficulty: str, seed: int) -> Task:
    """A TextWorld game (generated on first reset, with the textworld extra); each point of its score is a check."""
    challenge = CHALLENGES[family]
    index = DIFFICULTIES.index(difficulty)
    split = split_of(seed)
    params = {
        "family": family,
        "difficulty": difficulty,
        "seed": seed,
        "challenge": challenge.command,
        "tw_make": challenge.arguments(index, split),
    }
    config = TaskConfig(
        id=task_id,
        family="textgame",
        split=split,  # type: ignore[arg-type]
        difficulty=difficulty,  # type: ignore[arg-type]
        tags=[family, "textworld"],
        limits=LimitsSection(max_steps=challenge.max_steps[index]),
        checkpoints=[
            Checkpoint(
                name="score-1",
                check="textgame.subgoal",
                args={"id": "score-1"},
                description="Score the game's first point",
            )
        ],
        textgame=params,
    )
    instruction = (
        f"A TextWorld {challenge.command} game ({challenge.described[index]}). The game's first message states "
        f"the goal, where it gives one.\n\n{HOW_TO_ACT}"
    )
    return Task(id=task_id, family="textgame", instruction=instruction, config=config, params=params)


def fingerprint(rules: Any, walkthrough: list[str]) -> str:
    """A digest of a game's initial state, text, subgoals and solution, to freeze a suite."""
    digest = hashlib.sha256()
    state = rules.initial_state()
    for part in (rules.intro(state), repr(state), repr(rules.subgoals), "\n".join(walkthrough)):
        digest.update(part.encode())
    return digest.hexdigest()[:16]


def suite_path(name: str) -> Path:
    return SUITES_DIR / f"{name}.json"


@lru_cache(maxsize=8)
def suite_manifest(name: str) -> dict[str, Any]:
    """A frozen suite's manifest: its tasks with their fingerprints and solution lengths."""
    path = suite_path(name)
    if name not in SUITE_NAMES or not path.is_file():
        raise TaskNotFoundError(f"no textgame suite {name!r}; suites: {', '.join(SUITE_NAMES)}")
    return json.loads(path.read_text(encoding="utf-8"))


def suite(name: str) -> list[str]:
    """The task ids of a frozen suite, in order."""
    return [entry["id"] for entry in suite_manifest(name)["tasks"]]


class TextGameSource:
    """The registry's view of the family: every frozen suite's games, and any well-formed id on demand."""

    def ids(self) -> list[str]:
        seen: dict[str, None] = {}
        for name in SUITE_NAMES:
            if suite_path(name).is_file():
                seen.update(dict.fromkeys(suite(name)))
        return list(seen)

    def load(self, task_id: str) -> Task:
        return load(task_id)


SUITE_SEEDS = {"textgame-train": 0, "textgame-test": 2_000_000}
SUITE_SEEDS_PER_CELL = 5


def build_suite(name: str) -> dict[str, Any]:
    """Generate a suite's manifest: 5 seeds of every family and difficulty, each with its fingerprint."""
    from agentenvs.envs.textgame.engine import Game

    first = SUITE_SEEDS[name]
    tasks = []
    for family in GENERATORS:
        for difficulty in DIFFICULTIES:
            for seed in range(first, first + SUITE_SEEDS_PER_CELL):
                rules = make_rules(family, difficulty, seed)
                game = Game(rules)
                game.reset()
                walkthrough = game.walkthrough()
                tasks.append(
                    {
                        "id": f"{family}-{difficulty}-{seed}",
                        "family": family,
                        "difficulty": difficulty,
                        "seed": seed,
                        "split": split_of(seed),
                        "solution_length": len(walkthrough),
                        "fingerprint": fingerprint(rules, walkthrough),
                    }
                )
    return {"name": name, "version": 1, "tasks": tasks}


if __name__ == "__main__":
    for suite_name in SUITE_NAMES:
        suite_path(suite_name).write_text(json.dumps(build_suite(suite_name), indent=1) + "\n", encoding="utf-8")
        print(f"wrote {suite_path(suite_name)}")
