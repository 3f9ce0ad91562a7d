"""What every trainer adapter shares: an agentenvs episode driven by a model's text.

A trainer's rollout code hands the env a model's raw output (a string) and
wants back chat messages, a reward and a done flag. ``TextEpisode`` does that
for any task id, reaching the env only through ``agentenvs.make`` (so every
family works, and families added later too):

- the first message carries the instruction and the first observation; later
  ones the step's observation (``text`` and the family's extras), rendered as
  the harness's own policies render it;
- an observation with an image (``screenshot``) becomes OpenAI-style content
  parts, text plus an ``image_url`` data URL, when ``images`` allows it;
- the model's text becomes an action: a ``<tool_call>{...}</tool_call>`` block
  or a JSON tool call becomes a tool call, one fenced block its contents,
  anything else the family's native string (a shell or game command);
- rewards are the env's own per step (sparse or dense, as made), and the
  final ``score``/``success`` arrive in the step metadata when the episode ends,
  with ``checks`` and ``progress`` after every step.
"""

from __future__ import annotations

import importlib
import json
import re
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Literal

import agentenvs
from agentenvs.core.actions import CONTROL_ACTIONS
from agentenvs.harness.observation import encode_png, is_image, png_data_url, to_jsonable
from agentenvs.harness.policies.prompts import observation_text, plain_text_action, system_prompt

ImageMode = Literal["auto", "never"]

#: Info keys passed to a trainer's metadata after every step (when present).
STEP_KEYS = ("task_id", "episode_id", "step", "checks", "progress", "action_error", "error_kind")
#: Info keys present when an episode ends.
FINAL_KEYS = ("score", "success", "final_action", "answer", "error", "verifier_detail")

_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


def require(module: str, extra: str, package: str) -> ModuleType:
    """Import ``module`` or raise an ImportError naming the extra that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"this adapter needs {package}: pip install 'agentenvs[{extra}]' (or pip install {package})"
        ) from exc


def action_from_text(text: str) -> str | dict[str, Any]:
    """A model's reply as an env action (see the module docstring); never raises.

    What is not a well-formed tool call stays text, so the env itself says what
    is wrong with it (``info["action_error"]``) and the step is spent, as the
    contract wants.
    """
    found = _TOOL_CALL.search(text)
    if found:
        try:
            call = json.loads(found.group(1))
        except json.JSONDecodeError:
            return found.group(1)
        if isinstance(call, dict):
            return call
        return found.group(1)
    return plain_text_action(text) or text


def action_to_text(action: Any) -> str:
    """An env action (a native string or a tool-call dict) as the text a model would write."""
    return action if isinstance(action, str) else json.dumps(action, ensure_ascii=False)


def scripted_actions(env: Any, variant: str = "oracle") -> list[Any]:
    """The task's reference (``"oracle"``) or plausible-but-wrong (``"wrong"``) actions, ending in a
    control action; call after ``reset``. The scripted policy the adapters' tests and examples play."""
    plan = list(env.unwrapped.oracle_actions(variant))
    last = plan[-1] if plan else None
    name = last.strip().lower() if isinstance(last, str) else last.get("name") if isinstance(last, dict) else None
    if name not in CONTROL_ACTIONS:
        plan.append("done")
    return plan


def step_metadata(info: dict[str, Any]) -> dict[str, Any]:
    """The JSON-able part of ``info`` a trainer logs: checks and progress each step, the score at the end."""
    return {key: to_jsonable(info[key]) for key in (*STEP_KEYS, *FINAL_KEYS) if key in info}


def observation_images(obs: dict[str, Any]) -> dict[str, Any]:
    """The observation's image arrays, by key (``screenshot`` where a family has a screen)."""
    return {key: value for key, value in obs.items() if is_image(value)}


def render_observation(obs: dict[str, Any], *, first: bool) -> str:
    """The observation as text: the instruction on the first turn, then ``text`` and the extras."""
    fields = {key: to_jsonable(value) for key, value in obs.items() if not is_image(value)}
    return observation_text(fields, include_instruction=first)


def message_content(obs: dict[str, Any], *, first: bool, images: ImageMode = "auto") -> str | list[dict[str, Any]]:
    """A chat message's content: the text, or text and ``image_url`` parts when the observation has images."""
    text = render_observation(obs, first=first)
    pictures = observation_images(obs) if images == "auto" else {}
    if not pictures:
        return text
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}]
    for array in pictures.values():
        parts.append({"type": "image_url", "image_url": {"url": png_data_url(encode_png(array))}})
    return parts


def content_text(content: str | list[dict[str, Any]]) -> str:
    """The text of a message's content, whichever form it has."""
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content if part.get("type") == "text")


#: The answer to a reply's second and later tool calls: the env takes one action per turn.
NOT_RUN = "Not run: one action per turn."


def env_messages(call_ids: list[str], shown: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the env says after a model's reply. To tool calls: a ``tool`` message with the text for the
    first (the action taken), "not run" for the others, and a user message with any images (a tool
    message holds text only). To plain text: a user message with ``shown`` as it is."""
    if not call_ids:
        return [{"role": "user", "content": shown}]
    answers = [{"role": "tool", "tool_call_id": call_ids[0], "content": content_text(shown)}]
    answers += [{"role": "tool", "tool_call_id": call_id, "content": NOT_RUN} for call_id in call_ids[1:]]
    if not isinstance(shown, str):
        answers.append({"role": "user", "content": [part for part in shown if part.get("type") != "text"]})
    return answers


@dataclass
class StepResult:
    """One step as a trainer sees it: the next user message (``None`` once done), reward, done, metadata."""

    content: str | list[dict[str, Any]] | None
    reward: float
    done: bool
    metadata: dict[str, Any]
    observation: dict[str, Any] = field(repr=False)


class TextEpisode:
    """One agentenvs env, stepped with a model's text.

    ``task_id`` is ``"<family>/<task-id>"``; ``make_kwargs`` go to ``agentenvs.make``
    (``backend``, ``reward_mode``, ``max_steps``, ``screenshot``, ...). The env is
    made once and reused by every ``reset``; ``close`` releases it.
    """

    def __init__(
        self,
        task_id: str,
        *,
        seed: int | None = None,
        make_kwargs: dict[str, Any] | None = None,
        images: ImageMode = "auto",
    ):
        if images not in ("auto", "never"):
            raise ValueError(f"images must be 'auto' or 'never', got {images!r}")
        self.task_id = task_id
        self.seed = seed
        self.images: ImageMode = images
        self.env = agentenvs.make(task_id, **(make_kwargs or {}))
        self.last_obs: dict[str, Any] | None = None
        self.last_info: dict[str, Any] = {}
        self.total_reward = 0.0
        self.steps = 0
        self.done = False

    @property
    def family(self) -> str:
        return self.env.unwrapped.family

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The env's actions as OpenAI function schemas (``done``/``fail``/``submit`` included)."""
        return self.env.unwrapped.action_tools

    def system_prompt(self) -> str:
        """How to act in this family: the harness's generic prompt and the env's own description."""
        return system_prompt(self.family, self.env.unwrapped.prompt_description)

    def reset(self, seed: int | None = None) -> tuple[str | list[dict[str, Any]], dict[str, Any]]:
        """Start an episode; the first user message's content (instruction + observation) and the info."""
        chosen = self.seed if seed is None else seed
        obs, info = self.env.reset(seed=chosen)
        self.last_obs, self.last_info = obs, info
        self.total_reward, self.steps, self.done = 0.0, 0, False
        return message_content(obs, first=True, images=self.images), info

    def step(self, text: str | dict[str, Any]) -> StepResult:
        """Play a model's reply (or an action dict) as one env step."""
        if self.done:
            raise RuntimeError(f"the episode of {self.task_id} is over; reset first")
        action = action_from_text(text) if isinstance(text, str) else text
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.last_obs, self.last_info = obs, info
        self.total_reward += float(reward)
        self.steps += 1
        self.done = bool(terminated or truncated)
        metadata = step_metadata(info)
        metadata["truncated"] = bool(truncated)
        content = None if self.done else message_content(obs, first=False, images=self.images)
        return StepResult(content=content, reward=float(reward), done=self.done, metadata=metadata, observation=obs)

    @property
    def score(self) -> float:
        """The final evaluator's score, 0 until the episode ends."""
        return float(self.last_info.get("score", 0.0)) if self.done else 0.0

    def summary(self) -> dict[str, Any]:
        """The episode so far, JSON-able: score, success, return, steps, checks, progress, error kind."""
        info = self.last_info
        return {
            "task_id": self.task_id,
            "score": self.score,
            "success": bool(info.get("success", False)) if self.done else False,
            "return": self.total_reward,
            "steps": self.steps,
            "done": self.done,
            "progress": float(info.get("progress", 0.0)),
            "checks": to_jsonable(info.get("checks", {})),
            "error_kind": info.get("error_kind"),
        }

    def close(self) -> None:
        self.env.close()
