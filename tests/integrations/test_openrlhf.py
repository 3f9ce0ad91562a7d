"""OpenRLHF: our agent file loaded as OpenRLHF loads ``--train.agent_func_path``, and OpenRLHF's own
``MultiTurnAgentExecutor.execute`` (its multi-turn rollout: tokenizing, the generation budget, token
concatenation, action ranges, rollout logprobs, rewards) run against one task per family.

Only the inference engine is scripted: vLLM needs a GPU, so ``llm_engine.generate`` returns what vLLM's
does (token ids ending in the end-of-turn token, the text without it, logprobs per token) for the
replies of a scripted policy, tokenized by a real tokenizer built here (no model can be downloaded).
The prompt is rendered from our dataset rows by OpenRLHF's own ``preprocess_data``, as its
``PromptDataset`` does with ``--data.apply_chat_template``.
"""

from __future__ import annotations

import asyncio
import gc
import importlib.util
import json
import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import agentenvs
from agentenvs.integrations.common import action_to_text, render_observation, scripted_actions
from tests.integrations.cases import CASES, SEED, TERMINAL, TEXTGAME, WEB, direct_run

try:
    from openrlhf.datasets.prompts_dataset import preprocess_data
    from openrlhf.utils.agent import AgentExecutorBase, MultiTurnAgentExecutor
except ImportError:  # the Makefile installs it: a CI run without it is a broken install, not a skip
    if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
        raise
    pytest.skip(
        "needs openrlhf: `make install` (pip install --no-deps openrlhf==0.11.2 pylatexenc)", allow_module_level=True
    )

from agentenvs.integrations.openrlhf import CHAT_FORMATS, OBSERVATION, agent_func_path, dataset_rows  # noqa: E402
from tests.integrations.tiny_tokenizer import CHATML, END, LLAMA3, LLAMA3_SPECIALS, build_tokenizer  # noqa: E402

MAX_LENGTH = 16384


def load_agent_executor(path: str) -> AgentExecutorBase:
    """``openrlhf.trainer.ray.vllm_engine._load_agent_executor``, line for line (that module imports vLLM)."""
    assert path.endswith(".py"), "Agent path must be a Python file"
    spec = importlib.util.spec_from_file_location("agent_module", path)
    agent_module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(agent_module)
    assert hasattr(agent_module, "AgentExecutor"), "Agent module must contain AgentExecutor class"
    agent_executor_cls = agent_module.AgentExecutor
    assert issubclass(agent_executor_cls, AgentExecutorBase), "AgentExecutor must inherit from AgentExecutorBase"
    return agent_executor_cls()


try:
    from vllm import SamplingParams
except ImportError:

    @dataclass
    class SamplingParams:
        """The two attributes ``execute`` reads and sets, as OpenRLHF's rollout sets them."""

        max_tokens: int | None = None
        logprobs: int | None = 1


@dataclass
class Logprob:
    logprob: float


@dataclass
class CompletionOutput:
    token_ids: list[int]
    text: str
    finish_reason: str
    logprobs: list[dict[int, Logprob]]


@dataclass
class RequestOutput:
    outputs: list[CompletionOutput]


class ScriptedEngine:
    """``llm_engine`` for ``execute``: ``generate`` answers as vLLM's engine does, with the next reply. With
    ``live`` it plays the reference solution of the episode the adapter just made (its last env), read at the
    first generation, after ``reset`` (some tasks' solutions exist only inside that episode's sandbox), and
    keeps that env's observations."""

    def __init__(self, tokenizer: Any, replies: list[str] | None = None, live: list[Any] | None = None):
        self.tokenizer, self.replies, self.live = tokenizer, replies, live
        self.requests: list[dict[str, Any]] = []
        self.outputs: list[CompletionOutput] = []
        self.observations: list[dict[str, Any]] = []

    def _follow(self, env: Any) -> None:
        step = env.step

        def recording(action: Any) -> Any:
            out = step(action)
            self.observations.append(out[0])
            return out

        env.step = recording
        self.replies = [reply(action) for action in scripted_actions(env)]

    async def generate(self, prompt_token_ids: list[int], sampling_params: Any, multi_modal_data: Any = None):
        n = len(self.requests)
        images = list(multi_modal_data["image"]) if multi_modal_data else []  # execute extends its list later
        if self.replies is None:
            self._follow(self.live[-1][0])
        self.requests.append(
            {"ids": list(prompt_token_ids), "max_tokens": sampling_params.max_tokens, "images": images}
        )
        text = self.replies[n] if n < len(self.replies) else "done"
        ids = self.tokenizer.encode(text, add_special_tokens=False) + [self.tokenizer.eos_token_id]
        logprobs = [{token: Logprob(-0.5 - n - i / 1000)} for i, token in enumerate(ids)]
        self.outputs.append(CompletionOutput(ids, text, "stop", logprobs))
        return RequestOutput([self.outputs[-1]])


def reply(action: Any) -> str:
    """What the scripted model writes: a native action as it is, a tool call in Qwen's tags."""
    return action if isinstance(action, str) else f"<tool_call>\n{action_to_text(action)}\n</tool_call>"


@pytest.fixture
def made(monkeypatch) -> list[Any]:
    """Every env the adapter makes, to check that each was closed."""
    envs: list[Any] = []
    real = agentenvs.make

    def recording(*args: Any, **kwargs: Any) -> Any:
        env = real(*args, **kwargs)
        envs.append((env, getattr(env.unwrapped, "_sandbox", None)))
        return env

    monkeypatch.setattr(agentenvs, "make", recording)
    return envs


def assert_closed(made: list[Any]) -> None:
    gc.collect()
    for env, sandbox in made:
        assert env.unwrapped._running is False
        assert sandbox is None or not sandbox.alive()


#: The test tokenizer's chat template, extra special tokens and eos for each chat format.
TEMPLATES = {"chatml": (CHATML, (), END), "llama3": (LLAMA3, LLAMA3_SPECIALS, "<|eot_id|>")}


def rollouts(task_id: str, make_kwargs: dict, made: list[Any], chat_format: str = "chatml") -> dict[str, Any]:
    """Two samples of one prompt, the reference solution and ``done`` at once, one after the other."""
    row = dataset_rows([task_id], seeds=[SEED], make_kwargs=make_kwargs, chat_format=chat_format)[0]
    reference = direct_run(task_id, make_kwargs)
    corpus = [row["prompt"][0]["content"], "done", CHAT_FORMATS[chat_format].user_turn]
    corpus += [render_observation(r["obs"], first=i == 0) for i, r in enumerate(reference)] * 3
    template, specials, eos = TEMPLATES[chat_format]
    tokenizer = build_tokenizer(corpus, template, specials, eos)
    prompt, label = preprocess_data(row, None, "prompt", "label", tokenizer.apply_chat_template)
    executor = load_agent_executor(agent_func_path())
    assert isinstance(executor, MultiTurnAgentExecutor)
    engines = {"oracle": ScriptedEngine(tokenizer, live=made), "idle": ScriptedEngine(tokenizer, ["done"])}
    results = {
        name: asyncio.run(executor.execute(prompt, label, SamplingParams(logprobs=1), MAX_LENGTH, tokenizer, engine))
        for name, engine in engines.items()
    }
    return {
        "row": row,
        "prompt": prompt,
        "results": results,
        "engines": engines,
        "tokenizer": tokenizer,
        "ref": reference,
        "format": CHAT_FORMATS[chat_format],
    }


def check_sequences(out: dict[str, Any], same_text: bool) -> None:
    """Each sample's tokens, ranges and logprobs are what the engine gave and the env said, in one conversation."""
    tokenizer, reference, fmt = out["tokenizer"], out["ref"], out["format"]
    for name, result in out["results"].items():
        engine, tokens, ranges = out["engines"][name], result["observation_tokens"], result["action_ranges"]
        # The action ranges are exactly the engine's tokens, turn by turn; what lies between is the env's.
        assert len(ranges) == len(engine.outputs)
        assert [tokens[s:e] for s, e in ranges] == [o.token_ids for o in engine.outputs]
        # Each generation saw the whole sequence so far, with the rest of the budget.
        for (start, _), request in zip(ranges, engine.requests):
            assert request["ids"] == tokens[:start] and request["max_tokens"] == MAX_LENGTH - start
        # Logprobs: the engine's on the model's tokens, 0 on the prompt's and the env's.
        logprobs = result["rollout_log_probs"]
        assert len(logprobs) == len(tokens)
        inside = {i for s, e in ranges for i in range(s, e)}
        assert all(logprobs[i] == 0.0 for i in range(len(tokens)) if i not in inside)
        assert [logprobs[s:e] for s, e in ranges] == [
            [next(iter(d.values())).logprob for d in o.logprobs] for o in engine.outputs
        ]

        # The first observation filled the prompt; each later one is a user turn of the chat format.
        first = render_observation(reference[0]["obs"], first=True)
        head = tokenizer.decode(tokens[: ranges[0][0]])
        filled = out["prompt"].replace(OBSERVATION, first.strip() if fmt.trim else first)
        assert OBSERVATION in out["prompt"] and (head == filled or not same_text)
        feedback = [tokenizer.decode(tokens[e:s]) for (_, e), (s, _) in zip(ranges, ranges[1:])]
        if name == "oracle":
            expected = [render_observation(r["obs"], first=False) for r in reference[1:-1]]
            assert len(feedback) == len(expected)
            for got, text in zip(feedback, expected):
                assert got == fmt.turn(text) or (not same_text and got.endswith(fmt.user_turn.split("{content}")[1]))
        assert ranges[-1][1] == len(tokens)  # the last step adds nothing after the model's turn

        # The whole sequence is the conversation the chat template renders, turn markers and all.
        if same_text:
            messages = [{"role": "system", "content": out["row"]["prompt"][0]["content"]}]
            messages.append({"role": "user", "content": first})
            for i, o in enumerate(engine.outputs):
                messages.append({"role": "assistant", "content": o.text})
                if i < len(feedback):
                    messages.append(
                        {"role": "user", "content": render_observation(reference[i + 1]["obs"], first=False)}
                    )
            rendered, decoded = tokenizer.apply_chat_template(messages, tokenize=False), tokenizer.decode(tokens)
            assert rendered.startswith(decoded) and rendered[len(decoded) :].strip() == ""


@pytest.mark.parametrize(("task_id", "make_kwargs", "same_text"), CASES)
def test_openrlhfs_executor_scores_the_oracle_one_and_doing_nothing_zero(task_id, make_kwargs, same_text, made):
    out = rollouts(task_id, make_kwargs, made)
    good, idle = out["results"]["oracle"], out["results"]["idle"]
    assert good["reward"] == 1.0 and float(good["scores"]) == 1.0
    assert idle["reward"] == 0.0 and float(idle["scores"]) == 0.0
    assert good["extra_logs"]["agentenvs_success"] == 1.0 and idle["extra_logs"]["agentenvs_success"] == 0.0
    assert good["truncated"] is False and json.loads(good["label"])["task_id"] == task_id
    check_sequences(out, same_text)
    assert len(made) == 4  # dataset_rows', direct_run's, and one per sample
    assert_closed(made)


def test_llama3_turns_are_what_its_template_renders(made):
    """The "llama3" chat format: <|eot_id|> ends the model's turn, and the template trims each turn's text
    (a terminal observation after a silent command begins with a newline)."""
    task_id, make_kwargs, _ = TERMINAL
    out = rollouts(task_id, make_kwargs, made, chat_format="llama3")
    assert float(out["results"]["oracle"]["scores"]) == 1.0
    check_sequences(out, same_text=True)
    assert_closed(made)


def test_a_rollout_cut_off_by_the_context_still_closes_its_env(made):
    """When the sequence reaches max_length, OpenRLHF stops without ``done`` and drops the instance."""
    task_id, make_kwargs, _ = TEXTGAME
    row = dataset_rows([task_id], seeds=[SEED])[0]
    tokenizer = build_tokenizer([row["prompt"][0]["content"], "look around", END])
    prompt, label = preprocess_data(row, None, "prompt", "label", tokenizer.apply_chat_template)
    executor = load_agent_executor(agent_func_path())
    engine = ScriptedEngine(tokenizer, ["look"] * 50)
    budget = len(tokenizer.encode(prompt)) + 300  # the first observation, and a few turns
    result = asyncio.run(executor.execute(prompt, label, SamplingParams(logprobs=None), budget, tokenizer, engine))
    assert 1 <= len(result["action_ranges"]) < 50 and result["reward"] == 0 and result["rollout_log_probs"] is None
    assert len(result["observation_tokens"]) >= budget  # the budget ended it, not the episode
    assert len(made) == 2
    assert_closed(made)


def test_a_bad_row_says_how_to_build_one():
    executor = load_agent_executor(agent_func_path())
    engine = ScriptedEngine(None, [])
    with pytest.raises(ValueError, match="dataset_rows"):
        asyncio.run(
            executor.execute(f"hello {OBSERVATION}", json.dumps({"seed": 0}), SamplingParams(), 100, None, engine)
        )
    with pytest.raises(ValueError, match="dataset_rows"):
        asyncio.run(
            executor.execute("no marker", '{"task_id": "textgame/coin-easy-0"}', SamplingParams(), 100, None, engine)
        )


def qwen2_vl_processor(tokenizer: Any) -> Any:
    """Qwen2-VL's real processor around ``tokenizer``, its image half only (the video half needs torchvision)."""
    from transformers import Qwen2VLProcessor
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    class ImageProcessor(Qwen2VLProcessor):
        @classmethod
        def get_attributes(cls) -> list[str]:
            return ["image_processor", "tokenizer"]

    return ImageProcessor(Qwen2VLImageProcessorPil(), tokenizer, chat_template=tokenizer.chat_template)


VISION = ("<|vision_start|>", "<|image_pad|>", "<|vision_end|>", "<|video_pad|>")


@pytest.mark.web
def test_screenshots_reach_a_vision_model_through_openrlhfs_vlm_path(made):
    """``images: auto``: each later screenshot goes to vLLM as ``multi_modal_data`` and to the trainer as the
    processor's pixel values, with the image tokens in the sequence, through OpenRLHF's own VLM code."""
    task_id, make_kwargs, _ = WEB
    row = dataset_rows([task_id], seeds=[SEED], make_kwargs=make_kwargs, images="auto")[0]
    processor = qwen2_vl_processor(build_tokenizer([row["prompt"][0]["content"], "done"], specials=VISION))
    prompt, label = preprocess_data(row, None, "prompt", "label", processor.tokenizer.apply_chat_template)
    engine = ScriptedEngine(processor.tokenizer, live=made)
    executor = load_agent_executor(agent_func_path())
    result = asyncio.run(executor.execute(prompt, label, SamplingParams(logprobs=1), MAX_LENGTH, processor, engine))
    screens = [obs["screenshot"] for obs in engine.observations]
    assert float(result["scores"]) == 1.0 and len(screens) >= 2

    # vLLM got every screenshot so far with each later generation, pixel for pixel (not the last: the episode ended).
    shown = [request["images"] for request in engine.requests]
    assert [len(images) for images in shown] == list(range(len(engine.requests)))
    for image, screen in zip(shown[-1], screens):
        assert np.array_equal(np.asarray(image), screen)
    # The trainer gets the processor's pixel values, and the sequence one image token per merged patch.
    grids = result["mm_train_inputs"]["image_grid_thw"]
    assert len(grids) == len(shown[-1]) and len(result["mm_train_inputs"]["pixel_values"]) == int(grids.prod(1).sum())
    pads = result["observation_tokens"].count(processor.tokenizer.convert_tokens_to_ids("<|image_pad|>"))
    assert pads == int(grids.prod(1).sum()) // processor.image_processor.merge_size**2
    assert_closed(made)
