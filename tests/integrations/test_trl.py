"""TRL: our ``environment_factory`` driven by TRL's own ``GRPOTrainer``: its generation, tool-call parsing,
tool loop, reward and one optimizer step, one task per family.

No model can be downloaded here, so the test builds one: a byte-level BPE tokenizer trained on the
episode's own text (the ``tokenizers`` library) with TRL's Qwen2.5 chat template, and a tiny random
Qwen2 whose ``generate`` is forced, token by token, to write the scripted policy's tool calls (a
logits processor). Everything after the logits is TRL's and transformers' own code.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from agentenvs.integrations.common import action_to_text, render_observation, scripted_actions
from tests.integrations.cases import SEED, TERMINAL, TEXTGAME, WEB, direct_run

trl = pytest.importorskip("trl", reason="needs trl: pip install 'agentenvs[trl]'")
torch = pytest.importorskip("torch")
from datasets import Dataset  # noqa: E402
from transformers import (  # noqa: E402
    LogitsProcessor,
    LogitsProcessorList,
    PreTrainedTokenizerFast,
    Qwen2Config,
    Qwen2ForCausalLM,
)
from trl import GRPOConfig, GRPOTrainer  # noqa: E402
from trl.chat_template_utils import qwen2_5_chat_template  # noqa: E402

from agentenvs.integrations.trl import EPISODE_OVER, AgentEnvsFactory, dataset_rows  # noqa: E402
from tests.integrations.tiny_tokenizer import END, build_tokenizer  # noqa: E402

FINAL_REPLY = "I am finished." + END


def tool_call(action: Any) -> str:
    """The assistant turn a Qwen2.5-style model writes to call ``act`` (as TRL's template renders it)."""
    call = {"name": "act", "arguments": {"action": action_to_text(action)}}
    return f"<tool_call>\n{json.dumps(call)}\n</tool_call>{END}"


class ForceReply(LogitsProcessor):
    """Each row's next token is the next one of its scripted reply; nothing else can be sampled."""

    def __init__(self, replies: list[list[int]], start: int, eos: int):
        self.replies, self.start, self.eos = replies, start, eos

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        forced = torch.full_like(scores, float("-inf"))
        written = input_ids.shape[1] - self.start
        for row, reply in enumerate(self.replies):
            forced[row, reply[written] if written < len(reply) else self.eos] = 0.0
        return forced


class ScriptedQwen2(Qwen2ForCausalLM):
    """A real (tiny, random) Qwen2 whose sampling is forced to a scripted policy's reply, turn by turn
    (one turn per tool response so far), until the env says the episode is over. Like a sampled policy,
    the rollouts of one prompt differ: the first of each GRPO group plays the live episode's reference
    solution (read from its env, as the other adapters' scripted policies do), the second calls done."""

    def script(self, tokenizer: PreTrainedTokenizerFast, factory: AgentEnvsFactory) -> None:
        self._tokenizer, self._factory = tokenizer, factory
        self.turns: dict[str, list[str]] = {"idle": [tool_call("done")]}

    def reply(self, text: str, row: int) -> str:
        turn = text.count("<tool_response>")
        if turn == 0:  # the whole batch: TRL's rollout i is its i-th environment instance
            variant = "oracle" if row % 2 == 0 else "idle"
            if variant == "oracle":
                live = self._factory.instances[row]._episode.env
                self.turns["oracle"] = [tool_call(action) for action in scripted_actions(live)]
        else:  # a rollout's first call says which it is
            variant = "oracle" if self.turns["oracle"][0] in text else "idle"
        plan = self.turns[variant]
        return FINAL_REPLY if EPISODE_OVER in text or turn >= len(plan) else plan[turn]

    def generate(self, input_ids: Any = None, **kwargs: Any) -> Any:
        texts = self._tokenizer.batch_decode(input_ids.tolist())
        replies = [self._tokenizer.encode(self.reply(text, row)) for row, text in enumerate(texts)]
        force = ForceReply(replies, input_ids.shape[1], self._tokenizer.eos_token_id)
        processors = LogitsProcessorList([*(kwargs.pop("logits_processor", None) or []), force])
        return super().generate(input_ids=input_ids, logits_processor=processors, **kwargs)


def train_one_step(task_id: str, make_kwargs: dict, tmp_path) -> dict[str, Any]:
    rows = dataset_rows([task_id], seeds=[SEED])
    reference = direct_run(task_id, make_kwargs)
    corpus = [rows[0]["prompt"][0]["content"], tool_call("done"), FINAL_REPLY]
    corpus += [render_observation(r["obs"], first=i == 0) for i, r in enumerate(reference)] * 3
    tokenizer = build_tokenizer(corpus, qwen2_5_chat_template)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=16384,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(0)
    model = ScriptedQwen2(config)
    factory = AgentEnvsFactory(make_kwargs=make_kwargs)
    model.script(tokenizer, factory)

    seen: dict[str, Any] = {}

    def record(prompts, completions, completion_ids, environments, **kwargs) -> list[float]:
        """A zero-weight reward that keeps what TRL passes rewards, before ``get_reward`` runs."""
        seen.update(prompts=prompts, completions=completions, completion_ids=completion_ids)
        live = [e._episode.env for e in environments]
        seen["envs"] = [(e, env, getattr(env.unwrapped, "_sandbox", None)) for e, env in zip(environments, live)]
        return [0.0] * len(completions)

    args = GRPOConfig(
        output_dir=str(tmp_path),
        per_device_train_batch_size=2,
        num_generations=2,
        max_steps=1,
        max_completion_length=4096,
        learning_rate=1e-3,
        beta=0.0,
        reward_weights=[0.0],
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        use_cpu=True,
        seed=0,
    )
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[record],
        args=args,
        train_dataset=Dataset.from_list(rows),
        processing_class=tokenizer,
        environment_factory=factory,
    )
    before = [p.detach().clone() for p in model.parameters()]
    with factory:
        trainer.train()
    changed = any(not torch.equal(a, b) for a, b in zip(before, model.parameters()))
    logs = {k: v for entry in trainer.state.log_history for k, v in entry.items()}
    assert len(factory.instances) == 2  # TRL's probe, reused, and one more for the group's second rollout
    return {"seen": seen, "logs": logs, "reference": reference, "changed": changed, "model": model}


#: The web family is left out here: a run of it took 30 s (a long page, browser resets); its
#: text goes through the same code, and its screenshots are tested below.
CASES = [pytest.param(*TEXTGAME, id="textgame"), pytest.param(*TERMINAL, id="terminal")]


@pytest.mark.parametrize(("task_id", "make_kwargs", "same_text"), CASES)
def test_grpo_trains_a_step_on_the_envs_reward(task_id, make_kwargs, same_text, tmp_path, monkeypatch):
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    out = train_one_step(task_id, make_kwargs, tmp_path)
    seen, logs, reference, model = out["seen"], out["logs"], out["reference"], out["model"]
    oracle_turns = model.turns["oracle"]

    # The env's score is TRL's reward: 1.0 for the reference solution, 0.0 for done at once; so the group's
    # advantages differ, and the step trains on them.
    assert logs["rewards/AgentEnvsEnvironment/mean"] == 0.5 and logs["reward"] == 0.5
    assert [e.summary["score"] for e, _, _ in seen["envs"]] == [1.0, 0.0]
    assert logs["frac_reward_zero_std"] == 0.0 and logs["grad_norm"] > 0
    assert out["changed"], "the optimizer step changed no weight"

    # The completions TRL parsed: tool calls of `act`, each answered by the env's observation.
    expected = [render_observation(r["obs"], first=False) for r in reference[1:]]
    expected[-1] += f"\n{EPISODE_OVER}"
    for row, (prompt, completion, ids) in enumerate(zip(seen["prompts"], seen["completions"], seen["completion_ids"])):
        first = render_observation(reference[0]["obs"], first=True)  # reset's text, after the row's empty one
        assert prompt[-1]["content"] == first or not same_text
        tool_results = [m["content"] for m in completion if m["role"] == "tool"]
        calls = [m["tool_calls"][0]["function"] for m in completion if m.get("tool_calls")]
        assert all(call["name"] == "act" for call in calls) and len(calls) == len(tool_results)
        assert completion[-1] == {"role": "assistant", "content": FINAL_REPLY.removesuffix(END)}
        if row == 0:
            assert len(tool_results) == len(expected) and (tool_results == expected or not same_text)
            assert [tool_call(call["arguments"]["action"]) for call in calls] == oracle_turns[: len(calls)]
        else:
            assert calls == [{"name": "act", "arguments": {"action": "done"}}] and len(tool_results) == 1
        # The tool's text is in the very token ids TRL trains on.
        assert tool_results[-1] in model._tokenizer.decode(ids)

    # Every env was closed once graded, and nothing is left for the factory to close.
    for instance, env, sandbox in seen["envs"]:
        assert instance._episode is None and env.unwrapped._running is False
        assert sandbox is None or not sandbox.alive()
    assert (seen["envs"][0][2] is not None) == task_id.startswith("terminal/")


def test_a_rollout_left_unfinished_is_graded_on_its_state_or_scored_zero():
    """What TRL leaves when the model stops calling tools before ``done``: ``get_reward`` ends the episode."""
    task_id, make_kwargs = TERMINAL[:2]
    for unfinished, expected in (("grade", 1.0), ("zero", 0.0)):
        env = AgentEnvsFactory(make_kwargs=make_kwargs, unfinished=unfinished)()
        first = env.reset(task_id=task_id, seed=SEED, prompt=[])
        assert first.startswith("Task:")
        for action in scripted_actions(env._episode.env)[:-1]:  # the fix, without `done`
            assert EPISODE_OVER not in env.act(action_to_text(action))
        assert env.get_reward() == expected and env._episode is None
        assert env.act("ls") == "No episode is running."


@pytest.mark.web
def test_screenshots_become_image_parts_for_a_vision_model():
    """``images="auto"``: the PIL image parts TRL hands a VLM's processor, in reset's text and in tool results."""
    task_id, make_kwargs, _ = WEB
    env = AgentEnvsFactory(make_kwargs=make_kwargs, images="auto")()
    text, image = env.reset(task_id=task_id, seed=SEED)
    screen = env._episode.last_obs["screenshot"]
    assert text["type"] == "text" and text["text"].startswith("Task:")
    assert image["type"] == "image" and np.array_equal(np.asarray(image["image"]), screen)
    text, image = env.act("done")
    assert text["text"].endswith(EPISODE_OVER) and image["type"] == "image"
    assert env.get_reward() == 0.0 and env._episode is None


def test_a_row_without_a_task_says_how_to_name_one():
    with pytest.raises(ValueError, match="task_id"):
        AgentEnvsFactory()().reset(seed=0, prompt=[])
