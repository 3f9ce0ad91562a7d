"""Who is to blame when a step fails: exceptions the agent's action provokes score 0, never infra.

A tiny family over a real directory (its "sandbox"): the agent writes files
there, the checkers decode them and the verifier reads ``reward.txt``. An
agent that puts a directory where the verifier reads a file, writes bytes
that do not decode, or makes the env recurse without end, fails its episode;
a sandbox that dies on its own is infra; ``AgentFault`` says the agent killed it.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from agentenvs.core import AgentEnv, ParsedAction, StepOutcome, Task, TaskConfig, Verdict
from agentenvs.core.actions import MAX_ACTION_DEPTH
from agentenvs.core.errors import AgentFault, SandboxError


def _nest(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = {"a": value}
    return value


class FilesEnv(AgentEnv):
    """Native actions: ``write NAME TEXT``, ``writehex NAME HEX``, ``mkdir NAME``, ``nest N``, ``kill``, ``crash``.

    The verifier writes nothing itself: it reads ``reward.txt``, which ``write
    reward.txt 1`` sets. ``nest N`` makes the env serialise a structure N deep
    (a RecursionError for large N); ``kill`` stands for an agent that killed
    every process of its sandbox; ``crash`` for a sandbox that died on its own.
    """

    family = "files"

    def _begin(self, task: Task, seed: int) -> StepOutcome:
        self.root = Path(tempfile.mkdtemp(prefix="agentenvs-files-"))
        return StepOutcome(text="empty directory")

    def _act(self, action: ParsedAction) -> StepOutcome:
        verb, _, rest = action.text.partition(" ")
        name, _, data = rest.partition(" ")
        if verb == "write":
            (self.root / name).write_text(data)
        elif verb == "writehex":
            (self.root / name).write_bytes(bytes.fromhex(data))
        elif verb == "mkdir":
            (self.root / name).mkdir()
        elif verb == "nest":
            json.dumps(_nest(int(name)))
        elif verb == "kill":
            raise AgentFault("the agent killed every process of its sandbox")
        elif verb == "crash":
            raise SandboxError("the sandbox host went away")
        return StepOutcome(text=f"did {verb}")

    def _check(self, task: Task) -> dict[str, bool]:
        notes = self.root / "notes.txt"
        return {"notes": notes.is_file() and "hello" in notes.read_bytes().decode("utf-8")}

    def _verify(self, task: Task, final_action: ParsedAction | None) -> Verdict:
        path = self.root / "reward.txt"
        score = float(path.read_text() or 0) if path.exists() else 0.0
        return Verdict(score=score, success=score >= 1.0, detail=f"reward {score}")

    def _state_hash(self) -> str:
        return ",".join(sorted(p.name for p in self.root.iterdir()))

    def _end(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def make_task() -> Task:
    config = TaskConfig.model_validate({"limits": {"max_steps": 10}, "checkpoints": [{"name": "notes", "check": "x"}]})
    return Task(id="files", family="files", instruction="write reward.txt", config=config)


@pytest.fixture
def env():
    e = FilesEnv(task=make_task(), reward_mode="dense")
    yield e
    e.close()


def play(env: FilesEnv, actions: list[Any]) -> tuple[list[tuple], dict[str, Any]]:
    env.reset(seed=0)
    steps = []
    for action in actions:
        steps.append(env.step(action))
        if steps[-1][2] or steps[-1][3]:
            break
    return steps, steps[-1][4]


def assert_agent_failure(steps: list[tuple], info: dict[str, Any], exception: str) -> None:
    obs, _, terminated, truncated, _ = steps[-1]
    assert terminated and not truncated
    assert (info["score"], info["success"], info["error_kind"]) == (0.0, False, "agent")
    assert info["error"].startswith(f"{exception}: "), info["error"]
    assert exception in obs["text"] and "scored 0" in obs["text"]


def assert_usable(env: FilesEnv) -> None:
    """The env resets after a fault and a clean episode still scores 1."""
    steps, info = play(env, ["write reward.txt 1", "done"])
    assert info["score"] == 1.0 and info["success"] is True and info.get("error_kind") is None


def test_a_directory_where_the_verifier_reads_a_file_is_the_agents_failure(env):
    steps, info = play(env, ["write notes.txt hello", "mkdir reward.txt", "done"])
    assert_agent_failure(steps, info, "IsADirectoryError")
    assert "in _verify" in info["error"] and "test_env_faults.py" in info["error"]
    # Dense rewards still sum to the final progress (0) plus the score (0): the progress paid is taken back.
    rewards = [s[1] for s in steps]
    assert rewards[0] == 1.0 and sum(rewards) == 0.0 and info["progress"] == 0.0
    obs, reward, terminated, _, after = env.step("write reward.txt 1")
    assert terminated and reward == 0.0 and "reset" in after["action_error"]
    assert_usable(env)


def test_agent_written_bytes_that_do_not_decode_fail_the_checker_and_the_agent(env):
    steps, info = play(env, ["writehex notes.txt fffe00", "done"])
    assert len(steps) == 1
    assert_agent_failure(steps, info, "UnicodeDecodeError")
    assert "in _check" in info["error"]
    assert_usable(env)


def test_recursion_the_action_provokes_is_the_agents_failure(env):
    steps, info = play(env, ["nest 10", "nest 100000"])
    assert steps[0][4].get("error_kind") is None and steps[0][0]["text"] == "did nest"
    assert_agent_failure(steps, info, "RecursionError")
    assert_usable(env)


def test_agent_fault_is_the_agents_failure_and_a_dead_sandbox_is_infra(env):
    steps, info = play(env, ["kill"])
    assert_agent_failure(steps, info, "AgentFault")
    assert "killed every process" in info["error"]
    steps, info = play(env, ["crash"])
    obs, reward, terminated, truncated, _ = steps[-1]
    assert truncated and not terminated and info["error_kind"] == "infra"
    assert info["error"] == "the sandbox host went away"
    assert_usable(env)


DEEP = 100_000


@pytest.mark.parametrize(
    "action",
    [
        {"name": "write", "arguments": _nest(DEEP)},
        {"name": "write", "arguments": {"list": [[[[[]]]]] * 3, "deep": _nest(DEEP)}},
        {"name": "write", "arguments": '{"a": ' * DEEP + "1" + "}" * DEEP},
        '{"name": "write", "arguments": ' + '{"a": ' * DEEP + "1" + "}" * DEEP + "}",
        '{"name": "write", "arguments": {"a": ' + "[" * DEEP + "]" * DEEP + "}}",
        {"type": "function", "function": {"name": "write", "arguments": _nest(MAX_ACTION_DEPTH)}},
    ],
    ids=["dict", "dict-beside-lists", "arguments-string", "json-string", "json-string-arrays", "openai-shape"],
)
def test_deeply_nested_actions_are_action_errors(env, action):
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(action)
    assert f"nests deeper than {MAX_ACTION_DEPTH} levels" in info["action_error"]
    assert info["error_kind"] == "agent" and info["step"] == 1
    assert not terminated and not truncated and "Invalid action" in obs["text"]
    obs, *_, info = env.step("write reward.txt 1")
    assert obs["text"] == "did write" and info["action_error"] is None and info["step"] == 2


def test_a_cyclic_action_is_an_action_error(env):
    cyclic: dict[str, Any] = {"name": "write"}
    cyclic["arguments"] = {"self": cyclic}
    env.reset(seed=0)
    *_, info = env.step(cyclic)
    assert "nests deeper" in info["action_error"]
