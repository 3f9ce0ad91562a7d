"""OpenRLHF: any agentenvs task as an agent of ``MultiTurnAgentExecutor`` (``pip install 'agentenvs[openrlhf]'``).

OpenRLHF (0.11) runs multi-turn rollouts from a Python file named by
``--train.agent_func_path``: in each vLLM rollout actor it loads the file's
``AgentExecutor`` (here ``MultiTurnAgentExecutor`` bound to ``AgentInstance``)
and, per prompt, makes an ``AgentInstance()`` with no arguments, calls
``reset({"observation": prompt, "label": label})`` and then, after each
generation, ``step({"action_text": ..., ...})`` until it says ``done``. It
trains on one token sequence: the prompt's tokens, then per turn the model's
tokens and the tokens of the text ``step`` returned. The file to pass is
``agentenvs/integrations/openrlhf_agent.py`` (``agent_func_path()`` gives its path).

The dataset row carries everything, since the instance gets no arguments:
``label`` is JSON naming the task (``{"task_id": ..., "seed": ..., "make_kwargs": ...,
"images": ..., "chat_format": ...}``) and ``prompt`` is a system message and a
user message holding ``OBSERVATION``, which ``reset`` replaces with the live
env's instruction and first observation; ``dataset_rows`` builds both, for
``--data.input_key prompt --data.label_key label --data.apply_chat_template``.

Each step plays the reply as ``common.action_from_text`` reads it (a
``<tool_call>`` block, a fenced block, or the family's native string) in a
thread, so the rollout actor's event loop keeps generating for other prompts.
``environment_feedback`` is the next observation as a user turn followed by the
assistant's turn header, in the model's chat format (``CHAT_FORMATS``; ChatML,
Qwen's, by default), so the tokens stay the conversation the chat template
would render. The model's reply ends in its end-of-turn token, which vLLM keeps
in the token ids and leaves out of the text; so the feedback starts after it.
The step that ends the episode adds nothing. ``rewards`` is the env's reward
(the final score on the last step, by default), ``scores`` the evaluator's
final score (0 before the end), and ``extra_logs`` the episode's success,
steps, progress and whether an infra failure ended it. The env is closed when
the episode ends, when a step fails, and when OpenRLHF drops an instance whose
episode did not end (the sequence reached ``--data.max_len``; it scores 0).

Images: with ``"images": "auto"`` each later observation's screenshot is an
``environment_images`` PIL image, with the chat format's image placeholder at
the start of the feedback, which OpenRLHF's VLM path tokenizes with the
model's processor. The first observation's screenshot cannot go this way:
OpenRLHF tokenizes what ``reset`` returns as text, with the dataset row's own
images only, so a VLM sees the first screen after its first action.
"""

from __future__ import annotations

import asyncio
import json
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentenvs.integrations.common import (
    ImageMode,
    TextEpisode,
    observation_images,
    render_observation,
    require,
)

_agent = require("openrlhf.utils.agent", "openrlhf", "openrlhf")
torch = require("torch", "openrlhf", "torch")

#: What a dataset row's user message holds; ``reset`` puts the instruction and first observation there.
OBSERVATION = "<agentenvs:observation>"


@dataclass(frozen=True)
class ChatFormat:
    """How a chat template writes a user turn after the model's reply, and the image placeholder a VLM's
    processor expands. ``user_turn`` follows the model's end-of-turn token and ends with the next
    assistant header; ``{content}`` is the observation, stripped first where the template trims."""

    user_turn: str
    image: str = ""
    trim: bool = False

    def turn(self, content: str) -> str:
        return self.user_turn.format(content=content.strip() if self.trim else content)


CHAT_FORMATS: dict[str, ChatFormat] = {
    # Qwen 2.5/3, and any ChatML template: the model's turn ends at <|im_end|>, its eos.
    "chatml": ChatFormat(
        "\n<|im_start|>user\n{content}<|im_end|>\n<|im_start|>assistant\n",
        image="<|vision_start|><|image_pad|><|vision_end|>",
    ),
    # Llama 3.x: the turn ends at <|eot_id|>, its eos.
    "llama3": ChatFormat(
        "<|start_header_id|>user<|end_header_id|>\n\n{content}<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\n",
        image="<|image|>",
        trim=True,
    ),
}


@dataclass(frozen=True)
class Label:
    """What a dataset row's ``label`` says about its episode."""

    task_id: str
    seed: int | None = None
    make_kwargs: dict[str, Any] | None = None
    images: ImageMode = "never"
    chat_format: str = "chatml"

    @classmethod
    def parse(cls, label: str | dict[str, Any]) -> Label:
        spec = json.loads(label) if isinstance(label, str) else dict(label)
        if not isinstance(spec, dict) or not isinstance(spec.get("task_id"), str):
            raise ValueError(
                'an agentenvs label is JSON like {"task_id": "<family>/<task-id>", "seed": 0}: '
                f"build rows with agentenvs.integrations.openrlhf.dataset_rows (got {label!r})"
            )
        unknown = set(spec) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown keys in an agentenvs label: {sorted(unknown)}")
        if spec.get("chat_format", "chatml") not in CHAT_FORMATS:
            raise ValueError(f"chat_format must be one of {sorted(CHAT_FORMATS)}, got {spec['chat_format']!r}")
        if spec.get("images", "never") not in ("auto", "never"):
            raise ValueError(f"images must be 'auto' or 'never', got {spec['images']!r}")
        return cls(**spec)

    def dumps(self) -> str:
        return json.dumps({key: value for key, value in self.__dict__.items() if value is not None}, sort_keys=True)


def dataset_rows(
    task_ids: Sequence[str],
    seeds: Sequence[int] = (0,),
    *,
    make_kwargs: dict[str, Any] | None = None,
    images: ImageMode = "never",
    chat_format: str = "chatml",
) -> list[dict[str, Any]]:
    """One row per (task, seed): ``prompt`` (the env's system prompt, and a user message that ``reset``
    fills) and ``label`` (the JSON ``AgentInstance`` makes the env from)."""
    systems: dict[str, str] = {}
    for task_id in task_ids:
        episode = TextEpisode(task_id, make_kwargs=make_kwargs)
        systems[task_id] = episode.system_prompt()
        episode.close()
    return [
        {
            "prompt": [
                {"role": "system", "content": systems[task_id]},
                {"role": "user", "content": OBSERVATION},
            ],
            "label": Label(task_id, int(seed), make_kwargs or None, images, chat_format).dumps(),
        }
        for task_id in task_ids
        for seed in seeds
    ]


def agent_func_path() -> str:
    """The file to pass as ``--train.agent_func_path``."""
    return str(Path(__file__).with_name("openrlhf_agent.py"))


class AgentInstance(_agent.AgentInstanceBase):
    """One rollout's episode: made and reset from the label in ``reset``, stepped with each reply."""

    def __init__(self, *args: Any, **kwargs: Any):
        self.episode: TextEpisode | None = None
        self.format = CHAT_FORMATS["chatml"]
        self.images: ImageMode = "never"

    async def reset(self, states: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """Make and reset the label's env; the prompt with the instruction and first observation in it."""
        prompt = states["observation"]
        if OBSERVATION not in prompt:
            raise ValueError(f"the prompt has no {OBSERVATION} to fill: build rows with dataset_rows")
        label = Label.parse(states["label"])
        self.close()  # an episode of an earlier reset
        self.format, self.images = CHAT_FORMATS[label.chat_format], label.images
        self.episode = await asyncio.to_thread(
            TextEpisode, label.task_id, seed=label.seed, make_kwargs=label.make_kwargs, images="never"
        )
        # OpenRLHF drops the instance without a word when the context is full or generation fails;
        # then the env is closed as the instance is freed.
        self._release = weakref.finalize(self, self.episode.close)
        try:
            text, _ = await asyncio.to_thread(self.episode.reset)
        except BaseException:
            self.close()
            raise
        first = str(text).strip() if self.format.trim else str(text)
        return {"observation": prompt.replace(OBSERVATION, first, 1)}

    async def step(self, states: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """Play the reply; the next observation as a user turn, the rewards, and done."""
        episode = self.episode
        if episode is None:
            raise RuntimeError("step before reset, or after the episode ended")
        try:
            result = await asyncio.to_thread(episode.step, states["action_text"])
        except BaseException:
            self.close()
            raise
        out: dict[str, Any] = {
            "rewards": torch.tensor(result.reward),
            "scores": torch.tensor(episode.score),
            "done": result.done,
            "extra_logs": self._logs(),
            "environment_feedback": "",
        }
        if result.done:
            self.close()
            return out
        text = render_observation(result.observation, first=False)
        pictures = list(observation_images(result.observation).values()) if self.images == "auto" else []
        if pictures:
            from PIL import Image

            text = self.format.image * len(pictures) + "\n" + text
            out["environment_images"] = [Image.fromarray(array) for array in pictures]
        out["environment_feedback"] = self.format.turn(text)
        return out

    def _logs(self) -> dict[str, float]:
        """Numbers OpenRLHF logs per sample (it keeps the last step's)."""
        summary = self.episode.summary() if self.episode else {}
        return {
            "agentenvs_success": float(summary.get("success", False)),
            "agentenvs_steps": float(summary.get("steps", 0)),
            "agentenvs_progress": float(summary.get("progress", 0.0)),
            "agentenvs_infra_error": float(summary.get("error_kind") == "infra"),
        }

    def close(self) -> None:
        """Release the env (its sandbox, container or browser)."""
        if self.episode is not None:
            self.episode = None
            self._release()


class AgentExecutor(_agent.MultiTurnAgentExecutor):
    """OpenRLHF's own multi-turn executor over ``AgentInstance``; what the agent file exports."""

    def __init__(self) -> None:
        super().__init__(AgentInstance)


__all__ = [
    "CHAT_FORMATS",
    "OBSERVATION",
    "AgentExecutor",
    "AgentInstance",
    "ChatFormat",
    "Label",
    "agent_func_path",
    "dataset_rows",
]
