"""``TextGameEnv``: the text-game family behind the AgentEnv contract.

Observation: ``instruction``, ``text`` (the game's reply) and
``admissible_commands`` (one command per line: a single string, so the
observation stays in our ``Unicode`` space and works with check_env and
``AsyncVectorEnv(shared_memory=False)``). Info adds ``won``, ``lost``,
``moves``, ``admissible`` (whether the command was in the list),
``distance`` (length of the solver's plan from here, -1 once the game can
no longer be won) and ``distance_delta`` (+1 closer, 0, -1 farther).
TextWorld games (ids ``twcoin-*``, ``twtreasure-*``, ``twcooking-*``,
``twsimple-*``) run through the same env; see ``textworld_adapter``.
"""

from __future__ import annotations

import pickle
from collections import OrderedDict
from typing import Any, ClassVar

from gymnasium import spaces

from agentenvs.core.actions import ParsedAction, require_string_argument
from agentenvs.core.checks import Verdict, progress
from agentenvs.core.env import MAX_TEXT_CHARS, AgentEnv, StepOutcome
from agentenvs.core.errors import ActionError
from agentenvs.core.spaces import Unicode
from agentenvs.core.task import Task
from agentenvs.envs.textgame.catalog import make_rules
from agentenvs.envs.textgame.engine import NO_PLAN, Game
from agentenvs.envs.textgame.textworld_adapter import CHALLENGES, TextWorldGame, make_game

ACT_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "act",
        "description": "Type one command into the text game, e.g. 'go north', 'take key', 'open chest'.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string", "description": "The game command."}},
            "required": ["command"],
            "additionalProperties": False,
        },
    },
}
GAME_CACHE_SIZE = 32


class TextGameEnv(AgentEnv):
    """A generated text game. ``distance_signal=False`` skips the solver for the last bit of speed."""

    family = "textgame"
    native_tools: ClassVar[list[dict[str, Any]]] = [ACT_TOOL]
    oracle_changes_state = False  # it only reads (snapshot/fork replays skip it)
    prompt_description: ClassVar[str] = (
        "You play a text game. Send one short command per step, e.g. 'go north', 'take key', 'open chest', "
        "'put apple in fridge' (or call the act tool). The observation's admissible_commands lists every command "
        "that works now, one per line. The game ends by itself when you win or lose."
    )

    def __init__(self, task_id: str | None = None, *, distance_signal: bool = True, **kwargs: Any):
        self.distance_signal = distance_signal
        self._games: OrderedDict[str, Game | TextWorldGame] = OrderedDict()
        self._game: Game | TextWorldGame | None = None
        self._distance = NO_PLAN
        super().__init__(task_id, **kwargs)

    def __getstate__(self) -> dict[str, Any]:
        """Picklable (trainers send envs to subprocess vector envs): the games are rebuilt from the
        task on the other side, so only a game's position travels; the solver's caches start cold."""
        state = dict(self.__dict__)
        game = self._game
        if isinstance(game, TextWorldGame):
            raise pickle.PicklingError(
                "a TextWorld game in progress cannot be pickled (its state lives in TextWorld's engine); "
                "pickle the env before reset() or after close(), or make it in the subprocess "
                "(a factory such as lambda: agentenvs.make(task_id))"
            )
        state["_games"] = OrderedDict()
        state["_game"] = None if game is None else (game.state, game.moves)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        position = state.pop("_game")
        self.__dict__.update(state, _game=None)
        if position is not None and self._task is not None:
            game = self._game_for(self._task)
            assert isinstance(game, Game)
            game.state, game.moves = position
            self._game = game

    @property
    def quick_steps(self) -> bool:
        """Whether a step runs in memory and never blocks (a generated game, not one that waits on
        TextWorld's interpreter), so the env server may run it on the caller's thread, not the session's."""
        return isinstance(self._game, Game)

    def _extra_spaces(self) -> dict[str, spaces.Space[Any]]:
        return {"admissible_commands": Unicode(MAX_TEXT_CHARS)}

    def _save_state(self) -> tuple[Any, int, int] | None:
        """A generated game's position (its states are immutable); TextWorld's engine state is replayed."""
        game = self._game
        return (game.state, game.moves, self._distance) if isinstance(game, Game) else None

    def _load_state(self, state: tuple[Any, int, int]) -> None:
        assert self._task is not None
        game = self._game_for(self._task)
        game.state, game.moves, self._distance = state
        self._game = game

    def _game_for(self, task: Task) -> Game:
        """One Game per task, kept across resets so its solver and command caches stay warm."""
        game = self._games.get(task.id)
        if game is None:
            params = task.params
            if params["family"] in CHALLENGES:
                game = TextWorldGame(make_game(list(params["tw_make"]), int(params["seed"])))
            else:
                game = Game(make_rules(params["family"], params["difficulty"], int(params["seed"])))
            self._games[task.id] = game
            if len(self._games) > GAME_CACHE_SIZE:
                _close(self._games.popitem(last=False)[1])
        else:
            self._games.move_to_end(task.id)
        return game

    def _extras(self) -> dict[str, Any]:
        assert self._game is not None
        return {"admissible_commands": self._game.admissible_text}

    def _signal(self) -> dict[str, Any]:
        game = self._game
        assert game is not None
        info: dict[str, Any] = {"won": game.won, "lost": game.lost, "moves": game.moves}
        if isinstance(game, TextWorldGame):
            info.update(
                distance=game.distance(),
                distance_delta=game.intermediate_reward,
                intermediate_reward=game.intermediate_reward,
                tw_score=game.score,
                score_delta=getattr(game, "score_delta", 0),
            )
        elif self.distance_signal:
            before, now = self._distance, game.distance()
            if now == NO_PLAN:
                delta = 0 if before == NO_PLAN else -1
            elif before == NO_PLAN:
                delta = 1
            else:
                delta = (before > now) - (before < now)
            self._distance = now
            info["distance"] = now
            info["distance_delta"] = delta
        return info

    def _begin(self, task: Task, seed: int) -> StepOutcome:
        if task.params.get("family") is None:
            raise ValueError(f"task {task.full_id} is not a generated text game (its params name no family)")
        self._game = self._game_for(task)
        text = self._game.reset()
        self._distance = self._game.distance() if self.distance_signal and isinstance(self._game, Game) else NO_PLAN
        info = self._signal()
        return StepOutcome(text=text, extras=self._extras(), info=info)

    def _act(self, action: ParsedAction) -> StepOutcome:
        game = self._game
        assert game is not None
        if action.kind == "tool":
            command = require_string_argument(action, "command")
        else:
            command = action.text
        try:
            result = game.step(command)
        except ActionError as exc:
            info = self._signal()
            info.update({"admissible": False, "action_error": str(exc), "error_kind": "agent"})
            return StepOutcome(text=str(exc), extras=self._extras(), info=info)
        info = self._signal()
        info["admissible"] = result.admissible
        ended = game.won or game.lost
        return StepOutcome(text=result.text, extras=self._extras(), terminated=ended, info=info)

    def _check(self, task: Task) -> dict[str, bool]:
        assert self._game is not None
        return self._game.checks()

    def _verify(self, task: Task, final_action: ParsedAction | None) -> Verdict:
        game = self._game
        assert game is not None
        metrics = {"progress": progress(task.config.checkpoints, game.checks()), "moves": float(game.moves)}
        if game.won:
            return Verdict(score=1.0, success=True, detail="the goal holds in the final state", metrics=metrics)
        detail = "lost: an irreversible failure" if game.lost else "the goal does not hold in the final state"
        return Verdict(score=0.0, success=False, detail=detail, metrics=metrics)

    def _state_hash(self) -> str:
        assert self._game is not None
        return self._game.state_hash()

    def oracle_actions(self, variant: str = "oracle") -> list[Any]:
        """The solver's plan from the current state; ``"wrong"`` stops one move short of the goal."""
        if self._game is None:
            raise RuntimeError("call reset() before oracle_actions()")
        plan = self._game.walkthrough()
        if variant == "oracle":
            return [*plan, "done"]
        if variant == "wrong":
            return [*plan[:-1], "done"]
        raise NotImplementedError(f"no {variant!r} solution for text games (use 'oracle' or 'wrong')")

    def _release(self) -> None:
        for game in self._games.values():
            _close(game)
        self._games.clear()
        self._game = None


def _close(game: Game | TextWorldGame) -> None:
    if isinstance(game, TextWorldGame):
        game.close()
